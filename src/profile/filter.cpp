#include "filter.h"

namespace rbt::profile {

void keep_ruby_frames(Profile &profile) {
  auto keep = [&](std::vector<uint32_t> &stack) {
    std::vector<uint32_t> out;
    for (uint32_t f : stack) {
      FrameKind k = profile.frames[f].kind;
      if (k == FrameKind::Ruby || k == FrameKind::RubyCfunc || k == FrameKind::Truncated)
        out.push_back(f);
    }
    stack = std::move(out);
  };
  for (Sample &s : profile.samples)
    keep(s.stack);
  for (Marker &m : profile.markers)
    keep(m.stack);
}

}  // namespace rbt::profile
