#pragma once
// IRBuilder with the BPF vocabulary: helper calls by id, map operations, stack slots in the
// entry block, constant bytes. Lowering code speaks in these terms, not in raw intrinsics.

#include <linux/bpf.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <string_view>

namespace rbt::codegen {

class IRBuilderBPF : public llvm::IRBuilder<> {
public:
  IRBuilderBPF(llvm::LLVMContext &ctx, llvm::Module &module) : IRBuilder(ctx), module_(module) {}

  llvm::Module &module() { return module_; }
  llvm::PointerType *ptr_type() { return getPtrTy(); }

  // Calls BPF helper `id` (an `enum bpf_func_id` value) with i64/ptr arguments.
  llvm::Value *call_helper(bpf_func_id id, llvm::Type *ret, llvm::ArrayRef<llvm::Value *> args,
                           const llvm::Twine &name = "");

  llvm::Value *current_pid();  // the thread group id: what users call a pid
  llvm::Value *map_lookup(llvm::Value *map, llvm::Value *key);  // returns ptr (null if absent)
  llvm::Value *map_update(llvm::Value *map, llvm::Value *key, llvm::Value *value, uint64_t flags);
  llvm::Value *map_delete(llvm::Value *map, llvm::Value *key);
  // Copies `size` bytes (or a NUL-terminated string of at most `size`) from another address
  // space: user memory for uprobes and syscall arguments, kernel memory otherwise.
  llvm::Value *probe_read(llvm::Value *dst, uint64_t size, llvm::Value *addr, bool user);
  llvm::Value *probe_read_str(llvm::Value *dst, uint64_t size, llvm::Value *addr, bool user);
  // -k: told of every read helper's result (its name, the value it returned) right after the
  // call, to emit a warning when it failed. Unset: reads are not checked.
  std::function<void(const char *helper, llvm::Value *rc)> on_read_result;
  // A read of a run-time size; the verifier must be able to bound `size` by dst's room.
  llvm::Value *probe_read(llvm::Value *dst, llvm::Value *size, llvm::Value *addr, bool user);
  // flags: 0 wakes the reader now; BPF_RB_NO_WAKEUP leaves the event for its next read.
  llvm::Value *ringbuf_output(llvm::Value *ringbuf, llvm::Value *data, uint64_t size,
                              uint64_t flags = 0);

  // A zero-initialized stack slot of `size` bytes (or of `type`), allocated in the entry block
  // so that loops do not grow the stack. Zeroing keeps padding bytes defined for the verifier.
  // `zeroed` false: for a slot whose every byte is written by a helper before any read.
  llvm::AllocaInst *stack_slot(uint64_t size, const llvm::Twine &name = "", bool zeroed = true);
  llvm::AllocaInst *stack_slot(llvm::Type *type, const llvm::Twine &name = "", bool zeroed = true);
  // Bytes of stack slots handed out since the last reset (one function's worth), so lowering
  // can move values to scratch memory before the 512-byte BPF stack runs out.
  uint64_t stack_bytes() const { return stack_bytes_; }
  void reset_stack_bytes() { stack_bytes_ = 0; }
  void set_stack_bytes(uint64_t n) { stack_bytes_ = n; }

  void store_bytes(llvm::Value *dst, std::string_view bytes);  // constant bytes, as immediates
  // Zeroes or copies `size` bytes of BPF memory (stack, map values). Small sizes become
  // loads and stores; large ones one helper call, as the back end would otherwise emit a
  // memset/memcpy call BPF cannot make.
  void zero_bytes(llvm::Value *dst, uint64_t size);
  void copy_bytes(llvm::Value *dst, llvm::Value *src, uint64_t size);
  llvm::Value *byte_ptr(llvm::Value *base, uint64_t offset);

  // `v` unchanged, but opaque to LLVM's optimizer until just before instruction selection
  // (llvm.bpf.passthrough): it is not speculatable, so a block computing it stays a branch,
  // and it is not folded with what surrounds it.
  llvm::Value *opaque(llvm::Value *v);
  // The low 32 bits of `v`, zero-extended: one `w = w` move with alu32, where the `and` LLVM
  // would otherwise keep becomes two shifts.
  llvm::Value *low32(llvm::Value *v);

  // Loads an integer of `size` bytes at `ptr` and extends it to i64.
  llvm::Value *load_int(llvm::Value *ptr, unsigned size, bool is_signed);
  void store_int(llvm::Value *ptr, llvm::Value *value, unsigned size);

private:
  llvm::Module &module_;
  int passthrough_seq_ = 0;  // llvm.bpf.passthrough calls want distinct sequence numbers
  uint64_t stack_bytes_ = 0;
};

}  // namespace rbt::codegen
