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
std::string hist_bucket_label(size_t index);                           // "[2, 4)", "[1K, 2K)"
std::string lhist_bucket_label(const Type &type, size_t index, size_t count);  // "[0, 5)"

}  // namespace rbt::output
