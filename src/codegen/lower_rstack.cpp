// rstack lowers to a call of the Ruby walker in stdlib/bpf/ruby_stack.bpf.c (a BPF object
// compiled at build time and linked by libbpf: link_walker.h), nstack to the CFI unwinder in
// stdlib/bpf/native_stack.bpf.c (bitcode, linked by LLVM), each only for scripts that use it.
// rstack's value is {u64 stack id, u32 pid, u32 cut} (ruby_layouts.h): an odd id names a
// recorded stack, an even one says why the stack is empty. `cut` is 0 except in an event's
// values (print, printf), where the walker counts the frames cut below the depth limit for that
// event; a map key never holds a count, so stacks that differ only below the limit are one key.
// nstack's is {stack id, pid} like kstack/ustack. rstack(native) takes all three (Ruby, native,
// kernel) of the same event into one 32-byte value {ruby id, native id, kernel id, pid}; user
// space merges them (runtime/mixed_stack.h).

#include <cstdlib>
#include <cstring>

#include "link_walker.h"
#include "lowering.h"

#include "../../stdlib/bpf/native_unwind.h"
#include "../../stdlib/bpf/ruby_layouts.h"  // frame string sizes and depth limits

namespace rbt::codegen {

namespace {
// RBT_RSTACK_REFERENCE=1 (hidden, for bench/rstack_cost.py only) swaps in the walker that reads
// every frame's strings on every sample, the rbperf-style reference rstack is measured against.
bool reference_walker() {
  const char *ref = std::getenv("RBT_RSTACK_REFERENCE");
  return ref && std::strcmp(ref, "1") == 0;
}

}  // namespace

// The walker's entry points are in the walker object (link_walker.h), which brings the
// discovery programs of stdlib/bpf/ruby_discovery.h along; the runtime attaches those.
llvm::Value *Lowering::walk(const char *walker, uint64_t depth) {
  ruby_walker_ = true;
  return b_.CreateCall(declare_walker_entry(module_, debug_info_, walker, 1), {b_.getInt64(depth)});
}

llvm::Value *Lowering::ruby_stack(const Type &t) {
  const char *walker = reference_walker() ? "rbt_rstack_reference"
                       : in_event_        ? "rbt_rstack_exact"
                                          : "rbt_rstack";
  if (t.stack_kind != StackKind::Mixed) {
    llvm::Value *slot = b_.stack_slot(16, "rstack");
    b_.CreateStore(walk(walker, t.stack_depth), slot);
    b_.CreateStore(b_.CreateTrunc(b_.current_pid(), b_.getInt32Ty()), b_.byte_ptr(slot, 8));
    llvm::Value *cut = b_.getInt32(0);
    if (in_event_ && !reference_walker()) {
      llvm::FunctionCallee last = declare_walker_entry(module_, debug_info_, "rbt_rstack_cut", 0);
      cut = b_.CreateTrunc(b_.CreateCall(last, {}), b_.getInt32Ty());
    }
    b_.CreateStore(cut, b_.byte_ptr(slot, 12));
    return slot;
  }
  libraries_.insert("native_stack");
  llvm::Value *kernel = lower_stack(Type::stack(StackKind::Kernel, 127, StackMode::Bpftrace));
  llvm::Value *kernel_id = b_.CreateLoad(b_.getInt64Ty(), kernel);
  llvm::Value *slot = b_.stack_slot(32, "rstack_native");
  // A map key: no per-event count of cut frames, so the plain walker.
  llvm::Value *ruby_id =
      walk(reference_walker() ? "rbt_rstack_reference" : "rbt_rstack", t.stack_depth);
  b_.CreateStore(ruby_id, slot);
  // By function: the merge names native frames by function, and a stack that is the same
  // from sample to sample is stored once and keys the map the same. The walk ends at the
  // root-most C method's function: rootward of it the merge drops everything
  // (docs/native-stack.md).
  llvm::FunctionCallee anchor_fn =
      declare_walker_entry(module_, debug_info_, "rbt_rstack_anchor", 1);
  llvm::FunctionCallee native_fn = module_.getOrInsertFunction(
      "rbt_nstack_to", b_.getInt64Ty(), b_.getInt64Ty(), b_.getInt64Ty());
  llvm::Value *anchor = b_.CreateCall(anchor_fn, {ruby_id});
  b_.CreateStore(
      b_.CreateCall(native_fn, {b_.getInt64(RBT_NATIVE_MAX_DEPTH | RBT_NATIVE_FUNCTIONS), anchor}),
      b_.byte_ptr(slot, 8));
  b_.CreateStore(kernel_id, b_.byte_ptr(slot, 16));
  b_.CreateStore(b_.current_pid(), b_.byte_ptr(slot, 24));
  return slot;  // not announced: see native_stack()
}

llvm::Value *Lowering::native_stack(const Type &t) {
  libraries_.insert("native_stack");
  llvm::Value *slot = b_.stack_slot(16, "nstack");
  llvm::FunctionCallee nstack =
      module_.getOrInsertFunction("rbt_nstack", b_.getInt64Ty(), b_.getInt64Ty());
  b_.CreateStore(b_.CreateCall(nstack, {b_.getInt64(t.stack_depth)}), slot);
  // Unlike ustack, no announce_process: every process whose native frames the walker unwinds
  // has had its maps read by user space (a walk of a process without a record asks for one),
  // and that read also keeps the maps to name the frames after the process exits
  // (NativeStacks::on_remapped). The announcement's map lookup was a cold line per sample.
  b_.CreateStore(b_.current_pid(), b_.byte_ptr(slot, 8));
  return slot;
}

llvm::Value *Lowering::lower_rstack(const ast::Builtin &node) { return ruby_stack(type_of(&node)); }
llvm::Value *Lowering::lower_rstack_n(const ast::Call &call) { return ruby_stack(type_of(&call)); }
llvm::Value *Lowering::lower_nstack(const ast::Builtin &node) { return native_stack(type_of(&node)); }
llvm::Value *Lowering::lower_nstack_n(const ast::Call &call) { return native_stack(type_of(&call)); }

}  // namespace rbt::codegen

namespace rbt::codegen {

int64_t Lowering::rframe_index(const ast::Call &call) const {
  return static_cast<int64_t>(sema_.constants.at(&call));  // sema's constant: -1 is the root
}

// With a stack argument, its id; without, a walk of the current thread deep enough for the
// index: rstack's default depth when that reaches it (the same stack record as a plain rstack
// in the probe), all of it (1024) for a root-relative index.
llvm::Value *Lowering::rframe_stack_id(const ast::Call &call) {
  if (call.args.size() == 2)
    return b_.CreateLoad(b_.getInt64Ty(), lower_expr(*call.args[0]));
  int64_t index = rframe_index(call);
  uint64_t depth = index < 0                        ? RBT_RUBY_MAX_DEPTH
                   : index < RBT_RUBY_DEFAULT_DEPTH ? RBT_RUBY_DEFAULT_DEPTH
                                                    : static_cast<uint64_t>(index) + 1;
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
  b_.CreateStore(walk("rbt_rstack", depth), slot);
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
