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

}  // namespace rbt::profile
