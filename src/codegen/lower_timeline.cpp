// sample() and marker(): events for the recorder's timeline, sent through the ring buffer like
// every action (a full buffer counts them as lost), but without waking the reader: the session
// drains the buffer every few milliseconds when the script sends them (kTimelineDrainMs).
// sample() fills the current thread's facts itself, so a 99 Hz profile probe pays for the helpers and its stack walks only.

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

llvm::Value *Lowering::lower_sample(const Call &call) {
  // Payload: nsecs, pid, tid, cpu (u64 each), comm (16 bytes), then the stacks as given.
  std::vector<Type> types(4, Type::integer(64, false));
  types.push_back(Type::string(16));
  for (const Expr *a : call.args)
    types.push_back(sema::storage_type(type_of(a)));
  ActionDesc action;
  action.kind = ActionKind::Sample;
  action.args = Type::tuple(std::move(types));
  Type layout = action.args;
  uint64_t id = resources_.add_action(std::move(action));
  llvm::Value *event = value_slot(8 + layout.size, "sample");
  b_.CreateStore(b_.getInt64(id), event);
  auto at = [&](size_t i) { return b_.byte_ptr(event, 8 + layout.offsets[i]); };
  llvm::Value *pid_tgid = b_.call_helper(BPF_FUNC_get_current_pid_tgid, b_.getInt64Ty(), {});
  b_.store_int(at(0), b_.call_helper(BPF_FUNC_ktime_get_ns, b_.getInt64Ty(), {}), 8);
  b_.store_int(at(1), b_.CreateLShr(pid_tgid, 32), 8);
  b_.store_int(at(2), b_.low32(pid_tgid), 8);
  b_.store_int(at(3),
               b_.CreateZExt(b_.call_helper(BPF_FUNC_get_smp_processor_id, b_.getInt32Ty(), {}),
                             b_.getInt64Ty()),
               8);
  b_.call_helper(BPF_FUNC_get_current_comm, b_.getInt64Ty(), {at(4), b_.getInt64(16)});
  for (size_t i = 0; i < call.args.size(); i++)
    store_value(at(5 + i), layout.elems[5 + i], *call.args[i]);
  send_event(event, 8 + layout.size, /*wakeup=*/false);
  return nullptr;
}

llvm::Value *Lowering::lower_marker(const Call &call) {
  ActionDesc action;
  action.kind = ActionKind::Marker;
  action.text = static_cast<const StrLit *>(call.args[0])->value;
  emit_action(std::move(action), {call.args.begin() + 1, call.args.end()}, /*wakeup=*/false);
  return nullptr;
}

}  // namespace rbt::codegen
