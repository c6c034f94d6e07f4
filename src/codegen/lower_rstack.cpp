// rstack lowers to a call of the Ruby walker in stdlib/bpf/ruby_stack.bpf.c, nstack to the CFI
// unwinder in stdlib/bpf/native_stack.bpf.c, each linked in only by scripts that use it. Their
// values are {stack id, pid} like kstack/ustack; id 0 is "no stack" and prints as an empty one.
// rstack(native) takes all three (Ruby, native, kernel) of the same event into one 32-byte
// value {ruby id, native id, kernel id, pid}; user space merges them (runtime/mixed_stack.h).

#include <cstdlib>
#include <cstring>

#include "lowering.h"

#include "../../stdlib/bpf/native_unwind.h"

namespace rbt::codegen {

namespace {
// RBT_RSTACK_REFERENCE=1 (hidden, for bench/rstack_cost.py only) swaps in the walker that reads
// every frame's strings on every sample, the rbperf-style reference rstack is measured against.
const char *walker_name() {
  const char *ref = std::getenv("RBT_RSTACK_REFERENCE");
  return ref && std::strcmp(ref, "1") == 0 ? "rbt_rstack_reference" : "rbt_rstack";
}

llvm::Value *walk(IRBuilderBPF &b, llvm::Module &module, const char *walker, uint32_t depth) {
  llvm::FunctionCallee fn = module.getOrInsertFunction(walker, b.getInt64Ty(), b.getInt64Ty());
  return b.CreateCall(fn, {b.getInt64(depth)});
}
}  // namespace

llvm::Value *Lowering::ruby_stack(const Type &t) {
  libraries_.insert("ruby_stack");
  if (t.stack_kind != StackKind::Mixed) {
    llvm::Value *slot = b_.stack_slot(16, "rstack");
    b_.CreateStore(walk(b_, module_, walker_name(), t.stack_depth), slot);
    b_.CreateStore(b_.current_pid(), b_.byte_ptr(slot, 8));
    return slot;
  }
  libraries_.insert("native_stack");
  llvm::Value *kernel = lower_stack(Type::stack(StackKind::Kernel, 127, StackMode::Bpftrace));
  llvm::Value *kernel_id = b_.CreateLoad(b_.getInt64Ty(), kernel);
  llvm::Value *slot = b_.stack_slot(32, "rstack_native");
  b_.CreateStore(walk(b_, module_, walker_name(), t.stack_depth), slot);
  b_.CreateStore(walk(b_, module_, "rbt_nstack", RBT_NATIVE_MAX_DEPTH), b_.byte_ptr(slot, 8));
  b_.CreateStore(kernel_id, b_.byte_ptr(slot, 16));
  llvm::Value *pid = b_.current_pid();
  b_.CreateStore(pid, b_.byte_ptr(slot, 24));
  announce_process(pid);  // user space keeps its memory map to name native frames after exit
  return slot;
}

llvm::Value *Lowering::native_stack(const Type &t) {
  libraries_.insert("native_stack");
  llvm::Value *slot = b_.stack_slot(16, "nstack");
  b_.CreateStore(walk(b_, module_, "rbt_nstack", t.stack_depth), slot);
  llvm::Value *pid = b_.current_pid();
  b_.CreateStore(pid, b_.byte_ptr(slot, 8));
  announce_process(pid);
  return slot;
}

llvm::Value *Lowering::lower_rstack(const ast::Builtin &node) { return ruby_stack(type_of(&node)); }
llvm::Value *Lowering::lower_rstack_n(const ast::Call &call) { return ruby_stack(type_of(&call)); }
llvm::Value *Lowering::lower_nstack(const ast::Builtin &node) { return native_stack(type_of(&node)); }
llvm::Value *Lowering::lower_nstack_n(const ast::Call &call) { return native_stack(type_of(&call)); }

}  // namespace rbt::codegen
