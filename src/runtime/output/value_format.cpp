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

namespace {
StackFrames g_stack_frames;
}  // namespace

void set_stack_frames(StackFrames frames) { g_stack_frames = std::move(frames); }

std::vector<std::string> stack_frames(const Type &type, const uint8_t *bytes) {
  return g_stack_frames ? g_stack_frames(type, bytes) : std::vector<std::string>{};
}

namespace {
SymbolName g_symbol_name;
}  // namespace

void set_symbol_name(SymbolName name) { g_symbol_name = std::move(name); }

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
    // As bpftrace: a newline, then one indented frame per line (perf mode frames carry a tab).
    std::string s = "\n";
    for (auto &frame : stack_frames(t, p))
      s += (t.stack_mode == StackMode::Perf ? "" : "        ") + frame + "\n";
    return s;
  }
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
