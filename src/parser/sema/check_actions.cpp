// Type checks for the actions the runtime carries out: print, clear, zero, time, cat, system.
// The BPF side of each only sends an event; what may be sent is decided here.

#include "format_spec.h"
#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

bool TypeChecker::check_format_args(const Call &call, size_t first, const std::string &what) {
  for (size_t i = first + 1; i < call.args.size(); i++)
    check_expr(*call.args[i]);
  auto *fmt = expect_literal(*call.args[first], what + "()'s format");
  if (!fmt)
    return false;
  ParsedFormat parsed = parse_format(fmt->value);
  if (!parsed.error.empty()) {
    diags_.error(fmt->range, "invalid " + what + "() format: " + parsed.error);
    return false;
  }
  size_t want = parsed.conversions(), got = call.args.size() - first - 1;
  if (want != got) {
    diags_.error(call.range, what + "(): the format has " + std::to_string(want) + " conversion" +
                                 (want == 1 ? "" : "s") + " but " + std::to_string(got) +
                                 " argument" + (got == 1 ? " was" : "s were") + " given");
    return false;
  }
  bool ok = true;
  size_t arg = first + 1;
  for (auto &piece : parsed.pieces) {
    if (!piece.conversion)
      continue;
    const Expr &e = *call.args[arg++];
    const Type &t = info_.type_of(&e);
    if (t.is_none()) {
      ok = false;
      continue;
    }
    if (!format_accepts(piece.conversion, t)) {
      diags_.error(e.range, what + "(): " + conversion_name(piece) + " expects " +
                                conversion_wants(piece.conversion) + ", not " + t.name());
      ok = false;
    }
  }
  return ok;
}

const MapRef *TypeChecker::action_map(const Expr &e, const std::string &what) {
  auto *map = dyn_cast<MapRef>(&e);
  if (!map) {
    check_expr(e);
    diags_.error(e.range, what + "()'s argument must be a map, as in " + what + "(@m)");
    return nullptr;
  }
  if (!map->keys.empty()) {
    diags_.error(map->range, what + "() acts on a whole map: write " + what + "(" + map->name +
                                 "), without keys");
    return nullptr;
  }
  // A map assigned only further down the script is known on a later pass.
  if (!info_.maps.count(map->name))
    unknown_map_reads_.push_back(map);
  return map;
}

Type TypeChecker::check_print(const Call &call) {
  const Expr &first = *call.args[0];
  auto *map = dyn_cast<MapRef>(&first);
  if (map && map->keys.empty()) {
    // print(@m, top, div): both are counts, so literals must be non-negative, and div non-zero.
    static const char *names[] = {"top", "div"};
    bool ok = true;
    for (size_t i = 1; i < call.args.size(); i++) {
      const Expr &a = *call.args[i];
      if (!expect_int(a, check_expr(a), std::string("print()'s ") + names[i - 1])) {
        ok = false;
        continue;
      }
      if (auto v = const_int(a); v && (*v < 0 || (i == 2 && *v == 0))) {
        diags_.error(a.range, std::string("print()'s ") + names[i - 1] + " must be " +
                                  (i == 2 ? "positive" : "zero or positive"));
        ok = false;
      }
    }
    action_map(first, "print");
    auto it = info_.maps.find(map->name);
    if (ok && it != info_.maps.end() && it->second.value.kind == TypeKind::Stats &&
        call.args.size() > 1)
      diags_.warning(call.args[1]->range,
                     "print(): top does not apply to stats() maps; every key is printed");
    return ok ? Type::void_type() : Type::none();
  }
  if (call.args.size() > 1) {
    check_expr(first);
    diags_.error(call.args[1]->range,
                 "print(): top and div only apply to maps, as in print(@m, 10, 1000)");
    return Type::none();
  }
  Type t = check_expr(first);
  if (t.is_record() && !(t = held_value(first, t)).is_none())
    info_.held_structs[&first] = t;  // print(*p): the struct's bytes go in the event
  if (t.is_none())
    return Type::none();
  if (!format_accepts('s', t)) {
    diags_.error(first.range, "print() cannot print a value of type " + t.name());
    return Type::none();
  }
  return Type::void_type();
}

Type TypeChecker::check_clear(const Call &call) {
  return action_map(*call.args[0], "clear") ? Type::void_type() : Type::none();
}

Type TypeChecker::check_zero(const Call &call) {
  return action_map(*call.args[0], "zero") ? Type::void_type() : Type::none();
}

Type TypeChecker::check_time(const Call &call) {
  if (call.args.empty())
    return Type::void_type();
  if (!expect_literal(*call.args[0], "time()'s format"))
    return Type::none();
  return Type::void_type();
}

Type TypeChecker::check_cat(const Call &call) {
  // cat($path) with a string value prints that file; a literal is a format, as in bpftrace
  // (cat("/proc/%d/status", pid)).
  if (call.args.size() == 1 && !isa<StrLit>(call.args[0])) {
    Type t = check_expr(*call.args[0]);
    if (t.is_none())
      return Type::none();
    if (!t.is_string()) {
      diags_.error(call.args[0]->range,
                   "cat()'s argument must be a path (a string literal or a string), not " +
                       t.name());
      return Type::none();
    }
    return Type::void_type();
  }
  return check_format_args(call, 0, "cat") ? Type::void_type() : Type::none();
}

// join(args.argv[, sep]): the strings of a NULL-terminated char * array (at most 16 of 1023
// characters, as bpftrace), printed joined by `sep` (" " by default) as one line.
Type TypeChecker::check_join(const Call &call) {
  Type t = check_expr(*call.args[0]);
  bool ok = expect_int(*call.args[0], t, "join()'s array (a char ** address)");
  if (call.args.size() == 2 && !expect_literal(*call.args[1], "join()'s separator"))
    return Type::none();
  if (!ok || t.is_none())
    return Type::none();
  info_.user_space[&call] = t.is_pointer() ? t.user_space : probe_reads_user_space();
  return Type::void_type();
}

Type TypeChecker::check_errorf(const Call &call) {
  return check_format_args(call, 0, "errorf") ? Type::void_type() : Type::none();
}
Type TypeChecker::check_warnf(const Call &call) {
  return check_format_args(call, 0, "warnf") ? Type::void_type() : Type::none();
}

// write_user(dst, src, len): writes len bytes of src (a string or an integer, held by the
// program) to the traced process's memory at dst with bpf_probe_write_user, as bpftrace; true
// when written. It can corrupt or crash the process: --unsafe only. len is a constant, at most
// src's size, as the helper's verifier check needs a known size.
Type TypeChecker::check_write_user(const Call &call) {
  Type dst = check_expr(*call.args[0]), src = check_expr(*call.args[1]);
  Type len = check_expr(*call.args[2]);
  if (!dst.is_none() && !dst.is_scalar()) {
    diags_.error(call.args[0]->range, "write_user() writes to an address, not a " + dst.name());
    return Type::none();
  }
  if (!src.is_none() && !src.is_string() && !src.is_int()) {
    diags_.error(call.args[1]->range,
                 "write_user() writes a string or an integer, not a " + src.name());
    return Type::none();
  }
  uint64_t size = src.is_string() ? src.size : 8;
  auto n = expect_int(*call.args[2], len, "write_user()'s length") ? const_int(*call.args[2])
                                                                   : std::nullopt;
  if (!n || *n < 1 || static_cast<uint64_t>(*n) > size) {
    diags_.error(call.args[2]->range, "write_user()'s length must be a constant from 1 to " +
                                          std::to_string(size) + " (the size of what it writes)");
    return Type::none();
  }
  if (!env_.unsafe) {
    diags_.error(call.range, "write_user() is unsafe: run rbt with --unsafe to allow it");
    return Type::none();
  }
  info_.constants[&call] = static_cast<uint64_t>(*n);  // the length, for the lowering
  return Type::boolean();
}

Type TypeChecker::check_system(const Call &call) {
  bool ok = check_format_args(call, 0, "system");
  if (!env_.unsafe) {
    diags_.error(call.range, "system() is unsafe: run rbt with --unsafe to allow it");
    return Type::none();
  }
  return ok ? Type::void_type() : Type::none();
}

}  // namespace rbt::sema
