#include "text.h"

#include <algorithm>
#include <optional>

#include "histogram.h"
#include "value_format.h"

namespace rbt::output {

using runtime::MapEntry;
using runtime::MapSnapshot;

namespace {

// The sort key of an entry's value, or nullopt when entries sort by key.
std::optional<int64_t> value_rank(const MapDesc &d, const MapEntry &e, bool &is_signed) {
  const Type &t = d.value;
  is_signed = t.is_signed;
  switch (t.kind) {
  case TypeKind::Count:
  case TypeKind::Sum:
  case TypeKind::Min:
  case TypeKind::Max:
    return e.i64(0);
  case TypeKind::Avg:
  case TypeKind::Stats:
    is_signed = true;
    return e.u64(1) ? e.i64(0) / static_cast<int64_t>(e.u64(1)) : 0;
  case TypeKind::Int:
  case TypeKind::Bool:
    return load_int(t, e.value.data());
  default:
    return std::nullopt;
  }
}

std::string format_key(const MapDesc &d, const MapEntry &e) {
  if (d.key.is_none())
    return d.name;
  std::string k = format_value(d.key, e.key.data());
  if (d.key.is_tuple())  // a tuple key prints as its elements: @m[1, a], not @m[(1, a)]
    k = k.substr(1, k.size() - 2);
  return d.name + "[" + k + "]";
}

std::string format_signed(const Type &t, int64_t v) {
  return t.is_signed ? std::to_string(v) : std::to_string(static_cast<uint64_t>(v));
}

std::string format_entry_value(const MapDesc &d, const MapEntry &e) {
  const Type &t = d.value;
  switch (t.kind) {
  case TypeKind::Count:
    return std::to_string(e.u64(0));
  case TypeKind::Sum:
  case TypeKind::Min:
  case TypeKind::Max:
    return format_signed(t, e.i64(0));
  case TypeKind::Avg:
    return std::to_string(e.u64(1) ? e.i64(0) / static_cast<int64_t>(e.u64(1)) : 0);
  case TypeKind::Stats: {
    int64_t count = e.i64(1), total = e.i64(0);
    return "{ .count = " + std::to_string(count) +
           ", .average = " + std::to_string(count ? total / count : 0) +
           ", .total = " + std::to_string(total) + " }";
  }
  default:
    return format_value(t, e.value.data());
  }
}

}  // namespace

void sort_entries(MapSnapshot &snap) {
  const MapDesc &d = *snap.desc;
  std::stable_sort(snap.entries.begin(), snap.entries.end(), [&](const MapEntry &a, const MapEntry &b) {
    bool is_signed = false;
    auto ra = value_rank(d, a, is_signed), rb = value_rank(d, b, is_signed);
    if (ra && rb && *ra != *rb)
      return is_signed ? *ra < *rb : static_cast<uint64_t>(*ra) < static_cast<uint64_t>(*rb);
    if (!d.key.is_none() && d.key.is_int())
      return load_int(d.key, a.key.data()) < load_int(d.key, b.key.data());
    return a.key < b.key;
  });
}

void print_map_text(std::FILE *out, MapSnapshot &snap) {
  const MapDesc &d = *snap.desc;
  sort_entries(snap);
  for (const MapEntry &e : snap.entries) {
    std::string name = format_key(d, e);
    if (d.value.is_histogram()) {
      std::vector<uint64_t> buckets(runtime::bucket_count(d.value));
      for (size_t i = 0; i < buckets.size(); i++)
        buckets[i] = e.u64(i);
      fprintf(out, "%s:\n%s\n", name.c_str(), format_histogram(d.value, buckets).c_str());
      continue;
    }
    fprintf(out, "%s: %s\n", name.c_str(), format_entry_value(d, e).c_str());
  }
  // bpftrace separates avg and stats maps from what follows with an empty line.
  if (d.value.kind == TypeKind::Avg || d.value.kind == TypeKind::Stats)
    fputc('\n', out);
}

}  // namespace rbt::output
