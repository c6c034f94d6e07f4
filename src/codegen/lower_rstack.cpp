// rstack lowers to a call of the Ruby walker in stdlib/bpf/ruby_stack.bpf.c, linked in only
// by scripts that use it. The value is {stack id, pid} like kstack/ustack; id 0 is "no Ruby on
// this thread" and prints as an empty stack.

#include <cstdlib>
#include <cstring>

#include "lowering.h"

namespace rbt::codegen {

namespace {
// RBT_RSTACK_REFERENCE=1 (hidden, for bench/rstack_cost.py only) swaps in the walker that reads
// every frame's strings on every sample, the rbperf-style reference rstack is measured against.
const char *walker_name() {
  const char *ref = std::getenv("RBT_RSTACK_REFERENCE");
  return ref && std::strcmp(ref, "1") == 0 ? "rbt_rstack_reference" : "rbt_rstack";
}

// The discovery programs of stdlib/bpf/ruby_discovery.h come with the walker: declaring them
// makes the linker bring them in; the runtime attaches them (src/runtime/ruby/ruby_discovery).
void declare_discovery(IRBuilderBPF &b, llvm::Module &module) {
  for (const char *name : {"rbt_ruby_discover", "rbt_ruby_fork", "rbt_ruby_exec"})
    module.getOrInsertFunction(name, b.getInt32Ty(), b.getPtrTy());
}

llvm::Value *ruby_stack(IRBuilderBPF &b, llvm::Module &module, uint32_t depth) {
  declare_discovery(b, module);
  llvm::FunctionCallee walk =
      module.getOrInsertFunction(walker_name(), b.getInt64Ty(), b.getInt64Ty());
  llvm::Value *slot = b.stack_slot(16, "rstack");
  b.CreateStore(b.CreateCall(walk, {b.getInt64(depth)}), slot);
  b.CreateStore(b.current_pid(), b.byte_ptr(slot, 8));
  return slot;
}
}  // namespace

llvm::Value *Lowering::lower_rstack(const ast::Builtin &node) {
  libraries_.insert("ruby_stack");
  return ruby_stack(b_, module_, type_of(&node).stack_depth);
}

llvm::Value *Lowering::lower_rstack_n(const ast::Call &call) {
  libraries_.insert("ruby_stack");
  return ruby_stack(b_, module_, type_of(&call).stack_depth);
}

}  // namespace rbt::codegen
