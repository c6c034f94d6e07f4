#include "firefox_format.h"

#include <cctype>

namespace rbt::profile::firefox {

namespace {
struct KindInfo {
  FrameKind kind;
  const char *name;
  uint32_t category;
};
constexpr KindInfo kKinds[] = {
    {FrameKind::Ruby, "ruby", 1},   {FrameKind::RubyCfunc, "cfunc", 2},
    {FrameKind::Native, "native", 3}, {FrameKind::Kernel, "kernel", 4},
    {FrameKind::Key, "key", 0},     {FrameKind::Truncated, "truncated", 0},
};
}  // namespace

uint32_t frame_category(FrameKind kind) {
  for (const auto &k : kKinds)
    if (k.kind == kind)
      return k.category;
  return 0;
}

FrameKind kind_of_category(uint32_t category) {
  for (const auto &k : kKinds)
    if (k.category == category && category != 0)
      return k.kind;
  return FrameKind::Native;
}

uint32_t marker_category(const std::string &name) {
  for (uint32_t i = 6; i < kCategoryCount; i++)
    if (name == kCategories[i].name)
      return i;
  return 0;
}

std::string marker_type(const std::string &name) {
  std::string out;
  for (char c : name)
    if (isalnum(static_cast<unsigned char>(c)))
      out += c;
  return out.empty() ? "Marker" : out;
}

const char *kind_name(FrameKind kind) {
  for (const auto &k : kKinds)
    if (k.kind == kind)
      return k.name;
  return "native";
}

std::optional<FrameKind> kind_from_name(const std::string &name) {
  for (const auto &k : kKinds)
    if (name == k.name)
      return k.kind;
  return std::nullopt;
}

}  // namespace rbt::profile::firefox
