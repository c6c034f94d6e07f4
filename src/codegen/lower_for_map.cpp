// `for ($kv : @map) { body }`: the body becomes a static BPF function that
// bpf_for_each_map_elem calls once per entry with (map, key, value, context).
//
// A callback cannot see its caller's registers, so what the body needs from the probe travels
// in a context struct on the probe's stack: the probe's ctx pointer (for args, reg(), stacks),
// then a copy of every small scratch variable live at the loop, and the address of every large
// one (long strings live in scratch pages; copying them would not fit the stack, and the
// helper wants its context on the stack). The body reads and writes the copies in place (the
// callback may access its caller's stack through the context pointer) and the probe copies them
// back after the loop, so `$sum += $kv.1` works as in bpftrace.

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

void Lowering::lower_for_map(const For &stmt) {
  auto &map = static_cast<const MapRef &>(*stmt.lo);
  const sema::VarInfo *kv_var = sema_.vars.at(&stmt);
  const Type &kv = kv_var->type;

  // The context: [probe ctx][each outer variable, 8-aligned].
  constexpr uint64_t kCopiedMax = 64;  // larger variables are shared by address
  struct Shared {
    const sema::VarInfo *var;
    llvm::Value *slot;
    uint64_t offset, size;
    bool by_address;
  };
  std::vector<Shared> shared;
  uint64_t size = 8;
  for (auto &[var, slot] : vars_) {
    bool by_address = var->type.size > kCopiedMax;
    shared.push_back({var, slot, size, var->type.size, by_address});
    size += by_address ? 8 : (var->type.size + 7) / 8 * 8;
  }
  llvm::Value *context = b_.stack_slot(size, "for_context");
  b_.CreateStore(ctx(), context);
  for (auto &s : shared) {
    if (s.by_address)
      b_.CreateStore(s.slot, b_.byte_ptr(context, s.offset));
    else
      b_.copy_bytes(b_.byte_ptr(context, s.offset), s.slot, s.size);
  }

  // The callback, lowered with its own per-function state.
  auto *ptr = b_.getPtrTy();
  auto *fty = llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr, ptr, ptr}, false);
  auto *callback = llvm::Function::Create(fty, llvm::Function::InternalLinkage,
                                          fn_->getName() + "_for", module_);
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
    uint64_t saved_stack = b_.stack_bytes();

    fn_ = callback;
    pages_.clear();
    b_.reset_stack_bytes();
    in_callback_ = true;
    auto *sp = debug_info_.describe_function(*callback, stmt.range.line, 4);
    b_.SetCurrentDebugLocation(
        llvm::DILocation::get(module_.getContext(), stmt.range.line, stmt.range.col, sp));
    auto *entry = new_block("entry");
    auto *start = new_block("start");
    b_.SetInsertPoint(entry);
    b_.CreateBr(start);
    setup_tail_ = entry;
    b_.SetInsertPoint(start);

    llvm::Value *cb_context = callback->getArg(3);
    ctx_ = b_.CreateLoad(ptr, cb_context, "probe_ctx");
    vars_.clear();
    for (auto &s : shared)
      vars_[s.var] = s.by_address ? b_.CreateLoad(ptr, b_.byte_ptr(cb_context, s.offset))
                                  : b_.byte_ptr(cb_context, s.offset);
    // $kv: the entry's key and value, copied into a tuple of the checker's layout.
    llvm::Value *kv_slot = value_slot(kv.size, kv_var->name);
    b_.copy_bytes(b_.byte_ptr(kv_slot, kv.offsets[0]), callback->getArg(1), kv.elems[0].size);
    b_.copy_bytes(b_.byte_ptr(kv_slot, kv.offsets[1]), callback->getArg(2), kv.elems[1].size);
    vars_[kv_var] = kv_slot;

    auto *next = new_block("for_next");
    auto *stop = new_block("for_stop");
    loops_ = {{next, stop}};
    lower_block(*stmt.body);
    b_.CreateBr(next);
    b_.SetInsertPoint(next);
    b_.CreateRet(b_.getInt32(0));  // 0: on to the next entry
    b_.SetInsertPoint(stop);
    b_.CreateRet(b_.getInt32(1));  // 1: break

    fn_ = saved_fn;
    ctx_ = saved_ctx;
    vars_ = std::move(saved_vars);
    loops_ = std::move(saved_loops);
    pages_ = std::move(saved_pages);
    setup_tail_ = saved_tail;
    in_callback_ = saved_in_callback;
    b_.set_stack_bytes(saved_stack);
    b_.SetCurrentDebugLocation(saved_loc);
  }

  b_.call_helper(BPF_FUNC_for_each_map_elem, b_.getInt64Ty(),
                 {resources_.map_global(map.name), callback, context, b_.getInt64(0)});
  for (auto &s : shared)
    if (!s.by_address)
      b_.copy_bytes(s.slot, b_.byte_ptr(context, s.offset), s.size);
}

}  // namespace rbt::codegen
