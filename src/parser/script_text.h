#pragma once
// Reading a script's text (a file, stdin) with a bound: `rbt /dev/zero` read forever, and a
// script many megabytes long is a mistake whose compile would take minutes.

#include <cstddef>
#include <istream>
#include <optional>
#include <string>

namespace rbt {

// The longest script rbt compiles: ~30 times the longest stdlib tool's few KiB times 1,000.
constexpr size_t kMaxScriptBytes = 1 << 20;

// The whole stream, or nullopt when it holds more than kMaxScriptBytes (then at most one byte
// past the limit has been read).
std::optional<std::string> read_script_text(std::istream &in);

// The message for a script that is too long, after "reading PATH: ".
std::string script_too_long_message();

}  // namespace rbt
