#pragma once
// The text output of maps, as bpftrace prints them at exit.

#include <cstdio>
#include <vector>

#include "maps.h"

namespace rbt::output {

// Prints one map: `@name: v`, `@name[k1, k2]: v` per entry, or a histogram per key.
void print_map_text(std::FILE *out, runtime::MapSnapshot &snapshot);

// Sorts entries the way bpftrace prints them: by value for count/sum/min/max/integers, by
// average for avg/stats, by key otherwise.
void sort_entries(runtime::MapSnapshot &snapshot);

}  // namespace rbt::output
