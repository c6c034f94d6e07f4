#pragma once
// The second half of an rbt run, from a compiled object on: load → BEGIN → attach → run → END
// → print → detach. Needs neither the parser nor LLVM, so `rbt` can start a cached object
// without them. Returns the process exit status.

#include "cache_entry.h"
#include "options.h"

namespace rbt {

namespace runtime {
class Timeline;
}

int run_object(const Options &options, const cache::CacheEntry &object,
               runtime::Timeline *timeline);

}  // namespace rbt
