#include "script_text.h"

#include <algorithm>

namespace rbt {

std::optional<std::string> read_script_text(std::istream &in) {
  std::string text;
  char buf[65536];
  while (in && text.size() <= kMaxScriptBytes) {
    in.read(buf, static_cast<std::streamsize>(
                     std::min(sizeof(buf), kMaxScriptBytes + 1 - text.size())));
    text.append(buf, static_cast<size_t>(in.gcount()));
  }
  if (text.size() > kMaxScriptBytes)
    return std::nullopt;
  return text;
}

std::string script_too_long_message() {
  return "longer than the " + std::to_string(kMaxScriptBytes >> 20) +
         " MiB a script may be (is it a script?)";
}

}  // namespace rbt
