#include "histogram.h"

#include <algorithm>
#include <cstdio>

namespace rbt::output {

namespace {
// 2^power with a K/M/G/T/P/E suffix for powers of 1024, as bpftrace prints bucket bounds.
std::string power_of_two(unsigned power) {
  static const char *suffix[] = {"", "K", "M", "G", "T", "P", "E"};
  unsigned unit = power / 10;
  return std::to_string(1ull << (power - unit * 10)) + suffix[unit];
}
}  // namespace

namespace {
// A bound as bpftrace prints it: with a K/M/G/... suffix when a multiple of that power of 1024.
std::string bound(uint64_t v) {
  static const char *suffix[] = {"", "K", "M", "G", "T", "P", "E"};
  int unit = 0;
  while (unit < 6 && v && v % 1024 == 0) {
    v /= 1024;
    unit++;
  }
  return std::to_string(v) + suffix[unit];
}
}  // namespace

HistRange hist_bucket_range(size_t index, uint32_t k) {
  uint64_t i = index - 2, l = i >> k, sub = i & ((1ull << k) - 1);
  if (l >= 64)
    return {false, 0, 0};
  if (l < k) {  // sub holds the value's bits below the top one, shifted up by k - l
    uint64_t step = 1ull << (k - l);
    if (sub % step)
      return {false, 0, 0};
    uint64_t v = (1ull << l) + sub / step;
    return {true, v, v};
  }
  uint64_t width = 1ull << (l - k), lo = (1ull << l) + sub * width;
  return {true, lo, lo + width - 1};
}

std::string hist_bucket_label(size_t index, uint32_t k) {
  if (index == 0)
    return "(..., 0)";
  if (index == 1)
    return "[0]";
  if (index == 2)
    return "[1]";
  if (k == 0) {
    unsigned p = static_cast<unsigned>(index - 2);
    return "[" + power_of_two(p) + ", " + power_of_two(p + 1) + ")";
  }
  HistRange r = hist_bucket_range(index, k);
  if (r.lo == r.hi)
    return "[" + bound(r.lo) + "]";
  // The top bucket ends at 2^64, which no uint64 holds.
  return "[" + bound(r.lo) + ", " + (r.hi == UINT64_MAX ? std::string("16E") : bound(r.hi + 1)) + ")";
}

std::string lhist_bucket_label(const Type &t, size_t index, size_t count) {
  if (index == 0)
    return "(..., " + std::to_string(t.lhist_min) + ")";
  if (index == count - 1)
    return "[" + std::to_string(t.lhist_max) + ", ...)";
  int64_t lo = t.lhist_min + static_cast<int64_t>(index - 1) * t.lhist_step;
  int64_t hi = std::min(lo + t.lhist_step, t.lhist_max);
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
}

std::string format_histogram(const Type &t, const std::vector<uint64_t> &buckets, uint64_t div) {
  if (t.kind != TypeKind::Hist || div == 0)
    div = 1;
  size_t first = buckets.size(), last = 0;
  uint64_t max = 0;
  for (size_t i = 0; i < buckets.size(); i++) {
    if (!buckets[i])
      continue;
    first = std::min(first, i);
    last = i;
    max = std::max(max, buckets[i]);
  }
  std::string out;
  if (first == buckets.size())
    return out;
  for (size_t i = first; i <= last; i++) {
    if (t.kind == TypeKind::Hist && t.hist_k && i >= 2 && !hist_bucket_range(i, t.hist_k).exists)
      continue;
    std::string label = t.kind == TypeKind::Hist ? hist_bucket_label(i, t.hist_k)
                                                 : lhist_bucket_label(t, i, buckets.size());
    size_t bar = static_cast<size_t>(static_cast<unsigned __int128>(buckets[i]) * 52 / max);
    char row[64];
    snprintf(row, sizeof(row), "%-16s%8llu |", label.c_str(),
             static_cast<unsigned long long>(buckets[i] / div));
    out += row;
    out += std::string(bar, '@') + std::string(52 - bar, ' ') + "|\n";
  }
  return out;
}

}  // namespace rbt::output
