// Aggregations: `@m[k] = count()` and friends. Aggregation maps are per-CPU (hashes, or arrays
// for keyless ones: MapDesc::is_array), so updates are plain loads and stores; the runtime sums
// the CPUs' values when it prints.

#include <llvm/IR/InlineAsm.h>

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

void Lowering::upsert(const MapDesc &map, llvm::Value *key,
                      const std::function<void(llvm::Value *)> &update,
                      const std::function<void(llvm::Value *)> &init) {
  llvm::Value *global = resources_.map_global(map.name);
  llvm::Value *found = b_.map_lookup(global, key);
  // An array's slots all exist and start at zero, which each update takes as "nothing yet";
  // its lookup only fails for an index out of range, which hist_key never makes.
  auto *hit = new_block("agg_hit");
  auto *done = new_block("agg_done");
  auto *miss = map.is_array() ? done : new_block("agg_miss");
  b_.CreateCondBr(b_.CreateIsNull(found), miss, hit);
  b_.SetInsertPoint(hit);
  update(found);
  b_.CreateBr(done);
  if (!map.is_array()) {
    b_.SetInsertPoint(miss);
    llvm::Value *slot = value_slot(map.bpf_value_size(), "agg_init");
    init(slot);
    map_update_counted(map, key, slot);
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
}

void Lowering::map_update_counted(const MapDesc &map, llvm::Value *key, llvm::Value *value) {
  llvm::Value *rc = b_.map_update(resources_.map_global(map.name), key, value, BPF_ANY);
  if (map.is_array())
    return;  // every slot exists: an update cannot be refused
  // -E2BIG when the map holds max_map_keys keys (-ENOMEM if the kernel has no memory for one):
  // a successful update costs one branch.
  auto *full = new_block("map_full");
  auto *done = new_block("map_updated");
  b_.CreateCondBr(b_.CreateICmpEQ(rc, b_.getInt64(0)), done, full);
  b_.SetInsertPoint(full);
  b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, resources_.map_full_counter(map.name),
                     b_.getInt64(1), llvm::Align(8), llvm::AtomicOrdering::Monotonic);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

namespace {
llvm::Value *field(IRBuilderBPF &b, llvm::Value *value, unsigned offset) {
  return b.byte_ptr(value, offset);
}
}  // namespace

void Lowering::lower_count(const Call &, const MapDesc &map, llvm::Value *key) {
  upsert(
      map, key,
      [&](llvm::Value *v) { b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), v), b_.getInt64(1)), v); },
      [&](llvm::Value *v) { b_.CreateStore(b_.getInt64(1), v); });
}

void Lowering::lower_sum(const Call &call, const MapDesc &map, llvm::Value *key) {
  llvm::Value *x = lower_expr(*call.args[0]);
  upsert(
      map, key,
      [&](llvm::Value *v) { b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), v), x), v); },
      [&](llvm::Value *v) { b_.CreateStore(x, v); });
}

// min/max values are {value, has_value}: a CPU that never saw the key has a zeroed slot.
static void lower_extremum(Lowering &, IRBuilderBPF &b, llvm::Value *x, bool is_signed, bool is_min,
                           const std::function<void(const std::function<void(llvm::Value *)> &,
                                                    const std::function<void(llvm::Value *)> &)> &upsert) {
  upsert(
      [&](llvm::Value *v) {
        llvm::Value *cur = b.CreateLoad(b.getInt64Ty(), field(b, v, 0));
        llvm::Value *has = b.CreateLoad(b.getInt64Ty(), field(b, v, 8));
        llvm::CmpInst::Predicate p =
            is_min ? (is_signed ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_ULT)
                   : (is_signed ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_UGT);
        llvm::Value *take = b.CreateOr(b.CreateICmpEQ(has, b.getInt64(0)), b.CreateICmp(p, x, cur));
        b.CreateStore(b.CreateSelect(take, x, cur), field(b, v, 0));
        b.CreateStore(b.getInt64(1), field(b, v, 8));
      },
      [&](llvm::Value *v) {
        b.CreateStore(x, field(b, v, 0));
        b.CreateStore(b.getInt64(1), field(b, v, 8));
      });
}

void Lowering::lower_min(const Call &call, const MapDesc &map, llvm::Value *key) {
  llvm::Value *x = lower_expr(*call.args[0]);
  lower_extremum(*this, b_, x, map.value.is_signed, true,
                 [&](auto &update, auto &init) { upsert(map, key, update, init); });
}

void Lowering::lower_max(const Call &call, const MapDesc &map, llvm::Value *key) {
  llvm::Value *x = lower_expr(*call.args[0]);
  lower_extremum(*this, b_, x, map.value.is_signed, false,
                 [&](auto &update, auto &init) { upsert(map, key, update, init); });
}

// avg and stats keep {total, count}.
void Lowering::lower_avg(const Call &call, const MapDesc &map, llvm::Value *key) {
  llvm::Value *x = lower_expr(*call.args[0]);
  upsert(
      map, key,
      [&](llvm::Value *v) {
        llvm::Value *total = field(b_, v, 0), *count = field(b_, v, 8);
        b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), total), x), total);
        b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), count), b_.getInt64(1)), count);
      },
      [&](llvm::Value *v) {
        b_.CreateStore(x, field(b_, v, 0));
        b_.CreateStore(b_.getInt64(1), field(b_, v, 8));
      });
}

void Lowering::lower_stats(const Call &call, const MapDesc &map, llvm::Value *key) {
  lower_avg(call, map, key);
}

llvm::Value *Lowering::hist_key(const MapDesc &map, llvm::Value *key, llvm::Value *bucket) {
  if (map.is_array())
    b_.store_int(key, bucket, 4);
  else
    b_.CreateStore(bucket, b_.byte_ptr(key, map.bucket_offset()));
  return key;
}

// Bucket 0 is (..., 0), 1 is [0], 2 is [1], and 2 + k is [2^k, 2^(k+1)).
// A binary search over the bit length, `if (v >= 2^s) { v >>= s; log += s; }` for s = 32, 16,
// ..., 1, written as BPF assembly: three instructions a step. Left to LLVM, each step becomes
// two selects, which BPF (no conditional moves) lowers back into two branches each, and a
// search spelled as IR branches costs the compiler a dozen basic blocks per histogram.
llvm::Value *Lowering::log2_bucket(llvm::Value *value, bool is_signed) {
  std::string search = "$0 = 2\n"
                       "$2 = 0x100000000 ll\n"
                       "if $1 < $2 goto +2\n"
                       "$1 >>= 32\n"
                       "$0 += 32\n";
  for (unsigned shift : {16u, 8u, 4u, 2u})
    search += "if $1 < " + std::to_string(1u << shift) + " goto +2\n$1 >>= " +
              std::to_string(shift) + "\n$0 += " + std::to_string(shift) + "\n";
  search += "if $1 < 2 goto +1\n$0 += 1\n";
  constexpr int kSearchSlots = 20;  // instruction slots above (the ll load takes two)
  // Settled before the search: negative (when signed) → 0, zero → 1.
  std::string text = "$0 = 1\nif $1 == 0 goto +" + std::to_string(kSearchSlots) + "\n" + search;
  if (is_signed)
    text = "$0 = 0\nif $1 s< 0 goto +" + std::to_string(kSearchSlots + 2) + "\n" + text;
  llvm::Type *i64 = b_.getInt64Ty();
  auto *result = llvm::StructType::get(i64, i64, i64);
  auto *asm_fn = llvm::InlineAsm::get(llvm::FunctionType::get(result, {i64}, false), text,
                                      "=&r,=r,=&r,1", /*hasSideEffects=*/false);
  return b_.CreateExtractValue(b_.CreateCall(asm_fn, {value}), 0);
}

// Bucket 0 is (..., min), 1..n are [min + (i-1)*step, min + i*step), n+1 is [max, ...).
llvm::Value *Lowering::linear_bucket(llvm::Value *value, const Type &t) {
  uint64_t n = static_cast<uint64_t>((t.lhist_max - t.lhist_min + t.lhist_step - 1) / t.lhist_step);
  llvm::Value *below = b_.CreateICmpSLT(value, b_.getInt64(t.lhist_min));
  llvm::Value *above = b_.CreateICmpSGE(value, b_.getInt64(t.lhist_max));
  // Only used when min <= value < max, so the unsigned division is exact.
  llvm::Value *inside = b_.CreateAdd(
      b_.CreateUDiv(b_.CreateSub(value, b_.getInt64(t.lhist_min)), b_.getInt64(t.lhist_step)),
      b_.getInt64(1));
  return b_.CreateSelect(below, b_.getInt64(0), b_.CreateSelect(above, b_.getInt64(n + 1), inside));
}

void Lowering::lower_hist(const Call &call, const MapDesc &map, llvm::Value *key) {
  llvm::Value *x = lower_expr(*call.args[0]);
  llvm::Value *bucket = log2_bucket(x, type_of(call.args[0]).is_signed);
  if (uint32_t k = map.value.hist_k) {
    // Bucket 2 + (l << k) + sub for x in [2^l, 2^(l+1)), sub the k bits below x's top bit
    // (shifted up when l < k: then some sub-buckets stay empty). Buckets 0 and 1 as for k = 0.
    llvm::Value *l = b_.CreateSub(bucket, b_.getInt64(2));
    llvm::Value *rest = b_.CreateXor(x, b_.CreateShl(b_.getInt64(1), l));  // x without its top bit
    llvm::Value *high = b_.CreateICmpUGE(l, b_.getInt64(k));
    llvm::Value *down = b_.CreateLShr(rest, b_.CreateSub(l, b_.getInt64(k)));
    llvm::Value *up = b_.CreateShl(rest, b_.CreateSub(b_.getInt64(k), l));
    llvm::Value *sub = b_.CreateSelect(high, down, up);
    llvm::Value *fine = b_.CreateAdd(b_.CreateAdd(b_.CreateShl(l, k), sub), b_.getInt64(2));
    bucket = b_.CreateSelect(b_.CreateICmpUGE(bucket, b_.getInt64(2)), fine, bucket);
  }
  hist_key(map, key, bucket);
  lower_count(call, map, key);
}

void Lowering::lower_lhist(const Call &call, const MapDesc &map, llvm::Value *key) {
  llvm::Value *x = lower_expr(*call.args[0]);
  hist_key(map, key, linear_bucket(x, map.value));
  lower_count(call, map, key);
}

}  // namespace rbt::codegen
