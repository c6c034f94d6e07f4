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

std::string hist_bucket_label(size_t index) {
  if (index == 0)
    return "(..., 0)";
  if (index == 1)
    return "[0]";
  if (index == 2)
    return "[1]";
  unsigned k = static_cast<unsigned>(index - 2);
  return "[" + power_of_two(k) + ", " + power_of_two(k + 1) + ")";
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
    std::string label = t.kind == TypeKind::Hist ? hist_bucket_label(i)
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
