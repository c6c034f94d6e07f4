#include "ir_builder_bpf.h"

#include <llvm/IR/IntrinsicsBPF.h>

#include <cassert>

namespace rbt::codegen {

namespace {
// Above this many bytes a copy or zeroing is one bpf_probe_read_kernel call. Below it, LLVM's
// inline expansion is cheaper; above it the expansion could exceed the back end's 128 stores
// (with unknown alignment, one store per byte) and turn into a call BPF cannot make.
constexpr uint64_t kInlineCopyMax = 64;
}  // namespace

llvm::Value *IRBuilderBPF::call_helper(bpf_func_id id, llvm::Type *ret,
                                       llvm::ArrayRef<llvm::Value *> args,
                                       const llvm::Twine &name) {
  std::vector<llvm::Type *> params;
  for (auto *a : args)
    params.push_back(a->getType());
  auto *fty = llvm::FunctionType::get(ret, params, false);
  // BPF calls helpers by number: `call ptr inttoptr (i64 id to ptr)(...)`, as clang emits.
  auto *callee = llvm::ConstantExpr::getIntToPtr(getInt64(id), getPtrTy());
  llvm::CallInst *call = CreateCall(fty, callee, args, name);
  switch (id) {
  // Constant for the whole run of a probe: marked as reading no memory, so that `tid` used
  // three times is one call (EarlyCSE/GVN merge calls that cannot see memory).
  case BPF_FUNC_get_current_pid_tgid:
  case BPF_FUNC_get_current_uid_gid:
  case BPF_FUNC_get_smp_processor_id:
  case BPF_FUNC_get_current_task:
  case BPF_FUNC_get_current_task_btf:
  case BPF_FUNC_get_current_cgroup_id:
  case BPF_FUNC_get_numa_node_id:
    call->setDoesNotAccessMemory();
    call->setDoesNotThrow();
    call->addFnAttr(llvm::Attribute::WillReturn);
    break;
  default:
    break;
  }
  return call;
}

llvm::Value *IRBuilderBPF::opaque(llvm::Value *v) {
  llvm::Function *passthrough = llvm::Intrinsic::getDeclaration(
      &module_, llvm::Intrinsic::bpf_passthrough, {v->getType(), v->getType()});
  return CreateCall(passthrough, {getInt32(passthrough_seq_++), v});
}

llvm::Value *IRBuilderBPF::low32(llvm::Value *v) {
  return CreateZExt(opaque(CreateTrunc(v, getInt32Ty())), getInt64Ty());
}

llvm::Value *IRBuilderBPF::current_pid() {
  return CreateLShr(call_helper(BPF_FUNC_get_current_pid_tgid, getInt64Ty(), {}), 32);
}

llvm::Value *IRBuilderBPF::map_lookup(llvm::Value *map, llvm::Value *key) {
  return call_helper(BPF_FUNC_map_lookup_elem, getPtrTy(), {map, key}, "lookup");
}

llvm::Value *IRBuilderBPF::map_update(llvm::Value *map, llvm::Value *key, llvm::Value *value,
                                      uint64_t flags) {
  return call_helper(BPF_FUNC_map_update_elem, getInt64Ty(), {map, key, value, getInt64(flags)});
}

llvm::Value *IRBuilderBPF::map_delete(llvm::Value *map, llvm::Value *key) {
  return call_helper(BPF_FUNC_map_delete_elem, getInt64Ty(), {map, key});
}

llvm::Value *IRBuilderBPF::probe_read(llvm::Value *dst, uint64_t size, llvm::Value *addr,
                                      bool user) {
  return probe_read(dst, getInt64(size), addr, user);
}

llvm::Value *IRBuilderBPF::probe_read(llvm::Value *dst, llvm::Value *size, llvm::Value *addr,
                                      bool user) {
  llvm::Value *rc = call_helper(user ? BPF_FUNC_probe_read_user : BPF_FUNC_probe_read_kernel,
                                getInt64Ty(), {dst, size, addr});
  if (on_read_result)
    on_read_result(user ? "probe_read_user" : "probe_read_kernel", rc);
  return rc;
}

llvm::Value *IRBuilderBPF::probe_read_str(llvm::Value *dst, uint64_t size, llvm::Value *addr,
                                          bool user) {
  llvm::Value *rc = call_helper(user ? BPF_FUNC_probe_read_user_str : BPF_FUNC_probe_read_kernel_str,
                                getInt64Ty(), {dst, getInt64(size), addr});
  if (on_read_result)
    on_read_result(user ? "probe_read_user_str" : "probe_read_kernel_str", rc);
  return rc;
}

llvm::Value *IRBuilderBPF::ringbuf_output(llvm::Value *ringbuf, llvm::Value *data, uint64_t size,
                                          uint64_t flags) {
  return call_helper(BPF_FUNC_ringbuf_output, getInt64Ty(),
                     {ringbuf, data, getInt64(size), getInt64(flags)});
}

llvm::AllocaInst *IRBuilderBPF::stack_slot(llvm::Type *type, const llvm::Twine &name,
                                           bool zeroed) {
  llvm::Function *fn = GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  llvm::AllocaInst *slot = entry.CreateAlloca(type, nullptr, name);
  slot->setAlignment(llvm::Align(8));
  uint64_t size = module_.getDataLayout().getTypeAllocSize(type);
  stack_bytes_ += (size + 7) / 8 * 8;
  if (!zeroed)
    return slot;
  // Zeroed where the lowering asks for it, which comes before every use it makes of the slot,
  // rather than in `entry`: a probe whose predicate fails, or a branch not taken, then skips
  // the stores, and DSE drops the zeroing that the next stores overwrite.
  CreateMemSet(slot, getInt8(0), size, llvm::Align(8));
  return slot;
}

llvm::AllocaInst *IRBuilderBPF::stack_slot(uint64_t size, const llvm::Twine &name, bool zeroed) {
  return stack_slot(llvm::ArrayType::get(getInt8Ty(), (size + 7) / 8 * 8), name, zeroed);
}

llvm::Value *IRBuilderBPF::byte_ptr(llvm::Value *base, uint64_t offset) {
  return offset ? CreateConstInBoundsGEP1_64(getInt8Ty(), base, offset) : base;
}

void IRBuilderBPF::store_bytes(llvm::Value *dst, std::string_view bytes) {
  // 8 bytes at a time, as immediates: no .rodata section, no memcpy from a global. Long runs
  // are volatile: LLVM would merge equal stores into a memset larger than BPF can expand.
  bool is_volatile = bytes.size() > kInlineCopyMax;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; b--)
      v = (v << 8) | static_cast<uint8_t>(bytes[i + b]);
    CreateStore(getInt64(v), byte_ptr(dst, i), is_volatile);
  }
  for (; i < bytes.size(); i++)
    CreateStore(getInt8(static_cast<uint8_t>(bytes[i])), byte_ptr(dst, i));
}

void IRBuilderBPF::zero_bytes(llvm::Value *dst, uint64_t size) {
  if (size > kInlineCopyMax) {
    // bpf_probe_read_kernel zero-fills its destination when the read fails, and reading
    // address 0 always fails: the kernel's memset in one helper call (bpftrace does the same).
    call_helper(BPF_FUNC_probe_read_kernel, getInt64Ty(),
                {dst, getInt64(size), llvm::ConstantPointerNull::get(getPtrTy())});
  } else if (size) {
    CreateMemSet(dst, getInt8(0), size, llvm::MaybeAlign(1));
  }
}

void IRBuilderBPF::copy_bytes(llvm::Value *dst, llvm::Value *src, uint64_t size) {
  if (size > kInlineCopyMax)
    call_helper(BPF_FUNC_probe_read_kernel, getInt64Ty(), {dst, getInt64(size), src});
  else if (size)
    CreateMemCpy(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), size);
}

llvm::Value *IRBuilderBPF::load_int(llvm::Value *ptr, unsigned size, bool is_signed) {
  llvm::Type *ty = getIntNTy(size * 8);
  llvm::Value *v = CreateLoad(ty, ptr);
  if (size == 8)
    return v;
  return is_signed ? CreateSExt(v, getInt64Ty()) : CreateZExt(v, getInt64Ty());
}

void IRBuilderBPF::store_int(llvm::Value *ptr, llvm::Value *value, unsigned size) {
  llvm::Type *ty = getIntNTy(size * 8);
  CreateStore(size == 8 ? value : CreateTrunc(value, ty), ptr);
}

}  // namespace rbt::codegen
