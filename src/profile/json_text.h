#pragma once
// A JSON string literal for the writers that emit JSON by hand (speedscope): by hand, so the
// bytes are exactly what the writer orders, and no JSON library is needed here.
#include <string>
#include <string_view>

namespace rbt::profile {

// Appends `s` quoted and escaped (", \, control characters; other bytes as they are).
void append_json_string(std::string &out, std::string_view s);

}  // namespace rbt::profile
