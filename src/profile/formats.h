#pragma once
// The profile formats and the one entry point that writes a profile in any of them. Each
// format is one writer over the model (profile.h) in a file of its own (folded.cpp, pprof.cpp,
// speedscope.cpp, svg.cpp, firefox.cpp, top.cpp); this file only names them and dispatches.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile.h"

namespace rbt::profile {

enum class Format {
  Folded,      // flamegraph.pl's collapsed stacks: `root;...;leaf value`
  Pprof,       // gzipped perftools.profiles.Profile
  Speedscope,  // speedscope's JSON file format
  Svg,         // a self-contained interactive flamegraph
  Firefox,     // the Firefox Profiler's Gecko profile JSON, gzipped (`rbt record`'s file)
  Top,         // `go tool pprof -top`-style text table
};

// "folded", "pprof", "speedscope", "svg", "firefox", "text" (Top); nullopt otherwise.
std::optional<Format> format_from_name(std::string_view name);
// From a file name's extension: .folded, .pb.gz/.pprof, .speedscope.json, .svg,
// .json.gz (Firefox); nullopt when the extension names no profile format.
std::optional<Format> format_from_path(std::string_view path);
const char *format_name(Format format);

// Writes `profiles` (one per stack map, or one recorded profile) as `format` into `out`
// (bytes: pprof and Firefox files are gzipped). An error message when the format cannot hold
// them (e.g. pprof given profiles whose value types differ is written as one per file).
struct WriteOptions {
  bool lines = false;  // Top: by file:line instead of by function
};
std::optional<std::string> write_profiles(Format format, const std::vector<Profile> &profiles,
                                          std::string &out, const WriteOptions &options = {});

}  // namespace rbt::profile
