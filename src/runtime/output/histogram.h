#pragma once
// bpftrace's histogram text: a row per bucket from the first to the last non-empty one,
//   label (16 wide, left)  count (8 wide, right) |@@@@ (52 columns, scaled to the max) |

#include <cstdint>
#include <string>
#include <vector>

#include "types.h"

namespace rbt::output {

// `buckets` as laid out by codegen: hist has kHistBuckets, lhist n + 2 (below, n, above).
// print(@h, top, div): a hist's counts are shown divided by `div` (the bars keep their
// undivided lengths); an lhist ignores `div`, as in bpftrace.
std::string format_histogram(const Type &type, const std::vector<uint64_t> &buckets,
                             uint64_t div = 1);
std::string hist_bucket_label(size_t index, uint32_t k = 0);           // "[2, 4)", "[1K, 2K)"

// The values bucket `index` (>= 2) of a hist(n, k) holds: [lo, hi] (hi inclusive). `exists` is
// false for the sub-buckets no value reaches (below 2^k a power of two has fewer values than
// sub-buckets).
struct HistRange {
  bool exists;
  uint64_t lo, hi;
};
HistRange hist_bucket_range(size_t index, uint32_t k);
std::string lhist_bucket_label(const Type &type, size_t index, size_t count);  // "[0, 5)"

}  // namespace rbt::output
