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
// in a context struct on the probe's stack (the helpers want it there): the probe's ctx
// pointer (for args, reg(), stacks), the range's start, then the address of each variable of
// the enclosing functions the body uses, in the order it first uses them (var_slot imports
// each on that use, with a load from the context in the callback's entry block). The body
// reads and writes those variables in place (through a pointer to the caller's stack or to a
// scratch page), so `$sum += $kv.1` works as in bpftrace. The context grows with what the body
// uses, not with every variable in scope: a probe with 70 variables had a 576-byte context
// and no room left on its stack.

#include <cassert>

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

namespace {
// The address of the probe's "returned" flag: `return` or `exit()` in the body ends the probe.
constexpr uint64_t kContextProbeCtx = 0, kContextStart = 8, kContextReturned = 16,
                   kContextImports = 24;
}  // namespace

llvm::Value *Lowering::var_slot(const sema::VarInfo *var) {
  if (auto it = vars_.find(var); it != vars_.end())
    return it->second;
  bool outside = false;
  for (auto frame = imports_.rbegin(); frame != imports_.rend() && !outside; ++frame)
    outside = (*frame)->outer->count(var) > 0;
  if (!outside)
    return nullptr;
  LoopImports &imports = *imports_.back();
  uint64_t offset = kContextImports + 8 * imports.vars.size();
  imports.vars.push_back(var);
  llvm::IRBuilder<> at(imports.entry->getTerminator());
  at.SetCurrentDebugLocation(b_.getCurrentDebugLocation());
  llvm::Value *slot = at.CreateLoad(
      b_.getPtrTy(), at.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), imports.context, offset),
      var->name);
  vars_[var] = slot;
  return slot;
}

void Lowering::lower_loop_callback(const For &stmt, bool is_range) {
  const sema::VarInfo *loop_var = sema_.vars.at(&stmt);
  const Type &kv = loop_var->type;

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

  // In the probe; callbacks get its address (nested loops pass it on).
  if (!returned_)
    returned_ = b_.stack_slot(8, "returned", false);

  // The callback, lowered with its own per-function state.
  auto *ptr = b_.getPtrTy();
  auto *fty = is_range
                  ? llvm::FunctionType::get(b_.getInt64Ty(), {b_.getInt64Ty(), ptr}, false)
                  : llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr, ptr, ptr}, false);
  auto *callback = llvm::Function::Create(fty, llvm::Function::InternalLinkage,
                                          fn_->getName() + (is_range ? "_loop" : "_for"), module_);
  callback->addFnAttr(llvm::Attribute::NoUnwind);
  callback->addFnAttr(llvm::Attribute::NoInline);
  std::vector<const sema::VarInfo *> imported;
  {
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    llvm::DebugLoc saved_loc = b_.getCurrentDebugLocation();
    auto saved_fn = fn_;
    auto saved_ctx = ctx_;
    VarSlots saved_vars = std::move(vars_);
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
    LoopImports imports{&saved_vars, cb_context, entry, {}};
    imports_.push_back(&imports);
    ctx_ = b_.CreateLoad(ptr, b_.byte_ptr(cb_context, kContextProbeCtx), "probe_ctx");
    returned_ = b_.CreateLoad(ptr, b_.byte_ptr(cb_context, kContextReturned), "returned");
    vars_.clear();
    if (is_range) {
      // $i: the range's start plus the iteration's index.
      llvm::Value *slot = b_.stack_slot(8, loop_var->name);
      llvm::Value *start_value =
          b_.CreateLoad(b_.getInt64Ty(), b_.byte_ptr(cb_context, kContextStart));
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
    imports_.pop_back();
    imported = std::move(imports.vars);

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

  // The context: [probe ctx][range start][returned flag's address][address of each variable
  // the body imported].
  llvm::Value *context = b_.stack_slot(kContextImports + 8 * imported.size(), "for_context");
  b_.CreateStore(ctx(), b_.byte_ptr(context, kContextProbeCtx));
  if (is_range)
    b_.CreateStore(lo, b_.byte_ptr(context, kContextStart));
  b_.CreateStore(b_.getInt64(0), returned_);  // here, as the first loop may be in a branch
  b_.CreateStore(returned_, b_.byte_ptr(context, kContextReturned));
  for (size_t i = 0; i < imported.size(); i++) {
    llvm::Value *slot = var_slot(imported[i]);  // in a nested loop, imported from further out
    assert(slot && "a loop body imported a variable its caller does not have");
    b_.CreateStore(slot, b_.byte_ptr(context, kContextImports + 8 * i));
  }

  if (is_range) {
    b_.call_helper(BPF_FUNC_loop, b_.getInt64Ty(), {count, callback, context, b_.getInt64(0)});
  } else {
    auto &map = static_cast<const MapRef &>(*stmt.lo);
    b_.call_helper(BPF_FUNC_for_each_map_elem, b_.getInt64Ty(),
                   {resources_.map_global(map.name), callback, context, b_.getInt64(0)});
  }
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
