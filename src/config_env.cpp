#include "config_env.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace rbt {

namespace {

std::optional<uint64_t> parse_number(const char *text) {
  if (!*text || *text == '-')
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 0);
  if (*end != '\0' || errno == ERANGE)
    return std::nullopt;
  return v;
}

Error bad(const char *name, const char *value, const std::string &expected) {
  return make_error(name, "'" + std::string(value) + "' is not " + expected,
                    "unset it, or set it to " + expected);
}

}  // namespace

Result<sema::ConfigOverrides> config_from_environment() {
  sema::ConfigOverrides c;
  if (const char *v = getenv("BPFTRACE_MAX_STRLEN")) {
    auto n = parse_number(v);
    if (!n || *n < 1 || *n > sema::kMaxStrlen)
      return bad("BPFTRACE_MAX_STRLEN", v,
                 "an integer from 1 to " + std::to_string(sema::kMaxStrlen));
    c.max_strlen = static_cast<uint32_t>(*n);
  }
  if (const char *v = getenv("BPFTRACE_MAX_MAP_KEYS")) {
    auto n = parse_number(v);
    if (!n || *n < 1 || *n > UINT32_MAX)
      return bad("BPFTRACE_MAX_MAP_KEYS", v, "an integer from 1 to 4294967295");
    c.max_map_keys = *n;
  }
  if (const char *v = getenv("BPFTRACE_PRINT_MAPS_ON_EXIT")) {
    if (!strcmp(v, "true") || !strcmp(v, "1"))
      c.print_maps_on_exit = true;
    else if (!strcmp(v, "false") || !strcmp(v, "0"))
      c.print_maps_on_exit = false;
    else
      return bad("BPFTRACE_PRINT_MAPS_ON_EXIT", v, "true or false");
  }
  if (const char *v = getenv("BPFTRACE_STACK_MODE")) {
    if (!strcmp(v, "bpftrace"))
      c.stack_mode = StackMode::Bpftrace;
    else if (!strcmp(v, "perf"))
      c.stack_mode = StackMode::Perf;
    else if (!strcmp(v, "raw"))
      c.stack_mode = StackMode::Raw;
    else
      return bad("BPFTRACE_STACK_MODE", v, "bpftrace, perf or raw");
  }
  if (const char *v = getenv("BPFTRACE_MAX_CAT_BYTES")) {
    auto n = parse_number(v);
    if (!n || *n < 1)
      return bad("BPFTRACE_MAX_CAT_BYTES", v, "a positive integer");
    c.max_cat_bytes = *n;
  }
  if (const char *v = getenv("BPFTRACE_STR_TRUNC_TRAILER"))
    c.str_trunc_trailer = v;
  if (const char *v = getenv("BPFTRACE_DUMMY_TS_MAP"))
    c.dummy_ts_map = v;
  return c;
}

}  // namespace rbt
