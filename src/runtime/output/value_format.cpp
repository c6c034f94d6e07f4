#include "value_format.h"

#include <cstdio>
#include <cstring>

namespace rbt::output {

int64_t load_int(const Type &t, const uint8_t *p) {
  switch (t.size) {
  case 1: return t.is_signed ? static_cast<int8_t>(*p) : static_cast<int64_t>(*p);
  case 2: {
    uint16_t v;
    memcpy(&v, p, 2);
    return t.is_signed ? static_cast<int16_t>(v) : static_cast<int64_t>(v);
  }
  case 4: {
    uint32_t v;
    memcpy(&v, p, 4);
    return t.is_signed ? static_cast<int32_t>(v) : static_cast<int64_t>(v);
  }
  default: {
    int64_t v;
    memcpy(&v, p, 8);
    return v;
  }
  }
}

std::string load_string(const Type &t, const uint8_t *p) {
  const char *s = reinterpret_cast<const char *>(p);
  return std::string(s, strnlen(s, t.size));
}

std::string format_value(const Type &t, const uint8_t *p) {
  switch (t.kind) {
  case TypeKind::Bool:
    return load_int(t, p) ? "true" : "false";
  case TypeKind::Int: {
    int64_t v = load_int(t, p);
    return t.is_signed ? std::to_string(v) : std::to_string(static_cast<uint64_t>(v));
  }
  case TypeKind::String:
    return load_string(t, p);
  case TypeKind::Pointer: {
    char buf[24];
    snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(load_int(t, p)));
    return buf;
  }
  case TypeKind::Tuple: {
    std::string s = "(";
    for (size_t i = 0; i < t.elems.size(); i++)
      s += (i ? ", " : "") + format_value(t.elems[i], p + t.offsets[i]);
    return s + ")";
  }
  default:
    return "?";
  }
}

}  // namespace rbt::output
