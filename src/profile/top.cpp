// A `go tool pprof -top`-style table: one row per function (or per file:line with --lines),
// flat = samples whose leaf it is, cum = samples with it anywhere on the stack (counted once
// per sample even when it recurses). The flat column sums to the total exactly: a sample with
// no frames is counted on a row of its own.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>

#include "writers.h"

namespace rbt::profile {

namespace {

std::string row_name(const Frame &f, bool lines) {
  std::string name = f.name;
  if (f.kind == FrameKind::Kernel)
    name += " [kernel]";
  if (!f.file.empty())
    name += lines ? " " + f.file + ":" + std::to_string(f.line) : " " + f.file;
  else if (lines && !f.module.empty() && f.kind == FrameKind::Native)
    name += " " + f.module;
  return name;
}

std::string percent(int64_t part, int64_t total) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.2f%%", total ? 100.0 * static_cast<double>(part) / total : 0.0);
  return buf;
}

}  // namespace

std::optional<std::string> write_top(const std::vector<Profile> &profiles, std::string &out,
                                     const WriteOptions &options) {
  for (const Profile &p : profiles) {
    struct Row {
      int64_t flat = 0, cum = 0;
    };
    std::map<std::string, Row> rows;
    int64_t total = 0;
    std::vector<std::string> names(p.frames.size());
    for (size_t i = 0; i < p.frames.size(); i++)
      names[i] = row_name(p.frames[i], options.lines);
    for (const Sample &s : p.samples) {
      int64_t v = s.values.empty() ? 1 : s.values[0];
      total += v;
      if (s.stack.empty()) {
        rows["[no stack]"].flat += v;
        rows["[no stack]"].cum += v;
        continue;
      }
      rows[names[s.stack.back()]].flat += v;
      // By name: a C method's Ruby frame and its C function's native frame (`deflate` both,
      // in a mixed stack) are one row, counted once per sample.
      std::set<std::string_view> seen;
      for (uint32_t f : s.stack)
        if (seen.insert(names[f]).second)
          rows[names[f]].cum += v;
    }
    std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
      if (a.second.flat != b.second.flat)
        return a.second.flat > b.second.flat;
      return a.second.cum > b.second.cum;
    });
    const char *unit = p.value_types.empty() ? "samples" : p.value_types[0].type.c_str();
    char line[512];
    if (profiles.size() > 1)
      out += p.name + ":\n";
    snprintf(line, sizeof(line), "Total: %" PRId64 " %s", total, unit);
    out += line;
    if (p.lost)
      out += " (" + std::to_string(p.lost) + " lost)";
    out += "\n";
    snprintf(line, sizeof(line), "%10s %7s %7s %10s %7s  %s\n", "flat", "flat%", "sum%", "cum",
             "cum%", options.lines ? "line" : "function");
    out += line;
    int64_t sum = 0;
    for (const auto &[name, row] : sorted) {
      sum += row.flat;
      snprintf(line, sizeof(line), "%10" PRId64 " %7s %7s %10" PRId64 " %7s  ", row.flat,
               percent(row.flat, total).c_str(), percent(sum, total).c_str(), row.cum,
               percent(row.cum, total).c_str());
      out += line + name + "\n";
    }
  }
  return std::nullopt;
}

}  // namespace rbt::profile
