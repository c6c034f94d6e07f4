// rstack lowers to a call of the Ruby walker in stdlib/bpf/ruby_stack.bpf.c, linked in only
// by scripts that use it. The value is {u64 stack id, u32 pid, u32 cut} (ruby_layouts.h): an
// odd id names a recorded stack, an even one says why the stack is empty. `cut` is 0 except in
// an event's values (print, printf), where the walker counts the frames cut below the depth
// limit for that event; a map key never holds a count, so stacks that differ only below the
// limit are one key.

#include <cstdlib>
#include <cstring>

#include "lowering.h"

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
