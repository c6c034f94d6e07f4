#pragma once
// What rbt's Firefox (Gecko) profile files share between the writer (firefox.cpp) and the
// reader (firefox_reader.cpp): the Gecko format version written, the category list (frames and
// markers are coloured by it, and the reader maps categories back to frame kinds), and the
// names of rbt's own additions, which the Firefox Profiler ignores.

#include <cstdint>
#include <optional>
#include <string>

#include "profile.h"

namespace rbt::profile::firefox {

// Gecko profile format version 27: frameTable without `optimizations` (the profiler upgrades
// older versions itself; see docs-developer/CHANGELOG-formats.md in its repository).
constexpr int kGeckoVersion = 27;

struct Category {
  const char *name;
  const char *color;  // one of the profiler's colour names
};
// Index = the category number in the file. Frames: Ruby..Other; markers: Scheduler..User.
inline constexpr Category kCategories[] = {
    {"Other", "grey"},           {"Ruby", "red"},   {"Ruby C method", "orange"},
    {"Native", "blue"},          {"Kernel", "yellow"}, {"Idle", "transparent"},
    {"Scheduler", "purple"},     {"IO", "green"},   {"Memory", "brown"},
    {"GC", "magenta"},           {"User", "lightblue"},
};
constexpr uint32_t kCategoryCount = sizeof(kCategories) / sizeof(kCategories[0]);

uint32_t frame_category(FrameKind kind);
// The frame kind a frame category stands for (Other → Native for files not written by rbt).
FrameKind kind_of_category(uint32_t category);
// A marker's category ("Scheduler", "IO", "Memory", "GC", "User"; else Other).
uint32_t marker_category(const std::string &name);

// A marker's schema name: its name without characters other than letters and digits.
std::string marker_type(const std::string &name);

// rbt's additions: meta[kMetaKey] holds lost, period and duration; each thread's kFramesKey
// lists its frames exactly (kind, name, file, line, module), parallel to its frameTable.
inline constexpr const char *kMetaKey = "rbt";
inline constexpr const char *kFramesKey = "rbtFrames";
// Each thread's kSampleCpusKey: the CPU of each sample, parallel to its samples.
inline constexpr const char *kSampleCpusKey = "rbtSampleCpus";

const char *kind_name(FrameKind kind);
std::optional<FrameKind> kind_from_name(const std::string &name);

}  // namespace rbt::profile::firefox
