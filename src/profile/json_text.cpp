#include "json_text.h"

#include <cstdio>

namespace rbt::profile {

void append_json_string(std::string &out, std::string_view s) {
  out += '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (u < 0x20) {
        char buf[8];
        snprintf(buf, sizeof(buf), "\\u%04x", u);
        out += buf;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

}  // namespace rbt::profile
