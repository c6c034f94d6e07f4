#pragma once
// What tracefs says exists: every tracepoint (category, event) and each event's fields. Used
// to expand `tracepoint:syscalls:sys_enter_*` and to list probes with `rbt -l` / `-lv`.

#include <string>
#include <vector>

#include "result.h"

namespace rbt::runtime {

struct TracepointName {
  std::string category;
  std::string event;
};

// Every tracepoint event, sorted by category then event (mounts tracefs when needed).
Result<std::vector<TracepointName>> tracepoint_events();

// The event's own fields as its format file declares them ("const char * filename"), without
// the common_ fields every event shares.
Result<std::vector<std::string>> tracepoint_fields(const std::string &category,
                                                   const std::string &event);

}  // namespace rbt::runtime
