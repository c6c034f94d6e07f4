#pragma once
// The second half of an rbt run, from a compiled object on: load → BEGIN → attach → run → END
// → print → detach. Needs neither the parser nor LLVM, so `rbt` can start a cached object
// without them. Returns the process exit status.

#include "cache_entry.h"
#include "object_cache.h"
#include "options.h"

namespace rbt {

namespace runtime {
class Timeline;
}

// What the cache's lookup compares with an entry's record of its probes' binaries: what they
// resolve to through the -p process now (runtime::resolution_in_process).
cache::ObjectCache::Resolver resolves_in(const Options &options);

// `cache` keeps the minimal kernel BTF of the object's CO-RE relocations (runtime/core_btf.h)
// beside the objects; with the cache off libbpf reads the whole vmlinux BTF.
int run_object(const Options &options, const cache::CacheEntry &object,
               const cache::ObjectCache &cache, runtime::Timeline *timeline);

}  // namespace rbt
