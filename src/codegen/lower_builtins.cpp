// Builtin identifiers and functions of builtins.def, one lower_<id> each.

#include <cassert>
#include <cerrno>
#include <cstddef>

#include "format_spec.h"
#include "perf_regs.h"
#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

llvm::Value *Lowering::lower_builtin(const Builtin &node) {
  switch (sema_.builtins.at(&node)) {
#define RBT_VAR(id, name)                                                                          \
  case sema::BuiltinId::id:                                                                        \
    return lower_##id(node);
#include "sema/builtins.def"
  default:
    assert(false && "not a builtin identifier");
    return nullptr;
  }
}

llvm::Value *Lowering::lower_call(const Call &call) {
  switch (sema_.builtins.at(&call)) {
#define RBT_FUNC(id, name, min_args, max_args)                                                     \
  case sema::BuiltinId::id:                                                                        \
    return lower_##id(call);
#include "sema/builtins.def"
  default:
    assert(false && "aggregations are lowered by their map assignment");
    return nullptr;
  }
}

llvm::Value *Lowering::lower_pid(const Builtin &) {
  return pid_from_own_namespace_ ? ns_pid(true) : b_.current_pid();
}

llvm::Value *Lowering::lower_tid(const Builtin &) {
  if (pid_from_own_namespace_)
    return ns_pid(false);
  return b_.low32(b_.call_helper(BPF_FUNC_get_current_pid_tgid, b_.getInt64Ty(), {}));
}

llvm::Value *Lowering::lower_uid(const Builtin &) {
  return b_.low32(b_.call_helper(BPF_FUNC_get_current_uid_gid, b_.getInt64Ty(), {}));
}

llvm::Value *Lowering::lower_gid(const Builtin &) {
  return b_.CreateLShr(b_.call_helper(BPF_FUNC_get_current_uid_gid, b_.getInt64Ty(), {}), 32);
}

llvm::Value *Lowering::lower_comm(const Builtin &) { return current_comm(); }

llvm::Value *Lowering::current_comm() {
  llvm::Value *slot = value_slot(16, "comm");
  b_.call_helper(BPF_FUNC_get_current_comm, b_.getInt64Ty(), {slot, b_.getInt64(16)});
  return slot;
}

// The address of the last field of `node`'s task path (sema's task_paths): every step
// before it is a pointer read from the current task.
llvm::Value *Lowering::task_path_address(const Builtin &node) {
  llvm::Value *at = b_.call_helper(BPF_FUNC_get_current_task, b_.getInt64Ty(), {});
  const auto &path = sema_.task_paths.at(&node);
  for (size_t i = 0; i + 1 < path.size(); i++) {
    llvm::Value *slot = value_slot(8, path[i]->name);
    b_.probe_read(slot, 8, b_.CreateAdd(at, b_.getInt64(path[i]->offset)), false);
    at = b_.load_int(slot, 8, false);
  }
  return b_.CreateAdd(at, b_.getInt64(path.back()->offset));
}

// pcomm (the parent's comm), leader_comm (the thread group leader's: the process's name,
// where comm is the thread's): a comm read through a pointer of the current task. A failed
// read leaves it empty.
llvm::Value *Lowering::lower_pcomm(const Builtin &node) {
  llvm::Value *slot = value_slot(16, "pcomm");
  b_.store_bytes(slot, std::string(16, '\0'));
  b_.probe_read_str(slot, 16, task_path_address(node), false);
  return slot;
}

llvm::Value *Lowering::lower_leader_comm(const Builtin &node) { return lower_pcomm(node); }

// username: the uid, named by user space when printed.
llvm::Value *Lowering::lower_username(const Builtin &node) {
  llvm::Value *slot = value_slot(8, "username");
  b_.store_int(slot, lower_uid(node), 8);
  return slot;
}

// comm straight into a string slot of 16 bytes (a map key, a value): no copy. The helper pads
// with NULs to the size it is given, so the slot needs no zeroing first either.
bool Lowering::writes_whole_slot(const Type &slot_type, const Expr &expr) const {
  auto it = sema_.builtins.find(&expr);
  return slot_type.is_string() && slot_type.size == 16 && it != sema_.builtins.end() &&
         it->second == sema::BuiltinId::comm;
}

void Lowering::lower_into_slot(llvm::Value *dst, const Expr &) {
  b_.call_helper(BPF_FUNC_get_current_comm, b_.getInt64Ty(), {dst, b_.getInt64(16)});
}

// config: the record of sema::config_record_type, filled with the configuration's constants.
llvm::Value *Lowering::lower_config_record(const Builtin &node) {
  const Type &t = type_of(&node);
  const sema::ScriptConfig &c = sema_.config;
  llvm::Value *slot = value_slot(t.size, "config");
  b_.zero_bytes(slot, t.size);
  uint64_t ints[] = {c.max_strlen, c.max_map_keys, c.print_maps_on_exit};
  for (size_t i = 0; i < 3; i++)
    b_.store_int(b_.byte_ptr(slot, t.offsets[i]), b_.getInt64(ints[i]), t.elems[i].size);
  b_.store_bytes(b_.byte_ptr(slot, t.offsets[3]), sema::stack_mode_name(c.stack_mode));
  return slot;
}

llvm::Value *Lowering::lower_nsecs(const Builtin &) {
  return b_.call_helper(BPF_FUNC_ktime_get_ns, b_.getInt64Ty(), {});
}

llvm::Value *Lowering::lower_cpu(const Builtin &) {
  return b_.CreateZExt(b_.call_helper(BPF_FUNC_get_smp_processor_id, b_.getInt32Ty(), {}),
                       b_.getInt64Ty());
}

llvm::Value *Lowering::lower_jiffies(const Builtin &) {
  return b_.call_helper(BPF_FUNC_jiffies64, b_.getInt64Ty(), {});
}

llvm::Value *Lowering::lower_numaid(const Builtin &) {
  return b_.CreateZExt(b_.call_helper(BPF_FUNC_get_numa_node_id, b_.getInt32Ty(), {}),
                       b_.getInt64Ty());
}

// getopt("name", ...): a constant, like $1; sema bound its value from the command line.
llvm::Value *Lowering::lower_getopt(const Call &call) {
  const std::string &name = static_cast<const StrLit &>(*call.args[0]).value;
  const sema::NamedParam &p = sema_.named_params.at(name);
  if (p.type.is_scalar())  // a decimal number, "-10" or up to "18446744073709551615"
    return b_.getInt64(p.value[0] == '-' ? static_cast<uint64_t>(std::stoll(p.value))
                                         : std::stoull(p.value));
  llvm::Value *slot = value_slot(type_of(&call).size, "getopt");
  b_.store_bytes(slot, p.value);
  return slot;
}

// The privilege level in the context's saved code segment selector: 3 is user space
// (x86-64). Only for probes whose context is pt_regs (sema's has_registers).
llvm::Value *Lowering::in_user_mode() {
  llvm::Value *cs = b_.CreateLoad(b_.getInt64Ty(), b_.byte_ptr(ctx(), pt_regs_offset("cs")));
  return b_.CreateICmpEQ(b_.CreateAnd(cs, b_.getInt64(3)), b_.getInt64(3));
}

llvm::Value *Lowering::lower_usermode(const Builtin &) {
  if (probe_ && (probe_->kind == ProbeKind::Begin || probe_->kind == ProbeKind::End))
    return b_.getInt64(1);  // run from rbt's own system call
  return b_.CreateZExt(in_user_mode(), b_.getInt64Ty());
}

llvm::Value *Lowering::lower_rand(const Builtin &) {
  return b_.CreateZExt(b_.call_helper(BPF_FUNC_get_prandom_u32, b_.getInt32Ty(), {}),
                       b_.getInt64Ty());
}

llvm::Value *Lowering::lower_cgroup(const Builtin &) {
  return b_.call_helper(BPF_FUNC_get_current_cgroup_id, b_.getInt64Ty(), {});
}

llvm::Value *Lowering::lower_ctx(const Builtin &) {
  return b_.CreatePtrToInt(ctx(), b_.getInt64Ty());
}

llvm::Value *Lowering::lower_curtask(const Builtin &) {
  return b_.call_helper(BPF_FUNC_get_current_task, b_.getInt64Ty(), {});
}

llvm::Value *Lowering::lower_ppid(const Builtin &node) {
  llvm::Value *slot = value_slot(4, "ppid");
  b_.probe_read(slot, 4, task_path_address(node), false);
  return b_.load_int(slot, 4, false);
}

llvm::Value *Lowering::lower_probe(const Builtin &node) {
  if (group_)
    return per_attach_string(type_of(&node).size, "probe",
                             [](const ProbeDesc &d) { return d.name; });
  llvm::Value *slot = value_slot(type_of(&node).size, "probe");
  b_.store_bytes(slot, probe_->name);
  return slot;
}

llvm::Value *Lowering::lower_probetype(const Builtin &node) {
  llvm::Value *slot = value_slot(type_of(&node).size, "probetype");
  std::string name = probe_type_name(probe_->kind);
  b_.store_bytes(slot, std::string_view(name.c_str(), name.size() + 1));  // with its NUL
  return slot;
}

namespace {
// x86-64 struct pt_regs: where the calling convention's argument and return registers live.
constexpr unsigned kRegsArgOffsets[] = {112 /*di*/, 104 /*si*/, 96 /*dx*/,
                                        88 /*cx*/,  72 /*r8*/,  64 /*r9*/};
constexpr unsigned kRegsRetOffset = 80;  // ax
}  // namespace

llvm::Value *Lowering::lower_retval(const Builtin &) {
  return b_.CreateLoad(b_.getInt64Ty(), b_.byte_ptr(ctx(), kRegsRetOffset));
}

llvm::Value *Lowering::lower_arg(const Builtin &node) {
  unsigned index = sema::builtin_arg_index(node.name);
  if (probe_->kind == ProbeKind::RawTracepoint)  // ctx is `u64 args[]`
    return b_.CreateLoad(b_.getInt64Ty(), b_.byte_ptr(ctx(), 8 * index));
  if (probe_->kind == ProbeKind::Usdt) {
    // Where a USDT argument lives is per call site; libbpf's decoder (stdlib/bpf/usdt.bpf.c)
    // knows.
    libraries_.insert("usdt");
    llvm::FunctionCallee fn = module_.getOrInsertFunction(
        "rbt_usdt_arg", b_.getInt64Ty(), b_.getPtrTy(), b_.getInt64Ty());
    return b_.CreateCall(fn, {ctx(), b_.getInt64(index)});
  }
  return b_.CreateLoad(b_.getInt64Ty(), b_.byte_ptr(ctx(), kRegsArgOffsets[index]));
}

void Lowering::emit_event(uint64_t id, const std::vector<const Expr *> &args, const Type &layout,
                          bool wakeup) {
  llvm::Value *event = value_slot(8 + layout.size, "event");
  b_.CreateStore(b_.getInt64(id), event);
  for (size_t i = 0; i < args.size(); i++) {
    // Only an rstack that is the value itself: one in a map key inside it (print(@m[rstack]))
    // must stay a key without a count.
    auto it = sema_.builtins.find(args[i]);
    in_event_ = it != sema_.builtins.end() && (it->second == sema::BuiltinId::rstack ||
                                               it->second == sema::BuiltinId::rstack_n);
    store_value(b_.byte_ptr(event, 8 + layout.offsets[i]), layout.elems[i], *args[i]);
    in_event_ = false;
  }
  send_event(event, 8 + layout.size, wakeup);
}

void Lowering::send_event(llvm::Value *event, uint64_t size, bool wakeup) {
  if (probe_->kind == ProbeKind::Iter)
    return send_iter_event(event, size);
  llvm::Value *rc =
      b_.ringbuf_output(resources_.ringbuf(), event, size, wakeup ? 0 : BPF_RB_NO_WAKEUP);
  // A full ring buffer drops the event and returns -EAGAIN (its only error with flags 0); the
  // counter adds that result as it is, so a loss costs no instruction to make a 1 and a
  // delivered event costs one branch (Manifest::lost_events_name).
  auto *lost = new_block("event_lost");
  auto *done = new_block("event_sent");
  b_.CreateCondBr(b_.CreateICmpEQ(rc, b_.getInt64(0)), done, lost);
  b_.SetInsertPoint(lost);
  b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, resources_.lost_events(), rc,
                     llvm::Align(8), llvm::AtomicOrdering::Monotonic);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

// An iterator's events go into the iterator's own output (its seq_file, which rbt reads to run
// the iterator), each after its length in 4 bytes: in the order the objects are visited, and
// with nothing lost, since the kernel gives a full output buffer back to the reader and runs
// the probe again for that object. ctx->meta->seq is where the output goes.
void Lowering::send_iter_event(llvm::Value *event, uint64_t size) {
  llvm::Value *meta = b_.CreateLoad(b_.getPtrTy(), ctx());
  llvm::Value *seq = b_.CreateLoad(b_.getPtrTy(), meta);
  // Two writes: when the second finds the buffer full, the kernel drops what the object wrote
  // and runs it again with room, so a length never comes without its event.
  llvm::Value *length = b_.stack_slot(8, "iter_event_length");
  b_.CreateStore(b_.getInt64(size), length);
  b_.call_helper(BPF_FUNC_seq_write, b_.getInt64Ty(), {seq, length, b_.getInt32(8)});
  b_.call_helper(BPF_FUNC_seq_write, b_.getInt64Ty(),
                 {seq, event, b_.getInt32(static_cast<uint32_t>(size))});
}

llvm::Value *Lowering::lower_printf(const Call &call) {
  std::vector<const Expr *> args(call.args.begin() + 1, call.args.end());
  std::vector<Type> types;
  for (const Expr *a : args)
    types.push_back(sema::storage_type(type_of(a)));
  Type layout = Type::tuple(types);
  ActionDesc action;
  action.kind = ActionKind::Printf;
  action.text = static_cast<const StrLit *>(call.args[0])->value;
  action.args = layout;
  uint64_t id = resources_.add_action(std::move(action));
  emit_event(id, args, layout);
  return nullptr;
}

llvm::Value *Lowering::lower_del(const Call &call) {
  auto &map = static_cast<const MapRef &>(*call.args[0]);
  const MapDesc &desc = resources_.map_desc(map.name);
  llvm::Value *key;
  if (call.args.size() == 2) {
    key = value_slot(desc.user_key_size(), "key");
    store_value(key, desc.key, *call.args[1]);
  } else {
    key = map_key(map, desc);
  }
  if (desc.is_array()) {
    // An array's slots cannot be deleted; zero is how it says "no value" (MapDesc::is_array).
    llvm::Value *found = b_.map_lookup(resources_.map_global(map.name), key);
    auto *hit = new_block("del_hit");
    auto *done = new_block("del_done");
    b_.CreateCondBr(b_.CreateIsNull(found), done, hit);
    b_.SetInsertPoint(hit);
    b_.zero_bytes(found, desc.bpf_value_size());
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    return b_.CreateZExt(b_.CreateIsNotNull(found), b_.getInt64Ty());
  }
  llvm::Value *err = b_.map_delete(resources_.map_global(map.name), key);
  return b_.CreateZExt(b_.CreateICmpEQ(err, b_.getInt64(0)), b_.getInt64Ty());
}

// A stack value is {stack id, pid}: frames stay in the stack map, and the pid says whose
// memory map symbolizes a user stack.
llvm::Value *Lowering::lower_stack(const Type &t) {
  bool user = t.stack_kind == StackKind::User;
  llvm::Value *slot = value_slot(16, user ? "ustack" : "kstack");
  auto get_stackid = [&] {
    return b_.call_helper(BPF_FUNC_get_stackid, b_.getInt64Ty(),
                          {ctx(), resources_.stack_map(user, t.stack_depth),
                           b_.getInt64(user ? BPF_F_USER_STACK : 0)});
  };
  if (!user && samples_interrupted_context()) {
    // A sample that interrupted user space has no kernel stack: answer what the helper would
    // (-EFAULT, an empty stack) without its call, a few hundred ns on most profile samples.
    auto *in_kernel = new_block("kstack_in_kernel");
    auto *done = new_block("kstack_done");
    b_.CreateStore(b_.getInt64(static_cast<uint64_t>(-EFAULT)), slot);
    b_.CreateCondBr(in_user_mode(), done, in_kernel);
    b_.SetInsertPoint(in_kernel);
    b_.CreateStore(get_stackid(), slot);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    return slot;
  }
  b_.CreateStore(get_stackid(), slot);
  if (user) {
    llvm::Value *pid = b_.current_pid();
    b_.CreateStore(pid, b_.byte_ptr(slot, 8));
    announce_process(pid);
  }
  return slot;
}

// Perf-event probes (profile, software, hardware): the context is the interrupted registers.
bool Lowering::samples_interrupted_context() const {
  return probe_ && (probe_->kind == ProbeKind::Profile || probe_->kind == ProbeKind::Software ||
                    probe_->kind == ProbeKind::Hardware);
}

// The first ustack of a process tells user space to capture its memory map while it lives,
// so its stacks still symbolize after it exits. The pid this CPU announced last needs nothing
// more (a profile's samples come from one process in a row): seen_pids is a hash whose
// buckets the sampled program pushes out of the caches between samples, and nothing deletes
// from it. Then a lookup: it takes no lock, where an update of a key already there takes the
// bucket's lock on every event only to fail.
void Lowering::announce_process(llvm::Value *pid) {
  llvm::Value *zero = b_.stack_slot(4, "last_announced_key");
  b_.CreateStore(b_.getInt32(0), zero);
  llvm::Value *last = b_.map_lookup(resources_.last_announced_pid(), zero);
  auto *check = new_block("check_seen_pids");
  auto *done = new_block("known_process");
  auto *have_last = new_block("have_last_announced");
  b_.CreateCondBr(b_.CreateIsNull(last), check, have_last);
  b_.SetInsertPoint(have_last);
  b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateLoad(b_.getInt64Ty(), last), pid), done, check);
  b_.SetInsertPoint(check);
  auto *remember = new_block("remember_announced");
  auto *after = new_block("announced");
  llvm::Value *key = b_.stack_slot(8, "pid_key");
  b_.CreateStore(pid, key);
  auto *unseen = new_block("unseen_process");
  b_.CreateCondBr(b_.CreateIsNull(b_.map_lookup(resources_.seen_pids(), key)), unseen, after);
  b_.SetInsertPoint(unseen);
  llvm::Value *one = b_.stack_slot(8, "one");
  b_.CreateStore(b_.getInt8(1), one);
  llvm::Value *inserted = b_.map_update(resources_.seen_pids(), key, one, BPF_NOEXIST);
  auto *tell = new_block("new_process");
  b_.CreateCondBr(b_.CreateICmpEQ(inserted, b_.getInt64(0)), tell, done);
  b_.SetInsertPoint(tell);
  llvm::Value *event = b_.stack_slot(16, "new_process_event");
  b_.CreateStore(b_.getInt64(static_cast<uint64_t>(EventId::NewProcess)), event);
  b_.CreateStore(pid, b_.byte_ptr(event, 8));
  send_event(event, 16);
  b_.CreateBr(after);
  b_.SetInsertPoint(after);
  b_.CreateCondBr(b_.CreateIsNull(last), done, remember);
  b_.SetInsertPoint(remember);
  b_.CreateStore(pid, last);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

llvm::Value *Lowering::lower_kstack(const Builtin &node) { return lower_stack(type_of(&node)); }
llvm::Value *Lowering::lower_ustack(const Builtin &node) { return lower_stack(type_of(&node)); }
llvm::Value *Lowering::lower_kstack_n(const Call &call) { return lower_stack(type_of(&call)); }
llvm::Value *Lowering::lower_ustack_n(const Call &call) { return lower_stack(type_of(&call)); }

// A field of the RuntimeConfig map (0 if the map could not be read).
llvm::Value *Lowering::config_field(size_t offset) {
  llvm::Value *key = b_.stack_slot(4, "config_key");
  llvm::Value *found = b_.map_lookup(resources_.config(), key);
  return load_or_zero(
      found,
      [&](llvm::Value *config) {
        return b_.CreateLoad(b_.getInt64Ty(), b_.byte_ptr(config, offset));
      },
      "config");
}

llvm::Value *Lowering::lower_elapsed(const Builtin &) {
  return b_.CreateSub(b_.call_helper(BPF_FUNC_ktime_get_ns, b_.getInt64Ty(), {}),
                      config_field(offsetof(RuntimeConfig, start_ns)));
}
llvm::Value *Lowering::lower_ncpus(const Builtin &) {
  return config_field(offsetof(RuntimeConfig, ncpus));
}
llvm::Value *Lowering::lower_cpid(const Builtin &) {
  return config_field(offsetof(RuntimeConfig, cpid));
}

llvm::Value *Lowering::lower_func(const Builtin &node) {
  if (type_of(&node).kind == TypeKind::Symbol) {  // a kprobe's: the traced function's address
    llvm::Value *slot = value_slot(16, "func");
    b_.CreateStore(b_.call_helper(BPF_FUNC_get_func_ip, b_.getInt64Ty(), {ctx()}), slot);
    return slot;
  }
  if (group_)
    return per_attach_string(type_of(&node).size, "func", [](const ProbeDesc &d) {
      return d.func.substr(d.func.find(':') + 1);
    });
  llvm::Value *slot = value_slot(type_of(&node).size, "func");
  b_.store_bytes(slot, probe_->func.substr(probe_->func.find(':') + 1));
  return slot;
}

llvm::Value *Lowering::call_stdlib(const char *library, const char *name,
                                   std::vector<llvm::Value *> args) {
  libraries_.insert(library);
  std::vector<llvm::Type *> params;
  for (auto *a : args)
    params.push_back(a->getType());
  llvm::FunctionCallee fn = module_.getOrInsertFunction(
      name, llvm::FunctionType::get(b_.getInt64Ty(), params, false));
  return b_.CreateCall(fn, args);
}

llvm::Value *Lowering::lower_has_key(const Call &call) {
  auto &map = static_cast<const MapRef &>(*call.args[0]);
  const MapDesc &desc = resources_.map_desc(map.name);
  llvm::Value *key = value_slot(desc.user_key_size(), "key");
  if (call.args.size() == 2) {
    store_value(key, desc.key, *call.args[1]);
  } else {
    for (size_t i = 1; i < call.args.size(); i++)
      store_value(b_.byte_ptr(key, desc.key.offsets[i - 1]), desc.key.elems[i - 1], *call.args[i]);
  }
  llvm::Value *found = b_.map_lookup(resources_.map_global(map.name), key);
  return b_.CreateZExt(b_.CreateIsNotNull(found), b_.getInt64Ty());
}

llvm::Value *Lowering::lower_len(const Call &call) {
  if (const Type &t = type_of(call.args[0]); t.is_stack()) {
    // The stack is a stack map id: its frames are counted from bpf_get_stack's copy of the
    // same stack (taken again, in the same probe: the same frames).
    uint64_t bytes = uint64_t(t.stack_depth) * 8;
    llvm::Value *frames = value_slot(bytes, "stack_frames");
    llvm::Value *n = b_.call_helper(
        BPF_FUNC_get_stack, b_.getInt64Ty(),
        {ctx(), frames, b_.getInt64(bytes),
         b_.getInt64(t.stack_kind == StackKind::User ? BPF_F_USER_STACK : 0)});
    llvm::Value *none = b_.CreateICmpSLT(n, b_.getInt64(0));  // an error: no frames
    return b_.CreateSelect(none, b_.getInt64(0), b_.CreateLShr(n, b_.getInt64(3)));
  }
  auto &map = static_cast<const MapRef &>(*call.args[0]);
  return call_stdlib("strings", "rbt_map_len", {resources_.map_global(map.name)});
}

llvm::Value *Lowering::lower_strlen(const Call &call) {
  llvm::Value *s = lower_expr(*call.args[0]);
  return call_stdlib("strings", "rbt_strlen", {s, b_.getInt64(type_of(call.args[0]).size)});
}

llvm::Value *Lowering::lower_syscall_name(const Call &call) {
  llvm::Value *slot = value_slot(type_of(&call).size, "syscall_name");
  call_stdlib("strings", "rbt_syscall_name", {lower_expr(*call.args[0]), slot});
  return slot;
}

llvm::Value *Lowering::lower_signal_name(const Call &call) {
  llvm::Value *slot = value_slot(type_of(&call).size, "signal_name");
  call_stdlib("strings", "rbt_signal_name", {lower_expr(*call.args[0]), slot});
  return slot;
}

llvm::Value *Lowering::lower_strncmp(const Call &call) {
  llvm::Value *a = lower_expr(*call.args[0]), *b = lower_expr(*call.args[1]);
  return call_stdlib("strings", "rbt_strncmp",
                     {a, b_.getInt64(type_of(call.args[0]).size), b,
                      b_.getInt64(type_of(call.args[1]).size), lower_expr(*call.args[2])});
}

llvm::Value *Lowering::lower_strcontains(const Call &call) {
  if (const Type &t = type_of(call.args[0]); t.is_stack() && t.stack_kind == StackKind::Ruby)
    return lower_rstack_contains(call);
  llvm::Value *h = lower_expr(*call.args[0]), *n = lower_expr(*call.args[1]);
  return call_stdlib("strings", "rbt_strcontains",
                     {h, b_.getInt64(type_of(call.args[0]).size), n,
                      b_.getInt64(type_of(call.args[1]).size)});
}

llvm::Value *Lowering::lower_bswap(const Call &call) {
  const Type &t = type_of(&call);
  llvm::Value *v = lower_expr(*call.args[0]);
  if (t.size == 1)
    return v;
  llvm::Type *ty = b_.getIntNTy(t.size * 8);
  llvm::Value *swapped = b_.CreateUnaryIntrinsic(llvm::Intrinsic::bswap, b_.CreateTrunc(v, ty));
  return b_.CreateZExt(swapped, b_.getInt64Ty());
}

llvm::Value *Lowering::lower_ksym(const Call &call) {
  llvm::Value *slot = value_slot(16, "ksym");
  b_.CreateStore(lower_expr(*call.args[0]), slot);
  return slot;
}

llvm::Value *Lowering::lower_usym(const Call &call) {
  llvm::Value *slot = value_slot(16, "usym");
  b_.CreateStore(lower_expr(*call.args[0]), slot);
  llvm::Value *pid = b_.current_pid();
  b_.CreateStore(pid, b_.byte_ptr(slot, 8));
  announce_process(pid);
  return slot;
}

llvm::Value *Lowering::lower_reg(const Call &call) {
  int offset = pt_regs_offset(static_cast<const StrLit &>(*call.args[0]).value);
  // perf event contexts start with the same pt_regs.
  return b_.CreateLoad(b_.getInt64Ty(), b_.byte_ptr(ctx(), static_cast<uint64_t>(offset)));
}

llvm::Value *Lowering::lower_args(const Builtin &) { return ctx(); }

llvm::Value *Lowering::lower_kaddr(const Call &call) {
  return b_.getInt64(sema_.constants.at(&call));
}

// The variable is an extern in .ksyms that libbpf points at the kernel's (by BTF): the
// helpers want that typed per-CPU pointer, not an address.
llvm::Value *Lowering::lower_percpu_kaddr(const Call &call) {
  const FieldLayout &var = sema_.percpu_vars.at(&call);
  llvm::GlobalVariable *sym = debug_info_.declare_ksym(var);
  llvm::Value *ptr =
      call.args.size() == 2
          ? b_.call_helper(BPF_FUNC_per_cpu_ptr, b_.getPtrTy(), {sym, lower_expr(*call.args[1])})
          : b_.call_helper(BPF_FUNC_this_cpu_ptr, b_.getPtrTy(), {sym});
  return b_.CreatePtrToInt(ptr, b_.getInt64Ty());
}

llvm::Value *Lowering::lower_socket_cookie(const Call &call) {
  tracing_program_ = true;  // the helper exists for tp_btf programs, not raw_tp ones
  return b_.call_helper(BPF_FUNC_get_socket_cookie, b_.getInt64Ty(), {lower_expr(*call.args[0])});
}

// skboutput(): bpf_skb_output sends the meta (SkbOutputMeta) and the packet's first
// offset + len bytes to the perf event array; user space writes the pcap file. The result is
// the helper's (0, or a negative errno).
llvm::Value *Lowering::lower_skboutput(const Call &call) {
  tracing_program_ = true;  // the helper exists for tp_btf programs, not raw_tp ones
  ActionDesc action;
  action.kind = ActionKind::SkbOutput;
  action.text = static_cast<const StrLit &>(*call.args[0]).value;
  action.args = Type::tuple({});
  uint64_t id = resources_.add_action(std::move(action));
  llvm::Value *skb = lower_expr(*call.args[1]);
  llvm::Value *len = lower_expr(*call.args[2]), *offset = lower_expr(*call.args[3]);
  llvm::Value *meta = b_.stack_slot(sizeof(SkbOutputMeta), "skb_meta");
  b_.CreateStore(b_.getInt64(id), meta);
  b_.CreateStore(b_.call_helper(BPF_FUNC_ktime_get_ns, b_.getInt64Ty(), {}), b_.byte_ptr(meta, 8));
  b_.CreateStore(len, b_.byte_ptr(meta, 16));
  b_.CreateStore(offset, b_.byte_ptr(meta, 24));
  // The helper's flags: the CPU's ring, and in the upper 32 bits how many packet bytes.
  llvm::Value *bytes = b_.CreateAnd(b_.CreateAdd(len, offset), b_.getInt64(0xffffffff));
  llvm::Value *flags = b_.CreateOr(b_.CreateShl(bytes, b_.getInt64(32)), b_.getInt64(BPF_F_CURRENT_CPU));
  return b_.call_helper(BPF_FUNC_skb_output, b_.getInt64Ty(),
                        {b_.CreateIntToPtr(skb, b_.getPtrTy()), resources_.skb_output(), flags, meta,
                         b_.getInt64(sizeof(SkbOutputMeta))});
}

// comm(pid): the library's kfunc calls fill the slot (empty when no task has that pid).
llvm::Value *Lowering::lower_comm_of_pid(const Call &call) {
  if (call.args.empty())
    return current_comm();
  tracing_program_ = true;  // the kfunc exists for tp_btf programs, not raw_tp ones
  llvm::Value *slot = value_slot(16, "comm");
  call_stdlib("tasks", "rbt_comm_of_pid",
              {lower_expr(*call.args[0]), slot, b_.getInt64(sema_.constants.at(&call))});
  return slot;
}

llvm::Value *Lowering::lower_uaddr(const Call &call) {
  llvm::Value *linked = b_.getInt64(sema_.constants.at(&call));
  auto anchor = sema_.uaddr_anchors.find(&call);
  if (anchor == sema_.uaddr_anchors.end())
    return linked;
  // A uprobe's handler sees the instruction pointer at the probed address (the kernel moves
  // it back to the breakpoint), so ip minus that address as linked is the load bias.
  llvm::Value *ip = b_.CreateLoad(b_.getInt64Ty(),
                                  b_.byte_ptr(ctx(), static_cast<uint64_t>(pt_regs_offset("ip"))));
  return b_.CreateAdd(linked, b_.CreateSub(ip, b_.getInt64(anchor->second)));
}

llvm::Value *Lowering::lower_str(const Call &call) {
  const Type &t = type_of(&call);
  llvm::Value *slot = value_slot(t.size, "str");
  if (auto text = sema_.constant_strings.find(&call); text != sema_.constant_strings.end()) {
    b_.store_bytes(slot, text->second);  // str($1): the argument's text
    return slot;
  }
  const Type &arg = type_of(call.args[0]);
  llvm::Value *v = lower_expr(*call.args[0]);
  if (arg.is_string()) {
    b_.copy_bytes(slot, v, t.size - 1);  // the slot's last byte stays the terminator
  } else {
    b_.probe_read_str(slot, t.size, v, sema_.user_space.at(&call));
  }
  if (call.args.size() == 2 && !isa<IntLit>(call.args[1])) {
    // A length known only now: the terminator goes at n - 1, within the string's room.
    llvm::Value *end = b_.CreateSub(lower_expr(*call.args[1]), b_.getInt64(1));
    llvm::Value *last = b_.getInt64(t.size - 1);
    end = b_.CreateSelect(b_.CreateICmpULT(end, last), end, last);
    b_.CreateStore(b_.getInt8(0), b_.CreateGEP(b_.getInt8Ty(), slot, end));
  }
  return slot;
}

llvm::Value *Lowering::lower_exit(const Call &call) {
  llvm::Value *event = b_.stack_slot(16, "exit_event");
  llvm::Value *code = call.args.empty() ? b_.getInt64(0) : lower_expr(*call.args[0]);
  b_.CreateStore(b_.getInt64(static_cast<uint64_t>(EventId::Exit)), event);
  b_.CreateStore(code, b_.byte_ptr(event, 8));
  // The flag first: user space ends the run even if the event finds the ring buffer full
  // (exit_flag.h).
  llvm::Value *flag = b_.CreateOr(b_.CreateAnd(code, b_.getInt64(0xffffffff)),
                                  b_.getInt64(uint64_t{1} << 32));
  b_.CreateAlignedStore(flag, resources_.exit_flag(), llvm::Align(8), /*isVolatile=*/true);
  send_event(event, 16);
  // Like bpftrace, nothing after exit() in this action runs.
  lower_return();
  return nullptr;
}

}  // namespace rbt::codegen
