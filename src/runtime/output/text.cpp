#include "text.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "histogram.h"
#include "tseries.h"
#include "value_format.h"
#include "warnings.h"

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
  // A tuple key prints as its elements: @m[1, a], not @m[(1, a)]; a record key stays whole.
  if (d.key.is_tuple() && !d.key.is_named_tuple())
    k = k.substr(1, k.size() - 2);
  return d.name + "[" + k + "]";
}

// `v / div` in the signedness of `is_signed`; div 0 is treated as 1 (nothing to divide by).
std::string divided(int64_t v, bool is_signed, uint64_t div) {
  if (div == 0)
    div = 1;
  if (is_signed)
    return std::to_string(div > static_cast<uint64_t>(INT64_MAX) ? 0 : v / static_cast<int64_t>(div));
  return std::to_string(static_cast<uint64_t>(v) / div);
}

int64_t average(const MapEntry &e) {
  return e.u64(1) ? e.i64(0) / static_cast<int64_t>(e.u64(1)) : 0;
}

std::string format_entry_value(const MapDesc &d, const MapEntry &e, uint64_t div) {
  const Type &t = d.value;
  switch (t.kind) {
  case TypeKind::Stats: {
    StatsValue s = entry_stats(d, e, div);
    return "{ .count = " + s.count + ", .average = " + s.average + ", .total = " + s.total + " }";
  }
  case TypeKind::Count:
  case TypeKind::Sum:
  case TypeKind::Min:
  case TypeKind::Max:
  case TypeKind::Avg:
    return entry_number(d, e, div);
  case TypeKind::Int:  // an enum's value prints as its name (format_value)
    return t.enum_name.empty() || div > 1 ? entry_number(d, e, div) : format_value(t, e.value.data());
  default:
    return format_value(t, e.value.data());
  }
}

}  // namespace

std::string entry_number(const MapDesc &d, const MapEntry &e, uint64_t div) {
  const Type &t = d.value;
  switch (t.kind) {
  case TypeKind::Count:
    return divided(e.i64(0), false, div);
  case TypeKind::Avg:
    return divided(average(e), true, div);
  case TypeKind::Int:
    return divided(load_int(t, e.value.data()), t.is_signed, div);
  default:  // sum, min, max keep the signedness of their argument
    return divided(e.i64(0), t.is_signed, div);
  }
}

StatsValue entry_stats(const MapDesc &, const MapEntry &e, uint64_t div) {
  return {std::to_string(e.i64(1)), divided(average(e), true, div), std::to_string(e.i64(0))};
}

std::vector<uint64_t> entry_buckets(const MapDesc &d, const MapEntry &e) {
  std::vector<uint64_t> buckets(runtime::bucket_count(d.value));
  for (size_t i = 0; i < buckets.size(); i++)
    buckets[i] = e.u64(i);
  return buckets;
}

void sort_entries(MapSnapshot &snap) {
  const MapDesc &d = *snap.desc;
  auto &entries = snap.entries;
  if (entries.size() < 2)
    return;
  // What the order compares, read once per entry into one array: comparing the entries
  // themselves chased two heap pointers per side, and the cache misses were most of printing
  // a 100,000-key map.
  struct Rank {
    int64_t value;  // value_rank, when entries sort by value first
    int64_t key;    // an integer key
    uint32_t index;
  };
  bool is_signed = false;
  bool by_value = value_rank(d, entries[0], is_signed).has_value();
  bool int_key = !d.key.is_none() && d.key.is_int();
  std::vector<Rank> ranks(entries.size());
  for (size_t i = 0; i < entries.size(); i++) {
    bool s = false;
    ranks[i] = {by_value ? *value_rank(d, entries[i], s) : 0,
                int_key ? load_int(d.key, entries[i].key.data()) : 0, static_cast<uint32_t>(i)};
  }
  std::stable_sort(ranks.begin(), ranks.end(), [&](const Rank &a, const Rank &b) {
    if (by_value && a.value != b.value)
      return is_signed ? a.value < b.value
                       : static_cast<uint64_t>(a.value) < static_cast<uint64_t>(b.value);
    if (int_key)
      return a.key < b.key;
    return entries[a.index].key < entries[b.index].key;
  });
  std::vector<MapEntry> sorted;
  sorted.reserve(entries.size());
  for (const Rank &r : ranks)
    sorted.push_back(std::move(entries[r.index]));
  entries = std::move(sorted);
}

void keep_top(MapSnapshot &snap, uint64_t top) {
  if (top == 0 || snap.desc->value.kind == TypeKind::Stats || snap.entries.size() <= top)
    return;
  snap.entries.erase(snap.entries.begin(),
                     snap.entries.end() - static_cast<std::ptrdiff_t>(top));
}

void print_map_text(std::FILE *out, MapSnapshot &snap, uint64_t top, uint64_t div) {
  const MapDesc &d = *snap.desc;
  sort_entries(snap);
  keep_top(snap, top);
  if (d.value.kind == TypeKind::TSeries) {
    auto points = tseries_points(snap);
    for (size_t i = 0; i < snap.entries.size(); i++)
      fprintf(out, "%s:\n%s\n", format_key(d, snap.entries[i]).c_str(),
              format_tseries(d.value, points[i]).c_str());
    return;
  }
  for (const MapEntry &e : snap.entries) {
    std::string name = format_key(d, e);
    if (d.value.is_histogram()) {
      fprintf(out, "%s:\n%s\n", name.c_str(),
              format_histogram(d.value, entry_buckets(d, e), div).c_str());
      continue;
    }
    fprintf(out, "%s: %s\n", name.c_str(), format_entry_value(d, e, div).c_str());
  }
  // bpftrace separates avg and stats maps from what follows with an empty line.
  if (d.value.kind == TypeKind::Avg || d.value.kind == TypeKind::Stats)
    fputc('\n', out);
}

void TextWriter::attached_probes(size_t count) {
  if (!quiet_)
    fprintf(stderr, "Attached %zu probe%s\n", count, count == 1 ? "" : "s");
}

void TextWriter::message(MessageKind kind, const std::string &text) {
  fwrite(text.data(), 1, text.size(), out_);
  if (kind == MessageKind::Join)  // a line of its own in text; bare text in JSON's "data"
    fputc('\n', out_);
}

void TextWriter::value(const Type &type, const uint8_t *bytes) {
  fprintf(out_, "%s\n", format_value(type, bytes).c_str());
}

void TextWriter::map(MapSnapshot &snapshot, uint64_t top, uint64_t div) {
  // print() of an empty map is an empty line in bpftrace (the map's lines, then a newline).
  if (snapshot.entries.empty()) {
    fputc('\n', out_);
    return;
  }
  print_map_text(out_, snapshot, top, div);
}

void TextWriter::exit_maps_begin() { fputs("\n\n", out_); }

// bpftrace's table: names in a column of at least 40 characters, times in one of 15.
void TextWriter::benchmark_result(const std::vector<std::string> &names, size_t index,
                                  uint64_t average_ns, uint64_t iters) {
  size_t width = 40;
  for (const std::string &n : names)
    width = std::max(width, n.size());
  if (index == 0) {
    fprintf(out_, "%-*s%-15s%s\n", static_cast<int>(width + 1), "Benchmark", "Time(ns)",
            "Iterations");
    fprintf(out_, "%s\n", std::string(width + 1 + 15 + 10, '-').c_str());
  }
  fprintf(out_, "%-*s%-15llu%llu\n", static_cast<int>(width + 1), names[index].c_str(),
          static_cast<unsigned long long>(average_ns), static_cast<unsigned long long>(iters));
}

void TextWriter::helper_error(const HelperError &e) {
  fprintf(stderr, "%s:%u:%u: WARNING: Failed to %s: %s (%lld)\n", e.file.c_str(), e.line, e.col,
          e.helper.c_str(), strerror(static_cast<int>(-e.retcode)),
          static_cast<long long>(e.retcode));
}

void TextWriter::lost_events(uint64_t count) {
  fprintf(stderr, "Lost %llu events\n", static_cast<unsigned long long>(count));
}

void TextWriter::map_updates_dropped(const std::string &map, uint64_t count, uint64_t max_keys) {
  if (warnings_suppressed)
    return;
  fprintf(stderr, "rbt: warning: %s: %llu update%s dropped, map full (max_map_keys=%llu)\n",
          map.c_str(), static_cast<unsigned long long>(count), count == 1 ? "" : "s",
          static_cast<unsigned long long>(max_keys));
}

}  // namespace rbt::output
