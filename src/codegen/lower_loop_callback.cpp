// The loops whose body becomes a static BPF function called by a helper:
//   `for ($kv : @map) { body }`  → bpf_for_each_map_elem(map, callback, context, 0), which calls
//                                  callback(map, key, value, context) once per entry;
//   `for ($i : lo..hi) { body }` → bpf_loop(hi - lo, callback, context, 0), which calls
//                                  callback(index, context); $i is lo + index.
// bpftrace lowers range loops the same way: the verifier checks the body once, whatever the
// bounds, where an inline loop with a bound from a map (`0..@n`) or a large constant range is
// walked iteration by iteration until the verifier gives up.
//
// A callback cannot see its caller's registers, so what the body needs from the probe travels
// in a context struct on the probe's stack: the probe's ctx pointer (for args, reg(), stacks),
// then a copy of every small scratch variable live at the loop that is on the stack, and the
// address of every other one (long strings live in scratch pages; copying them would not fit
// the stack, and the helper wants its context on the stack), then the range's start. The body reads and writes the
// copies in place (the callback may access its caller's stack through the context pointer) and
// the probe copies them back after the loop, so `$sum += $kv.1` works as in bpftrace.

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

void Lowering::lower_loop_callback(const For &stmt, bool is_range) {
  const sema::VarInfo *loop_var = sema_.vars.at(&stmt);
  const Type &kv = loop_var->type;

  // The context: [probe ctx][each outer variable, 8-aligned][range start].
  constexpr uint64_t kCopiedMax = 64;  // larger variables are shared by address
  struct Shared {
    const sema::VarInfo *var;
    llvm::Value *slot;
    uint64_t offset, size;
    bool by_address;
  };
  std::vector<Shared> shared;
  // The context lives on the probe's stack beside the probe's own values: small variables on
  // the stack are copied into it only while it all fits, leaving room for LLVM's temporaries.
  // The others are shared by address: a variable in scratch memory stays put while the loop
  // runs, and the callback may reach its caller's stack through a pointer as well.
  uint64_t size = 8 + 8 * vars_.size() + 8;  // ctx, a pointer per variable, the range's start
  for (auto &[var, slot] : vars_) {
    uint64_t copied = (var->type.size + 7) / 8 * 8;
    bool fits = b_.stack_bytes() + size + copied - 8 <= kStackBudget;
    bool by_address = var->type.size > kCopiedMax || !llvm::isa<llvm::AllocaInst>(slot) || !fits;
    if (!by_address)
      size += copied - 8;
    shared.push_back({var, slot, 0, var->type.size, by_address});
  }
  size = 8;
  for (auto &s : shared) {
    s.offset = size;
    size += s.by_address ? 8 : (s.size + 7) / 8 * 8;
  }
  const uint64_t lo_offset = size;
  size += 8;
  const uint64_t returned_offset = size;  // the address of the probe's "returned" flag
  size += 8;
  // The bounds are evaluated once, before the loop, in the probe (as bpftrace does).
  llvm::Value *lo = nullptr, *count = nullptr;
  if (is_range) {
    lo = lower_expr(*stmt.lo);
    llvm::Value *hi = lower_expr(*stmt.hi);
    // bpf_loop takes a u32 count: an empty or reversed range runs 0 times, and a range longer
    // than bpf_loop allows (1 << 23) is cut there rather than refused by the helper outright.
    llvm::Value *n = b_.CreateSub(hi, lo);
    n = b_.CreateSelect(b_.CreateICmpSLT(hi, lo), b_.getInt64(0), n);
    n = b_.CreateSelect(b_.CreateICmpUGT(n, b_.getInt64(1 << 23)), b_.getInt64(1 << 23), n);
    count = n;
  }
  llvm::Value *context = b_.stack_slot(size, "for_context");
  b_.CreateStore(ctx(), context);
  for (auto &s : shared) {
    if (s.by_address)
      b_.CreateStore(s.slot, b_.byte_ptr(context, s.offset));
    else
      b_.copy_bytes(b_.byte_ptr(context, s.offset), s.slot, s.size);
  }
  if (is_range)
    b_.CreateStore(lo, b_.byte_ptr(context, lo_offset));
  if (!returned_)
    returned_ = b_.stack_slot(8, "returned", false);  // in the probe; callbacks get its address
  b_.CreateStore(b_.getInt64(0), returned_);  // here, as the first loop may be in a branch
  b_.CreateStore(returned_, b_.byte_ptr(context, returned_offset));

  // The callback, lowered with its own per-function state.
  auto *ptr = b_.getPtrTy();
  auto *fty = is_range
                  ? llvm::FunctionType::get(b_.getInt64Ty(), {b_.getInt64Ty(), ptr}, false)
                  : llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr, ptr, ptr}, false);
  auto *callback = llvm::Function::Create(fty, llvm::Function::InternalLinkage,
                                          fn_->getName() + (is_range ? "_loop" : "_for"), module_);
  callback->addFnAttr(llvm::Attribute::NoUnwind);
  callback->addFnAttr(llvm::Attribute::NoInline);
  {
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    llvm::DebugLoc saved_loc = b_.getCurrentDebugLocation();
    auto saved_fn = fn_;
    auto saved_ctx = ctx_;
    auto saved_vars = vars_;
    auto saved_loops = loops_;
    auto saved_pages = pages_;
    auto saved_tail = setup_tail_;
    bool saved_in_callback = in_callback_;
    llvm::Value *saved_returned = returned_;
    llvm::Type *saved_ret = callback_ret_;
    uint64_t saved_stack = b_.stack_bytes();

    fn_ = callback;
    pages_.clear();
    b_.reset_stack_bytes();
    in_callback_ = true;
    callback_ret_ = fty->getReturnType();
    auto *sp = debug_info_.describe_function(*callback, stmt.range.line, is_range ? 2 : 4);
    b_.SetCurrentDebugLocation(
        llvm::DILocation::get(module_.getContext(), stmt.range.line, stmt.range.col, sp));
    auto *entry = new_block("entry");
    auto *start = new_block("start");
    b_.SetInsertPoint(entry);
    b_.CreateBr(start);
    setup_tail_ = entry;
    b_.SetInsertPoint(start);

    llvm::Value *cb_context = callback->getArg(is_range ? 1 : 3);
    ctx_ = b_.CreateLoad(ptr, cb_context, "probe_ctx");
    returned_ = b_.CreateLoad(ptr, b_.byte_ptr(cb_context, returned_offset), "returned");
    vars_.clear();
    for (auto &s : shared)
      vars_[s.var] = s.by_address ? b_.CreateLoad(ptr, b_.byte_ptr(cb_context, s.offset))
                                  : b_.byte_ptr(cb_context, s.offset);
    if (is_range) {
      // $i: the range's start plus the iteration's index.
      llvm::Value *slot = b_.stack_slot(8, loop_var->name);
      llvm::Value *start_value = b_.CreateLoad(b_.getInt64Ty(), b_.byte_ptr(cb_context, lo_offset));
      b_.CreateStore(b_.CreateAdd(start_value, callback->getArg(0)), slot);
      vars_[loop_var] = slot;
    } else {
      // $kv: the entry's key and value, copied into a tuple of the checker's layout.
      llvm::Value *kv_slot = value_slot(kv.size, loop_var->name);
      b_.copy_bytes(b_.byte_ptr(kv_slot, kv.offsets[0]), callback->getArg(1), kv.elems[0].size);
      auto &map = static_cast<const MapRef &>(*stmt.lo);
      const MapDesc &desc = resources_.map_desc(map.name);
      if (desc.value.is_aggregation())  // the value on this CPU is only a share: combine them
        b_.CreateStore(read_aggregation(desc, callback->getArg(1)),
                       b_.byte_ptr(kv_slot, kv.offsets[1]));
      else
        b_.copy_bytes(b_.byte_ptr(kv_slot, kv.offsets[1]), callback->getArg(2), kv.elems[1].size);
      vars_[loop_var] = kv_slot;
    }

    auto *next = new_block("for_next");
    auto *stop = new_block("for_stop");
    loops_ = {{next, stop}};
    lower_block(*stmt.body);
    b_.CreateBr(next);
    b_.SetInsertPoint(next);
    b_.CreateRet(llvm::ConstantInt::get(callback_ret_, 0));  // 0: on to the next iteration
    b_.SetInsertPoint(stop);
    b_.CreateRet(llvm::ConstantInt::get(callback_ret_, 1));  // 1: break
    // The callback's own scratch pages (a long string in the body): sized and zeroed on entry.
    finish_scratch_pages();

    fn_ = saved_fn;
    ctx_ = saved_ctx;
    vars_ = std::move(saved_vars);
    loops_ = std::move(saved_loops);
    pages_ = std::move(saved_pages);
    setup_tail_ = saved_tail;
    in_callback_ = saved_in_callback;
    returned_ = saved_returned;
    callback_ret_ = saved_ret;
    b_.set_stack_bytes(saved_stack);
    b_.SetCurrentDebugLocation(saved_loc);
  }

  if (is_range) {
    b_.call_helper(BPF_FUNC_loop, b_.getInt64Ty(), {count, callback, context, b_.getInt64(0)});
  } else {
    auto &map = static_cast<const MapRef &>(*stmt.lo);
    b_.call_helper(BPF_FUNC_for_each_map_elem, b_.getInt64Ty(),
                   {resources_.map_global(map.name), callback, context, b_.getInt64(0)});
  }
  for (auto &s : shared)
    if (!s.by_address)
      b_.copy_bytes(s.slot, b_.byte_ptr(context, s.offset), s.size);
  // The body ran `return` or `exit()`: this loop's function returns as well.
  auto *returned = new_block("loop_returned");
  auto *done = new_block("loop_done");
  b_.CreateCondBr(b_.CreateICmpNE(b_.CreateLoad(b_.getInt64Ty(), returned_), b_.getInt64(0)),
                  returned, done);
  b_.SetInsertPoint(returned);
  b_.CreateRet(in_callback_ ? llvm::ConstantInt::get(callback_ret_, 1) : b_.getInt32(0));
  b_.SetInsertPoint(done);
}

}  // namespace rbt::codegen
