// Reading an aggregation's value in an expression (`if (@c > 5)`, `(int64)@s`, `$x = @a`),
// which bpftrace allows for count, sum, min, max and avg: the per-CPU values are combined in
// the program, as user space combines them when it prints.
//
//   @c (a count map) → ctx = {key, 0, 0}; bpf_loop(ncpus, combine, &ctx, 0); ctx.total
//
// where combine(cpu, ctx) reads the key's value on that CPU with
// bpf_map_lookup_percpu_elem. bpf_loop keeps the verifier's work independent of the number of
// CPUs (an inline loop bounded by ncpus is walked once per possible CPU).

#include <cassert>

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

namespace {

// The context's layout: the key's address, then two accumulators (count/sum: the total;
// avg: total and count; min/max: the value so far and whether there is one).
constexpr uint64_t kKeyAt = 0, kFirstAt = 8, kSecondAt = 16, kContextSize = 24;

}  // namespace

llvm::Value *Lowering::read_aggregation(const MapDesc &desc, llvm::Value *key) {
  const Type &t = desc.value;
  // One context per function, shared by its reads (each fills it anew): a probe reading ten
  // aggregations must not spend 240 bytes of its stack on them.
  llvm::Value *&context = agg_read_contexts_[fn_];
  if (!context)
    context = b_.stack_slot(kContextSize, "agg_read", /*zeroed=*/false);
  b_.CreateStore(key, b_.byte_ptr(context, kKeyAt));
  b_.CreateStore(b_.getInt64(0), b_.byte_ptr(context, kFirstAt));
  b_.CreateStore(b_.getInt64(0), b_.byte_ptr(context, kSecondAt));

  auto *ptr = b_.getPtrTy();
  auto *i64 = b_.getInt64Ty();
  auto *fty = llvm::FunctionType::get(i64, {i64, ptr}, false);
  auto *callback = llvm::Function::Create(fty, llvm::Function::InternalLinkage,
                                          fn_->getName() + "_agg_read", module_);
  callback->addFnAttr(llvm::Attribute::NoUnwind);
  callback->addFnAttr(llvm::Attribute::NoInline);
  {
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    llvm::DebugLoc saved_loc = b_.getCurrentDebugLocation();
    unsigned line = saved_loc ? saved_loc.getLine() : 0;
    auto *sp = debug_info_.describe_function(*callback, line, 2);
    b_.SetCurrentDebugLocation(llvm::DILocation::get(module_.getContext(), line, 0, sp));
    auto *entry = llvm::BasicBlock::Create(module_.getContext(), "entry", callback);
    auto *found_block = llvm::BasicBlock::Create(module_.getContext(), "found", callback);
    auto *stop = llvm::BasicBlock::Create(module_.getContext(), "stop", callback);
    b_.SetInsertPoint(entry);
    llvm::Value *cpu = callback->getArg(0), *state = callback->getArg(1);
    llvm::Value *cpu_key = b_.CreateLoad(ptr, b_.byte_ptr(state, kKeyAt));
    llvm::Value *value =
        b_.call_helper(BPF_FUNC_map_lookup_percpu_elem, ptr,
                       {resources_.map_global(desc.name), cpu_key, b_.CreateAnd(cpu, 0xffffffff)});
    // No value: the key is absent (on every CPU), or the CPU is past the last possible one.
    b_.CreateCondBr(b_.CreateIsNull(value), stop, found_block);
    b_.SetInsertPoint(found_block);
    llvm::Value *first = b_.byte_ptr(state, kFirstAt), *second = b_.byte_ptr(state, kSecondAt);
    llvm::Value *v0 = b_.CreateLoad(i64, value);
    llvm::Value *acc0 = b_.CreateLoad(i64, first);
    switch (t.kind) {
    case TypeKind::Count:
    case TypeKind::Sum:
      b_.CreateStore(b_.CreateAdd(acc0, v0), first);
      break;
    case TypeKind::Avg: {
      llvm::Value *v1 = b_.CreateLoad(i64, b_.byte_ptr(value, 8));
      b_.CreateStore(b_.CreateAdd(acc0, v0), first);
      b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64, second), v1), second);
      break;
    }
    case TypeKind::Min:
    case TypeKind::Max: {
      // Each CPU keeps {value, has_value}; a CPU that never saw the key does not count.
      llvm::Value *has = b_.CreateICmpNE(b_.CreateLoad(i64, b_.byte_ptr(value, 8)), b_.getInt64(0));
      llvm::Value *had = b_.CreateICmpNE(b_.CreateLoad(i64, second), b_.getInt64(0));
      bool is_min = t.kind == TypeKind::Min;
      llvm::CmpInst::Predicate p =
          is_min ? (t.is_signed ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_ULT)
                 : (t.is_signed ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_UGT);
      llvm::Value *better = b_.CreateOr(b_.CreateNot(had), b_.CreateICmp(p, v0, acc0));
      llvm::Value *take = b_.CreateAnd(has, better);
      b_.CreateStore(b_.CreateSelect(take, v0, acc0), first);
      b_.CreateStore(b_.CreateSelect(b_.CreateOr(has, had), b_.getInt64(1), b_.getInt64(0)),
                     second);
      break;
    }
    default:
      assert(false && "not a readable aggregation");
    }
    b_.CreateRet(b_.getInt64(0));
    b_.SetInsertPoint(stop);
    b_.CreateRet(b_.getInt64(1));
    b_.SetCurrentDebugLocation(saved_loc);
  }
  b_.call_helper(BPF_FUNC_loop, i64,
                 {config_field(offsetof(RuntimeConfig, ncpus)), callback, context, b_.getInt64(0)});
  llvm::Value *total = b_.CreateLoad(i64, b_.byte_ptr(context, kFirstAt));
  if (t.kind != TypeKind::Avg)
    return total;
  // The average, rounded toward zero; BPF divides unsigned only, so a negative total is
  // divided as its magnitude.
  llvm::Value *count = b_.CreateLoad(i64, b_.byte_ptr(context, kSecondAt));
  llvm::Value *none = b_.CreateICmpEQ(count, b_.getInt64(0));
  llvm::Value *divisor = b_.CreateSelect(none, b_.getInt64(1), count);
  llvm::Value *avg = b_.CreateUDiv(total, divisor);
  if (t.is_signed) {
    llvm::Value *negative = b_.CreateICmpSLT(total, b_.getInt64(0));
    llvm::Value *magnitude = b_.CreateUDiv(b_.CreateNeg(total), divisor);
    avg = b_.CreateSelect(negative, b_.CreateNeg(magnitude), avg);
  }
  return b_.CreateSelect(none, b_.getInt64(0), avg);
}

}  // namespace rbt::codegen
