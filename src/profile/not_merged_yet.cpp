// Placeholders for the writers another branch implements (firefox.cpp, top.cpp), so this
// branch links. The merge deletes this file (and its line in CMakeLists.txt).
#include "writers.h"

namespace rbt::profile {

std::optional<std::string> write_firefox(const std::vector<Profile> &, std::string &) {
  return "the firefox format is not built in this branch";
}

std::optional<std::string> write_top(const std::vector<Profile> &, std::string &,
                                     const WriteOptions &) {
  return "the text (top) format is not built in this branch";
}

}  // namespace rbt::profile
