#pragma once
// Reads a Firefox Profiler (Gecko) profile back into the model: what `rbt record` wrote, for
// `rbt report`. Frames are exact when the file carries rbt's frame list (firefox_format.h);
// from other Gecko files they are rebuilt from the locations and categories.

#include <optional>
#include <string>
#include <string_view>

#include "profile.h"

namespace rbt::profile {

// Fills `out` from the file's bytes (gzipped or plain JSON); an error message saying what is
// wrong with the file otherwise.
std::optional<std::string> read_firefox(std::string_view bytes, Profile &out);

}  // namespace rbt::profile
