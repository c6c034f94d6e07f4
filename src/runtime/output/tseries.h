#pragma once
// tseries maps as bpftrace prints them. All keys of a map share one window of time: the last
// `intervals` intervals up to the latest one any key wrote. A key shows the intervals of the
// window from the first it has a value for; an interval without a value is a gap ("-" in
// text, left out in JSON). Text draws each key as a graph, a row per interval:
//
//                8                                                  10
//   hh:mm:ss.ms  |___________________________________________________|
//   10:00:00.500 |                         *                         | 9
//   ...
//                v___________________________________________________v
//                8                                                  10

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "maps.h"

namespace rbt::output {

struct TSeriesPoint {
  uint64_t start_ns;              // the interval's start, in nanoseconds since the Unix epoch
  std::optional<uint64_t> value;  // none: a gap (int64 when the tseries is signed)
};

// The points each entry of `snapshot` (a tseries map) shows, in the entries' order.
std::vector<std::vector<TSeriesPoint>> tseries_points(const runtime::MapSnapshot &snapshot);

// One entry's graph, ending in a newline, or "<no data>" (no newline) when it has no point.
std::string format_tseries(const Type &type, const std::vector<TSeriesPoint> &points);

// One entry's JSON: [{"interval_start":"1970-01-01 00:00:00.500000000","value":9},...].
std::string json_tseries(const Type &type, const std::vector<TSeriesPoint> &points);

}  // namespace rbt::output
