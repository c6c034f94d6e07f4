// tseries(n, interval, intervals[, agg]) (sema/check_tseries.cpp). The map holds one per-CPU
// entry per (key, slot), slot = epoch % intervals where epoch = now / interval; an entry is
// {value, meta, epoch} (Type::tseries). A slot still holding an older epoch's value starts
// over. User space (runtime/maps.cpp) merges the CPUs' copies of each slot, keeping the latest
// epoch.

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

// CLOCK_TAI, as bpftrace files tseries values; with BPFTRACE_DUMMY_TS_MAP=@ts the value of the
// scalar map @ts instead (0 until set), so that tests choose the time.
llvm::Value *Lowering::tseries_now() {
  const std::string &name = sema_.config.dummy_ts_map;
  auto it = name.empty() ? sema_.maps.end() : sema_.maps.find(name);
  if (it == sema_.maps.end() || !it->second.key.is_none() || !it->second.value.is_int())
    return sw_tai_ns();
  const MapDesc &desc = resources_.map_desc(name);
  llvm::Value *key = value_slot(desc.user_key_size(), "ts_key");
  llvm::Value *found = b_.map_lookup(resources_.map_global(name), key);
  return load_or_zero(
      found, [&](llvm::Value *value) { return b_.load_int(value, desc.value.size, false); }, "ts");
}

void Lowering::lower_tseries(const Call &call, const MapDesc &map, llvm::Value *key) {
  const Type &t = map.value;
  llvm::Value *x = lower_expr(*call.args[0]);
  llvm::Value *now = tseries_now();
  llvm::Value *epoch = b_.CreateUDiv(now, b_.getInt64(t.tseries_interval_ns));
  hist_key(map, key, b_.CreateURem(epoch, b_.getInt64(t.tseries_intervals)));
  llvm::Type *i64 = b_.getInt64Ty();
  // A new entry is a zeroed slot (epoch 0) updated like any other.
  auto update = [&](llvm::Value *v) {
    llvm::Value *value = b_.byte_ptr(v, 0), *meta = b_.byte_ptr(v, 8), *at = b_.byte_ptr(v, 16);
    llvm::Value *current = b_.CreateICmpEQ(b_.CreateLoad(i64, at), epoch);
    llvm::Value *old = b_.CreateSelect(current, b_.CreateLoad(i64, value), b_.getInt64(0));
    llvm::Value *count = b_.CreateSelect(current, b_.CreateLoad(i64, meta), b_.getInt64(0));
    llvm::Value *new_value = x, *new_meta = now;  // Last: the latest write wins (meta: when)
    switch (t.tseries_agg) {
    case TSeriesAgg::Last:
      break;
    case TSeriesAgg::Sum:
      new_value = b_.CreateAdd(old, x);
      new_meta = b_.getInt64(0);
      break;
    case TSeriesAgg::Avg:  // meta counts the values
      new_value = b_.CreateAdd(old, x);
      new_meta = b_.CreateAdd(count, b_.getInt64(1));
      break;
    case TSeriesAgg::Min:
    case TSeriesAgg::Max: {  // meta: has a value
      bool min = t.tseries_agg == TSeriesAgg::Min;
      llvm::Value *better = min ? (t.is_signed ? b_.CreateICmpSLT(x, old) : b_.CreateICmpULT(x, old))
                                : (t.is_signed ? b_.CreateICmpSGT(x, old) : b_.CreateICmpUGT(x, old));
      llvm::Value *take = b_.CreateOr(b_.CreateICmpEQ(count, b_.getInt64(0)), better);
      new_value = b_.CreateSelect(take, x, old);
      new_meta = b_.getInt64(1);
      break;
    }
    }
    b_.CreateStore(new_value, value);
    b_.CreateStore(new_meta, meta);
    b_.CreateStore(epoch, at);
  };
  upsert(map, key, update, update);
}

}  // namespace rbt::codegen
