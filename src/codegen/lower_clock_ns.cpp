// nsecs(clock), pid(namespace), tid(namespace): the bare word checked by
// sema/check_clock_ns.cpp picks the helper.

#include <cstddef>

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

namespace {
// The call's bare word, or `fallback` for a call without one.
std::string word_of(const Call &call, const char *fallback) {
  return call.args.empty() ? fallback : static_cast<const Builtin &>(*call.args[0]).name;
}
}  // namespace

// nsecs() alone is CLOCK_MONOTONIC, as the `nsecs` identifier always was in rbt.
llvm::Value *Lowering::lower_nsecs_n(const Call &call) {
  std::string clock = word_of(call, "monotonic");
  if (clock == "boot")
    return b_.call_helper(BPF_FUNC_ktime_get_boot_ns, b_.getInt64Ty(), {});
  if (clock == "tai")
    return b_.call_helper(BPF_FUNC_ktime_get_tai_ns, b_.getInt64Ty(), {});
  if (clock == "sw_tai")
    return sw_tai_ns();
  return b_.call_helper(BPF_FUNC_ktime_get_ns, b_.getInt64Ty(), {});
}

// For kernels without bpf_ktime_get_tai_ns (before 6.1): CLOCK_BOOTTIME plus the offset to
// CLOCK_TAI that user space measured when tracing started, as bpftrace does.
llvm::Value *Lowering::sw_tai_ns() {
  llvm::Value *boot = b_.call_helper(BPF_FUNC_ktime_get_boot_ns, b_.getInt64Ty(), {});
  return b_.CreateAdd(boot, config_field(offsetof(RuntimeConfig, tai_offset_ns)));
}

// {pid, tgid} of the current task as rbt's pid namespace numbers them (0 and 0 when the task
// is not in it: the helper clears the record on failure).
llvm::Value *Lowering::ns_pid_tgid() {
  llvm::Value *info = b_.stack_slot(8, "pidns_info");
  llvm::Value *dev = config_field(offsetof(RuntimeConfig, pidns_dev));
  llvm::Value *ino = config_field(offsetof(RuntimeConfig, pidns_ino));
  b_.call_helper(BPF_FUNC_get_ns_current_pid_tgid, b_.getInt64Ty(),
                 {dev, ino, info, b_.getInt32(8)});
  return info;
}

// The current task's tgid (process) or pid (thread) in rbt's pid namespace.
llvm::Value *Lowering::ns_pid(bool process) {
  llvm::Value *info = ns_pid_tgid();
  llvm::Value *field = process ? b_.byte_ptr(info, 4) : info;
  return b_.CreateZExt(b_.CreateLoad(b_.getInt32Ty(), field), b_.getInt64Ty());
}

// pid() alone is curr_ns, as in bpftrace, like the `pid` identifier; in the initial namespace
// (rbt's usual place) that is the same number as init's, read without the namespace helper.
llvm::Value *Lowering::lower_pid_n(const Call &call) {
  std::string word = word_of(call, "");
  if (word == "init" || (word.empty() && !pid_from_own_namespace_))
    return b_.current_pid();
  return ns_pid(true);
}

llvm::Value *Lowering::lower_tid_n(const Call &call) {
  std::string word = word_of(call, "");
  if (word == "init" || (word.empty() && !pid_from_own_namespace_))
    return b_.low32(b_.call_helper(BPF_FUNC_get_current_pid_tgid, b_.getInt64Ty(), {}));
  return ns_pid(false);
}

}  // namespace rbt::codegen
