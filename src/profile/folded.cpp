// The collapsed-stack format of flamegraph.pl, inferno and speedscope: one line per distinct
// stack, frames root first joined by ';', a space, then the value. Lines are sorted (by frame
// names) and equal stacks merged, so equal profiles give identical files.
#include <algorithm>
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
  // Frames are compared by their folded name's rank among all names: cheap to sort and merge
  // (100,000 stacks of 30 frames are 3 million frames), and deterministic.
  std::map<std::string, uint32_t> ranks;
  std::vector<std::vector<std::string>> names(profiles.size());
  for (size_t p = 0; p < profiles.size(); p++) {
    if (name_roots)
      ranks.emplace(profiles[p].name, 0);
    for (const Frame &f : profiles[p].frames)
      ranks.emplace(names[p].emplace_back(folded_frame(f)), 0);
  }
  std::vector<const std::string *> by_rank;
  for (auto &[name, rank] : ranks) {
    rank = static_cast<uint32_t>(by_rank.size());
    by_rank.push_back(&name);
  }
  struct Line {
    std::vector<uint32_t> frames;
    int64_t value;
  };
  std::vector<Line> lines;
  for (size_t p = 0; p < profiles.size(); p++) {
    std::vector<uint32_t> frame_rank;
    for (const std::string &n : names[p])
      frame_rank.push_back(ranks[n]);
    for (const Sample &s : profiles[p].samples) {
      // Collapsed stacks hold positive counts only (flamegraph.pl skips the rest).
      if (s.values.empty() || s.values[0] <= 0 || (s.stack.empty() && !name_roots))
        continue;
      Line line{{}, s.values[0]};
      line.frames.reserve(s.stack.size() + 1);
      if (name_roots)
        line.frames.push_back(ranks[profiles[p].name]);
      for (uint32_t f : s.stack)
        line.frames.push_back(frame_rank[f]);
      lines.push_back(std::move(line));
    }
  }
  std::sort(lines.begin(), lines.end(),
            [](const Line &a, const Line &b) { return a.frames < b.frames; });
  size_t bytes = 0;
  for (const Line &l : lines)
    for (uint32_t r : l.frames)
      bytes += by_rank[r]->size() + 1;
  out.reserve(out.size() + bytes + lines.size() * 12);
  for (size_t i = 0; i < lines.size();) {
    // Equal stacks (frames that differ only in what folded does not show) become one line.
    int64_t value = 0;
    size_t j = i;
    for (; j < lines.size() && lines[j].frames == lines[i].frames; j++)
      value += lines[j].value;
    for (size_t k = 0; k < lines[i].frames.size(); k++) {
      if (k)
        out += ';';
      out += *by_rank[lines[i].frames[k]];
    }
    out += ' ';
    out += std::to_string(value);
    out += '\n';
    i = j;
  }
  return std::nullopt;
}

}  // namespace rbt::profile
