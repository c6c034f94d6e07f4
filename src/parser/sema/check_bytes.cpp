// Type checks for the builtins whose values user space renders from raw bytes: buf (hex),
// strftime (local time), cgroup_path (the cgroup's paths), ntop (inet_ntop) and pton (folded
// here, at compile time).

#include <arpa/inet.h>

#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

// buf(p, n) reads n bytes at address p; buf(s) and buf(s, n) take the bytes of a string or
// array value. As in bpftrace, a buffer holds at most max_strlen - 4 bytes (the length takes
// the rest) and a length that is not a literal is clamped to that at run time.
Type TypeChecker::check_buf(const Call &call) {
  Type arg = check_expr(*call.args[0]);
  uint32_t limit = std::max<uint32_t>(1, info_.config.max_strlen - 4);
  uint32_t size = limit;
  if (call.args.size() == 2) {
    Type n = check_expr(*call.args[1]);
    if (!expect_int(*call.args[1], n, "buf()'s length"))
      return Type::none();
    if (auto lit = const_int(*call.args[1])) {
      if (*lit < 0) {
        diags_.error(call.args[1]->range, "buf()'s length cannot be negative");
        return Type::none();
      }
      size = static_cast<uint32_t>(std::min<int64_t>(*lit, limit));
    }
  }
  if (arg.is_none())
    return arg;
  if (arg.is_string() || arg.is_array()) {
    size = std::min(size, arg.size);
    if (call.args.size() == 1)
      size = std::min(arg.size, limit);
    return Type::buffer(size);
  }
  if (!arg.is_scalar()) {
    diags_.error(call.args[0]->range,
                 "buf() reads an address, a string or an array, not " + arg.name());
    return Type::none();
  }
  if (call.args.size() == 1) {
    diags_.error(call.range, "buf() needs a length to read an address, as in buf(p, 16)");
    return Type::none();
  }
  info_.user_space[&call] = arg.is_pointer() ? arg.user_space : probe_reads_user_space();
  return Type::buffer(size);
}

// strftime("%H:%M:%S", nsecs): the BPF side keeps the nanoseconds; user space formats them.
Type TypeChecker::check_strftime(const Call &call) {
  Type t = check_expr(*call.args[1]);
  if (!expect_literal(*call.args[0], "strftime()'s format"))
    return Type::none();
  if (!expect_int(*call.args[1], t, "strftime()'s timestamp"))
    return Type::none();
  return Type::timestamp();
}

// cgroup_path(id[, "filter"]): the BPF side keeps the id; user space finds its paths when the
// value is printed. The filter (a wildcard over hierarchy names) is a literal, as in bpftrace.
Type TypeChecker::check_cgroup_path(const Call &call) {
  Type t = check_expr(*call.args[0]);
  if (call.args.size() == 2 && !expect_literal(*call.args[1], "cgroup_path()'s filter"))
    return Type::none();
  if (!expect_int(*call.args[0], t, "cgroup_path()'s cgroup id"))
    return Type::none();
  return Type::cgroup_path();
}

Type TypeChecker::check_strerror(const Call &call) {
  Type t = check_expr(*call.args[0]);
  if (!expect_int(*call.args[0], t, "strerror()'s error number"))
    return Type::none();
  return Type::error_number();
}

namespace {
// The address bytes ntop() accepts: an IPv4 address in an integer, or 4 or 16 bytes.
bool is_address_bytes(const Type &t) {
  return (t.is_array() || t.is_string()) && (t.size == 4 || t.size == 16);
}
}  // namespace

// ntop(addr), ntop(af, addr): an integer or 4 bytes are IPv4, 16 bytes IPv6, unless `af` says.
Type TypeChecker::check_ntop(const Call &call) {
  bool ok = true;
  if (call.args.size() == 2)
    ok = expect_int(*call.args[0], check_expr(*call.args[0]), "ntop()'s address family");
  const Expr &addr = *call.args.back();
  Type t = check_expr(addr);
  if (t.is_none() || !ok)
    return Type::none();
  if (!t.is_scalar() && !is_address_bytes(t)) {
    diags_.error(addr.range, "ntop() expects an integer or an array of 4 or 16 bytes, not " +
                                 t.name());
    return Type::none();
  }
  return Type::inet();
}

// macaddr(bytes): the first 6 bytes of an array or string of at least 6, or the 6 bytes at an
// address (read from user space where the probe's addresses are, as str()).
Type TypeChecker::check_macaddr(const Call &call) {
  Type t = check_expr(*call.args[0]);
  if (t.is_none())
    return t;
  if ((t.is_array() || t.is_string()) && t.size >= 6)
    return Type::mac_addr();
  if (!t.is_scalar()) {
    diags_.error(call.args[0]->range,
                 "macaddr() expects an address or an array of at least 6 bytes, not " + t.name());
    return Type::none();
  }
  info_.user_space[&call] = t.is_pointer() ? t.user_space : probe_reads_user_space();
  return Type::mac_addr();
}

// pton("10.0.0.1") is uint8[4], pton("::1") uint8[16]: the bytes of the address, as a constant.
Type TypeChecker::check_pton(const Call &call) {
  auto *lit = dyn_cast<StrLit>(call.args[0]);
  if (!lit) {
    check_expr(*call.args[0]);
    diags_.error(call.args[0]->range, "pton() expects a string literal");
    return Type::none();
  }
  info_.types[lit] = Type::string(static_cast<uint32_t>(lit->value.size() + 1));
  const std::string &text = lit->value;
  int family = text.find(':') != std::string::npos   ? AF_INET6
               : text.find('.') != std::string::npos ? AF_INET
                                                     : 0;
  unsigned char bytes[16];
  if (!family || inet_pton(family, text.c_str(), bytes) != 1) {
    diags_.error(lit->range, "pton() expects a valid IPv4/IPv6 address, got " + text);
    return Type::none();
  }
  return Type::array(Type::integer(8, false), family == AF_INET ? 4 : 16);
}

}  // namespace rbt::sema
