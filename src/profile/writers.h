#pragma once
// One writer per format (each in its own file), called by write_profiles() in formats.cpp.
// Each appends its bytes to `out`, or returns an error message naming what it cannot write.

#include <optional>
#include <string>
#include <vector>

#include "formats.h"
#include "profile.h"

namespace rbt::profile {

std::optional<std::string> write_folded(const std::vector<Profile> &profiles, std::string &out);
std::optional<std::string> write_pprof(const std::vector<Profile> &profiles, std::string &out);
std::optional<std::string> write_speedscope(const std::vector<Profile> &profiles,
                                            std::string &out);
std::optional<std::string> write_svg(const std::vector<Profile> &profiles, std::string &out);
std::optional<std::string> write_firefox(const std::vector<Profile> &profiles, std::string &out);
std::optional<std::string> write_top(const std::vector<Profile> &profiles, std::string &out,
                                     const WriteOptions &options);

}  // namespace rbt::profile
