#include "profile.h"

namespace rbt::profile {

uint32_t Profile::intern(const Frame &frame) {
  auto [it, added] = index_.emplace(frame, static_cast<uint32_t>(frames.size()));
  if (added)
    frames.push_back(frame);
  return it->second;
}

}  // namespace rbt::profile
