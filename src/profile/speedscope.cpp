// speedscope's JSON file format (https://www.speedscope.app/file-format-schema.json): frames
// shared by every profile, then one `sampled` profile per map, each sample a list of frame
// indices root first with its weight. Written by hand in a fixed order, so equal profiles
// give identical bytes.
#include <map>
#include <tuple>

#include "json_text.h"
#include "writers.h"

namespace rbt::profile {

namespace {

// speedscope's units; anything else (counts included) is "none".
const char *speedscope_unit(const std::string &unit) {
  for (const char *u : {"nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"})
    if (unit == u)
      return u;
  return "none";
}

struct SharedFrame {
  std::string name, file;
  uint32_t line;
  auto operator<=>(const SharedFrame &) const = default;
};

SharedFrame shared_frame(const Frame &f) {
  // A Ruby frame keeps its label as the name and its path and line as speedscope's own fields;
  // others are named as in the flamegraph formats, with their binary as the file.
  if (f.kind == FrameKind::Ruby)
    return {f.name.empty() ? "[unknown]" : f.name, f.file, f.line};
  if (f.kind == FrameKind::Native || f.kind == FrameKind::Kernel)
    return {frame_text(f), f.module, 0};
  return {frame_text(f), "", 0};
}

}  // namespace

std::optional<std::string> write_speedscope(const std::vector<Profile> &profiles,
                                            std::string &out) {
  std::map<SharedFrame, uint32_t> index;
  std::vector<const SharedFrame *> frames;
  std::vector<std::vector<uint32_t>> remap(profiles.size());
  for (size_t p = 0; p < profiles.size(); p++) {
    for (const Frame &f : profiles[p].frames) {
      auto [it, added] = index.emplace(shared_frame(f), static_cast<uint32_t>(frames.size()));
      if (added)
        frames.push_back(&it->first);
      remap[p].push_back(it->second);
    }
  }

  out += "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",";
  out += "\"exporter\":\"rbt\",\"name\":";
  append_json_string(out, profiles.empty() ? std::string("rbt") : profiles[0].name);
  out += ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[";
  for (size_t i = 0; i < frames.size(); i++) {
    out += i ? ",{\"name\":" : "{\"name\":";
    append_json_string(out, frames[i]->name);
    if (!frames[i]->file.empty()) {
      out += ",\"file\":";
      append_json_string(out, frames[i]->file);
    }
    if (frames[i]->line) {
      out += ",\"line\":";
      out += std::to_string(frames[i]->line);
    }
    out += '}';
  }
  out += "]},\"profiles\":[";
  for (size_t p = 0; p < profiles.size(); p++) {
    const Profile &prof = profiles[p];
    std::string unit = prof.value_types.empty() ? "" : prof.value_types[0].unit;
    std::string samples, weights;
    int64_t total = 0;
    for (const Sample &s : prof.samples) {
      // Weights must be positive and a sample needs a frame.
      if (s.values.empty() || s.values[0] <= 0 || s.stack.empty())
        continue;
      samples += samples.empty() ? "[" : ",[";
      for (size_t i = 0; i < s.stack.size(); i++) {
        if (i)
          samples += ',';
        samples += std::to_string(remap[p][s.stack[i]]);
      }
      samples += ']';
      if (!weights.empty())
        weights += ',';
      weights += std::to_string(s.values[0]);
      total += s.values[0];
    }
    out += p ? ",{" : "{";
    out += "\"type\":\"sampled\",\"name\":";
    append_json_string(out, prof.name);
    out += ",\"unit\":\"";
    out += speedscope_unit(unit);
    out += "\",\"startValue\":0,\"endValue\":" + std::to_string(total);
    out += ",\"samples\":[" + samples + "],\"weights\":[" + weights + "]}";
  }
  out += "]}\n";
  return std::nullopt;
}

}  // namespace rbt::profile
