#include "value_format.h"

#include <arpa/inet.h>
#include <pwd.h>

#include <algorithm>
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

namespace {
std::string g_trunc_trailer = "..";
}  // namespace

void set_str_trunc_trailer(std::string trailer) { g_trunc_trailer = std::move(trailer); }

std::string load_string(const Type &t, const uint8_t *p) {
  const char *s = reinterpret_cast<const char *>(p);
  std::string text(s, strnlen(s, t.size));
  if (t.may_be_cut && t.size > 0 && text.size() == t.size - 1)
    text += g_trunc_trailer;
  return text;
}

namespace {
StackFrames g_stack_frames;
}  // namespace

void set_stack_frames(StackFrames frames) { g_stack_frames = std::move(frames); }

std::vector<std::string> stack_frames(const Type &type, const uint8_t *bytes) {
  return g_stack_frames ? g_stack_frames(type, bytes) : std::vector<std::string>{};
}

namespace {
SymbolName g_symbol_name;
IndexedText g_indexed_text;
}  // namespace

void set_symbol_name(SymbolName name) { g_symbol_name = std::move(name); }

namespace {
std::vector<EnumDesc> g_enums;

const std::string *enumerator_name(const std::string &enum_name, int64_t value) {
  for (const EnumDesc &e : g_enums)
    if (e.name == enum_name)
      for (const auto &[name, v] : e.values)
        if (v == value)
          return &name;
  return nullptr;
}
}  // namespace

void set_enums(std::vector<EnumDesc> enums) { g_enums = std::move(enums); }
void set_indexed_text(IndexedText text) { g_indexed_text = std::move(text); }

std::string hex_bytes(const uint8_t *p, size_t size, HexMode mode) {
  std::string out;
  char buf[8];
  for (size_t i = 0; i < size; i++) {
    if (mode == HexMode::Escaped && p[i] >= 32 && p[i] <= 126) {
      out += static_cast<char>(p[i]);
    } else if (mode == HexMode::Spaced) {
      snprintf(buf, sizeof(buf), i + 1 == size ? "%02x" : "%02x ", p[i]);
      out += buf;
    } else {
      snprintf(buf, sizeof(buf), "\\x%02x", p[i]);
      out += buf;
    }
  }
  return out;
}

std::string_view buffer_bytes(const Type &t, const uint8_t *p) {
  uint32_t length;
  memcpy(&length, p, 4);
  return {reinterpret_cast<const char *>(p + 4), std::min<size_t>(length, t.size - 4)};
}

std::string inet_text(const uint8_t *p) {
  uint64_t family;
  memcpy(&family, p, 8);
  char text[INET6_ADDRSTRLEN] = "";
  if (family != AF_INET && family != AF_INET6)
    return {};
  inet_ntop(static_cast<int>(family), p + 8, text, sizeof(text));
  return text;
}

namespace {
// A held struct or a record: `{ .m = 2, .n = 3 }`, as bpftrace prints them.
std::string format_fields(const Type &t, const uint8_t *p) {
  std::string s = "{ ";
  for (size_t i = 0; i < t.elems.size(); i++)
    s += (i ? ", ." : ".") + t.field_names[i] + " = " + format_value(t.elems[i], p + t.offsets[i]);
  return s + " }";
}
}  // namespace

std::string format_value(const Type &t, const uint8_t *p) {
  switch (t.kind) {
  case TypeKind::Symbol: {
    uint64_t addr, pid;
    memcpy(&addr, p, 8);
    memcpy(&pid, p + 8, 8);
    if (g_symbol_name)
      return g_symbol_name(t.stack_kind == StackKind::User, addr, pid);
    char buf[24];
    snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(addr));
    return buf;
  }
  case TypeKind::Stack: {
    // As bpftrace: a newline, then one indented frame per line (perf mode frames carry a tab;
    // raw mode's bare addresses have no indent).
    std::string s = "\n";
    const char *indent = t.stack_mode == StackMode::Bpftrace ? "        " : "";
    for (auto &frame : stack_frames(t, p))
      s += indent + frame + "\n";
    return s;
  }
  case TypeKind::Buffer: {
    std::string_view b = buffer_bytes(t, p);
    return hex_bytes(reinterpret_cast<const uint8_t *>(b.data()), b.size());
  }
  case TypeKind::Timestamp:
  case TypeKind::CgroupPath: {
    uint64_t index, value;
    memcpy(&index, p, 8);
    memcpy(&value, p + 8, 8);
    return g_indexed_text ? g_indexed_text(t.kind, index, value) : std::to_string(value);
  }
  case TypeKind::Inet:
    return inet_text(p);
  case TypeKind::ErrorNumber: {
    int64_t n;
    memcpy(&n, p, 8);
    return n >= 0 && n <= INT32_MAX ? strerror(static_cast<int>(n))
                                    : "Unknown error " + std::to_string(n);
  }
  case TypeKind::UserName: {
    // Resolved when printed, as bpftrace: a uid without an entry prints as its number.
    uint64_t uid;
    memcpy(&uid, p, 8);
    const passwd *pw = getpwuid(static_cast<uid_t>(uid));
    return pw ? pw->pw_name : std::to_string(uid);
  }
  case TypeKind::MacAddr: {
    // Upper-case hex, as bpftrace prints it.
    char text[18];
    snprintf(text, sizeof(text), "%02X:%02X:%02X:%02X:%02X:%02X", p[0], p[1], p[2], p[3], p[4],
             p[5]);
    return text;
  }
  case TypeKind::Array: {
    // Arrays print unspaced, tuples spaced, as bpftrace.
    std::string s = "[";
    for (uint32_t i = 0; i < t.count; i++)
      s += (i ? "," : "") + format_value(t.elems[0], p + i * t.elems[0].size);
    return s + "]";
  }
  case TypeKind::Struct:
    return format_fields(t, p);
  case TypeKind::Float:
    return "null";  // as bpftrace prints a value of a type it cannot hold
  case TypeKind::Bool:
    return load_int(t, p) ? "true" : "false";
  case TypeKind::Int: {
    int64_t v = load_int(t, p);
    if (!t.enum_name.empty())
      if (const std::string *name = enumerator_name(t.enum_name, v))
        return *name;
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
    if (t.is_named_tuple())  // a record prints as a struct does
      return format_fields(t, p);
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
