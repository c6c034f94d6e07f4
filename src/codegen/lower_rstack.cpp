// rstack lowers to a call of the Ruby walker in stdlib/bpf/ruby_stack.bpf.c, linked in only
// by scripts that use it. The value is {u64 stack id, u32 pid, u32 cut} (ruby_layouts.h): an
// odd id names a recorded stack, an even one says why the stack is empty. `cut` is 0 except in
// an event's values (print, printf), where the walker counts the frames cut below the depth
// limit for that event; a map key never holds a count, so stacks that differ only below the
// limit are one key.

#include <cstdlib>
#include <cstring>

#include "lowering.h"

#include "../../stdlib/bpf/ruby_layouts.h"  // frame string sizes and depth limits

namespace rbt::codegen {

namespace {
// RBT_RSTACK_REFERENCE=1 (hidden, for bench/rstack_cost.py only) swaps in the walker that reads
// every frame's strings on every sample, the rbperf-style reference rstack is measured against.
bool reference_walker() {
  const char *ref = std::getenv("RBT_RSTACK_REFERENCE");
  return ref && std::strcmp(ref, "1") == 0;
}

llvm::Value *ruby_stack(IRBuilderBPF &b, llvm::Module &module, uint32_t depth, bool in_event) {
  const char *name = reference_walker() ? "rbt_rstack_reference"
                     : in_event         ? "rbt_rstack_exact"
                                        : "rbt_rstack";
  llvm::FunctionCallee walk = module.getOrInsertFunction(name, b.getInt64Ty(), b.getInt64Ty());
  llvm::Value *slot = b.stack_slot(16, "rstack");
  b.CreateStore(b.CreateCall(walk, {b.getInt64(depth)}), slot);
  b.CreateStore(b.CreateTrunc(b.current_pid(), b.getInt32Ty()), b.byte_ptr(slot, 8));
  llvm::Value *cut = b.getInt32(0);
  if (in_event && !reference_walker()) {
    llvm::FunctionCallee last = module.getOrInsertFunction("rbt_rstack_cut", b.getInt64Ty());
    cut = b.CreateTrunc(b.CreateCall(last, {}), b.getInt32Ty());
  }
  b.CreateStore(cut, b.byte_ptr(slot, 12));
  return slot;
}
}  // namespace

llvm::Value *Lowering::lower_rstack(const ast::Builtin &node) {
  libraries_.insert("ruby_stack");
  return ruby_stack(b_, module_, type_of(&node).stack_depth, in_event_);
}

llvm::Value *Lowering::lower_rstack_n(const ast::Call &call) {
  libraries_.insert("ruby_stack");
  return ruby_stack(b_, module_, type_of(&call).stack_depth, in_event_);
}

}  // namespace rbt::codegen

namespace rbt::codegen {

int64_t Lowering::rframe_index(const ast::Call &call) const {
  const ast::Expr *e = call.args.back();
  bool negative = false;
  if (auto *u = dyn_cast<ast::Unary>(e); u && u->op == ast::UnaryOp::Neg) {
    negative = true;
    e = u->operand;
  }
  auto v = static_cast<int64_t>(static_cast<const ast::IntLit *>(e)->value);
  return negative ? -v : v;
}

// With a stack argument, its id; without, a walk of the current thread deep enough for the
// index: rstack's default depth when that reaches it (the same stack record as a plain rstack
// in the probe), all of it (1024) for a root-relative index.
llvm::Value *Lowering::rframe_stack_id(const ast::Call &call) {
  libraries_.insert("ruby_stack");
  if (call.args.size() == 2)
    return b_.CreateLoad(b_.getInt64Ty(), lower_expr(*call.args[0]));
  int64_t index = rframe_index(call);
  uint64_t depth = index < 0                        ? RBT_RUBY_MAX_DEPTH
                   : index < RBT_RUBY_DEFAULT_DEPTH ? RBT_RUBY_DEFAULT_DEPTH
                                                    : static_cast<uint64_t>(index) + 1;
  llvm::FunctionCallee walk =
      module_.getOrInsertFunction("rbt_rstack", b_.getInt64Ty(), b_.getInt64Ty());
  // One walk per run of the function for each depth: the slot is cleared in its entry block
  // (which every run goes through first) and filled by the first call that needs it.
  llvm::AllocaInst *&slot = rframe_walks_[{fn_, depth}];
  if (!slot) {
    slot = b_.stack_slot(8, "rframe_walk", false);
    llvm::IRBuilder<> entry(fn_->getEntryBlock().getTerminator());
    entry.CreateStore(entry.getInt64(0), slot);
  }
  auto *walk_now = new_block("rframe_walk");
  auto *walked = new_block("rframe_walked");
  b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateLoad(b_.getInt64Ty(), slot), b_.getInt64(0)),
                  walk_now, walked);
  b_.SetInsertPoint(walk_now);
  b_.CreateStore(b_.CreateCall(walk, {b_.getInt64(depth)}), slot);
  b_.CreateBr(walked);
  b_.SetInsertPoint(walked);
  return b_.CreateLoad(b_.getInt64Ty(), slot);
}

llvm::Value *Lowering::lower_rlabel(const ast::Call &call) {
  llvm::Value *id = rframe_stack_id(call);
  llvm::Value *slot = value_slot(RBT_RUBY_LABEL_LEN, "rlabel");
  call_stdlib("ruby_stack", "rbt_rlabel", {id, b_.getInt64(rframe_index(call)), slot});
  return slot;
}

llvm::Value *Lowering::lower_rpath(const ast::Call &call) {
  llvm::Value *id = rframe_stack_id(call);
  llvm::Value *slot = value_slot(RBT_RUBY_PATH_LEN, "rpath");
  call_stdlib("ruby_stack", "rbt_rpath", {id, b_.getInt64(rframe_index(call)), slot});
  return slot;
}

llvm::Value *Lowering::lower_rline(const ast::Call &call) {
  llvm::Value *id = rframe_stack_id(call);
  return call_stdlib("ruby_stack", "rbt_rline", {id, b_.getInt64(rframe_index(call))});
}

// strcontains(rstack, "text") (lower_builtins.cpp sends it here).
llvm::Value *Lowering::lower_rstack_contains(const ast::Call &call) {
  llvm::Value *id = b_.CreateLoad(b_.getInt64Ty(), lower_expr(*call.args[0]));
  llvm::Value *needle = lower_expr(*call.args[1]);
  return call_stdlib("ruby_stack", "rbt_rstack_contains",
                     {id, needle, b_.getInt64(type_of(call.args[1]).size)});
}

}  // namespace rbt::codegen
