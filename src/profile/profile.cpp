#include "profile.h"

namespace rbt::profile {

uint32_t Profile::intern(const Frame &frame) {
  auto [it, added] = index_.emplace(frame, static_cast<uint32_t>(frames.size()));
  if (added)
    frames.push_back(frame);
  return it->second;
}

}  // namespace rbt::profile

namespace rbt::profile {

std::string frame_text(const Frame &frame) {
  std::string name = frame.name.empty() ? "[unknown]" : frame.name;
  switch (frame.kind) {
  case FrameKind::Ruby:
    if (frame.file.empty())
      return name;
    return name + " (" + frame.file + ":" + std::to_string(frame.line) + ")";
  case FrameKind::RubyCfunc: return name + " <cfunc>";
  default: return name;
  }
}

int64_t total_value(const Profile &profile, size_t index) {
  int64_t total = 0;
  for (const Sample &s : profile.samples)
    if (index < s.values.size())
      total += s.values[index];
  return total;
}

}  // namespace rbt::profile
