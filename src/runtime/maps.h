#pragma once
// Reading a script's maps out of the kernel. Per-CPU aggregations are merged here, and
// histograms regrouped from (key, bucket) entries into one bucket array per key, so the output
// formatters only see finished values.

#include <bpf/libbpf.h>

#include <cstdint>
#include <vector>

#include "manifest.h"
#include "result.h"

namespace rbt::runtime {

struct MapEntry {
  std::vector<uint8_t> key;  // the user key's bytes (empty for a map without keys)
  // count/sum: one u64. min/max: {value, has_value}. avg/stats: {total, count}.
  // hist/lhist: one u64 count per bucket. tseries: {u64 epoch, u64 value} per interval slot the
  // key has used, in order of epoch (epoch 0: a slot zero() cleared). Otherwise the stored
  // value's bytes.
  std::vector<uint8_t> value;

  uint64_t u64(size_t index) const;
  int64_t i64(size_t index) const { return static_cast<int64_t>(u64(index)); }
};

struct MapSnapshot {
  const MapDesc *desc = nullptr;
  std::vector<MapEntry> entries;
};

Result<MapSnapshot> snapshot_map(const bpf_map *map, const MapDesc &desc);
// The entry a map without keys would hold if its value were zero (print() of an empty map).
MapEntry zero_entry(const MapDesc &desc);

// clear(@m): deletes every key. zero(@m): sets every value (every CPU's copy, every histogram
// bucket) to zero and keeps the keys, so they still print, with 0.
Status clear_map(const bpf_map *map, const MapDesc &desc);
Status zero_map(const bpf_map *map, const MapDesc &desc);

// Number of buckets of a hist (kHistBuckets) or lhist (from its parameters) map value.
size_t bucket_count(const Type &value);

}  // namespace rbt::runtime
