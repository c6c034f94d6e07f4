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

// pid() alone is the init namespace's pid, the same as the `pid` identifier (bpftrace makes both
// curr_ns; the two agree whenever rbt runs in the init namespace, as it normally does).
llvm::Value *Lowering::lower_pid_n(const Call &call) {
  if (word_of(call, "init") == "init")
    return b_.current_pid();
  llvm::Value *tgid = b_.CreateLoad(b_.getInt32Ty(), b_.byte_ptr(ns_pid_tgid(), 4));
  return b_.CreateZExt(tgid, b_.getInt64Ty());
}

llvm::Value *Lowering::lower_tid_n(const Call &call) {
  if (word_of(call, "init") == "init")
    return b_.low32(b_.call_helper(BPF_FUNC_get_current_pid_tgid, b_.getInt64Ty(), {}));
  llvm::Value *pid = b_.CreateLoad(b_.getInt32Ty(), ns_pid_tgid());
  return b_.CreateZExt(pid, b_.getInt64Ty());
}

}  // namespace rbt::codegen
