#pragma once
// The text output of maps, as bpftrace prints them at exit and for print(@m, top, div), and
// the TextWriter that prints everything else in text.

#include <cstdio>
#include <string>
#include <vector>

#include "maps.h"
#include "writer.h"

namespace rbt::output {

// Prints one map: `@name: v`, `@name[k1, k2]: v` per entry, or a histogram per key. Sorts
// the entries, keeps the last `top` of them (0: all) and divides the values by `div`.
void print_map_text(std::FILE *out, runtime::MapSnapshot &snapshot, uint64_t top = 0,
                    uint64_t div = 1);

// Sorts entries the way bpftrace prints them: by value for count/sum/min/max/integers, by
// average for avg/stats, by key otherwise.
void sort_entries(runtime::MapSnapshot &snapshot);

// Drops all but the last `top` entries (the largest, once sorted); 0 keeps everything. Like
// bpftrace, top does not apply to stats maps.
void keep_top(runtime::MapSnapshot &snapshot, uint64_t top);

// The number an entry of a count/sum/min/max/avg or integer map stands for, divided by `div`,
// in decimal ("-3", "18446744073709551615"). Text and JSON print it the same way.
std::string entry_number(const MapDesc &desc, const runtime::MapEntry &entry, uint64_t div);

// Stats of an avg/stats entry; the average is divided by `div`.
struct StatsValue {
  std::string count, average, total;
};
StatsValue entry_stats(const MapDesc &desc, const runtime::MapEntry &entry, uint64_t div);

// Histogram counts of an entry of a hist/lhist map.
std::vector<uint64_t> entry_buckets(const MapDesc &desc, const runtime::MapEntry &entry);

class TextWriter : public Writer {
public:
  TextWriter(std::FILE *out, bool quiet) : Writer(out), quiet_(quiet) {}
  void attached_probes(size_t count) override;
  void message(MessageKind kind, const std::string &text) override;
  void value(const Type &type, const uint8_t *bytes) override;
  void map(runtime::MapSnapshot &snapshot, uint64_t top, uint64_t div) override;
  void exit_maps_begin() override;
  void benchmark_result(const std::vector<std::string> &names, size_t index, uint64_t average_ns,
                        uint64_t iters) override;
  void helper_error(const HelperError &e) override;
  void lost_events(uint64_t count) override;
  void map_updates_dropped(const std::string &map, uint64_t count, uint64_t max_keys) override;

private:
  bool quiet_;
};

}  // namespace rbt::output
