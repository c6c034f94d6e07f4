// The collapsed-stack format of flamegraph.pl, inferno and speedscope: one line per distinct
// stack, frames root first joined by ';', a space, then the value. Lines are sorted (byte
// order) and equal stacks merged, so equal profiles give identical files.
#include <map>

#include "writers.h"

namespace rbt::profile {

namespace {

// ';' separates frames and a newline ends the line: neither may appear inside a frame. A ';'
// becomes ':' (Ruby labels and C++ symbols keep their meaning), line breaks and tabs a space.
std::string folded_frame(const Frame &frame) {
  std::string text = frame_text(frame);
  for (char &c : text) {
    if (c == ';')
      c = ':';
    else if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  }
  return text;
}

}  // namespace

std::optional<std::string> write_folded(const std::vector<Profile> &profiles, std::string &out) {
  // Several maps in one file: each line starts with its map's name, so they stay apart.
  bool name_roots = profiles.size() > 1;
  std::map<std::string, int64_t> lines;
  for (const Profile &p : profiles) {
    std::vector<std::string> names(p.frames.size());
    for (size_t i = 0; i < p.frames.size(); i++)
      names[i] = folded_frame(p.frames[i]);
    for (const Sample &s : p.samples) {
      // Collapsed stacks hold positive counts only (flamegraph.pl skips the rest).
      if (s.values.empty() || s.values[0] <= 0 || (s.stack.empty() && !name_roots))
        continue;
      std::string line = name_roots ? p.name : std::string();
      for (uint32_t f : s.stack) {
        if (!line.empty())
          line += ';';
        line += names[f];
      }
      lines[line] += s.values[0];
    }
  }
  for (const auto &[line, value] : lines) {
    out += line;
    out += ' ';
    out += std::to_string(value);
    out += '\n';
  }
  return std::nullopt;
}

}  // namespace rbt::profile
