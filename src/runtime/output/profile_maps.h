#pragma once
// Stack maps as profiles (-f folded|pprof|speedscope|svg): each entry of a map whose key holds
// stacks (kstack, ustack, rstack, several in a tuple) and whose value is count() or sum()
// becomes a Sample. Key parts that are not stacks (comm, pid, strings, integers) become root
// Key frames and labels. Samples are merged and sorted by their frames, so equal maps give
// equal profiles whatever their stack ids were.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "maps.h"
#include "profile.h"

namespace rbt::output {

// Why `desc` cannot be written as a profile ("its values are hist(), not count() or sum()"),
// or nullopt when it can.
std::optional<std::string> profile_map_problem(const MapDesc &desc);

// The frames of one stack value, leaf first (the session's StackPrinter and RubyStacks).
using StackRecords =
    std::function<std::vector<profile::Frame>(const Type &, const uint8_t *)>;

// What the map does not know about the run: the sampling period and when it ran.
struct ProfileRun {
  profile::ValueType period_type;  // ("cpu", "nanoseconds") for one profile:hz probe
  int64_t period = 0;
  uint64_t start_ns = 0;  // wall clock
  uint64_t duration_ns = 0;
  std::string sum_unit = "count";  // sum() maps' unit (--sum-unit): rbt cannot tell by itself
};

// The profile of `snapshot` (profile_map_problem() must have accepted its map).
profile::Profile map_profile(const runtime::MapSnapshot &snapshot, const StackRecords &stacks,
                             const ProfileRun &run);

}  // namespace rbt::output
