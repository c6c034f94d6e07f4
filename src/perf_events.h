#pragma once
// The perf software and hardware events that `software:` and `hardware:` probes name. The type
// checker validates names against this table; the runtime turns them into perf_event_attr.

#include <cstdint>
#include <span>
#include <string_view>

namespace rbt {

struct PerfEventInfo {
  const char *name;
  const char *alias;  // short spelling bpftrace also accepts, or null
  bool hardware;
  uint64_t config;    // PERF_COUNT_SW_* or PERF_COUNT_HW_*
  uint64_t default_count;
};

// The entry for `name` (or its alias) of the given family, or null.
const PerfEventInfo *find_perf_event(std::string_view name, bool hardware);

// Every known event, software first, for `rbt -l`.
std::span<const PerfEventInfo> perf_events();

}  // namespace rbt
