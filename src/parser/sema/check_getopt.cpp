// getopt("name"[, default[, description]]): named parameters (--name=value after `--`), as in
// bpftrace. The checker gives each call its type from the default; bind_named_params then
// parses the command line's values into constants, and turns mistakes (an unknown name, a
// value of the wrong type) into usage errors, since they are the caller's, not the script's.

#include <cctype>
#include <cerrno>
#include <cstdint>

#include "parse.h"
#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

namespace {

// The words bpftrace takes for a boolean parameter's value.
std::optional<bool> parse_bool(std::string s) {
  for (char &c : s)  // True, FALSE: any case, as bpftrace
    c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  if (s == "true" || s == "1" || s == "yes" || s == "on")
    return true;
  if (s == "false" || s == "0" || s == "no" || s == "off")
    return false;
  return std::nullopt;
}

// The value of --name[=value] for `p`, or the reason it is not one.
Result<std::string> parse_value(const NamedParam &p, const std::optional<std::string> &given) {
  if (p.type.kind == TypeKind::Bool) {
    if (!given)
      return std::string("1");
    if (auto b = parse_bool(*given))
      return std::string(*b ? "1" : "0");
    return make_error("", "'" + *given + "' is not a boolean (true or false)");
  }
  if (!given)
    return make_error("", std::string("needs a value (--NAME=") +
                              (p.type.is_string() ? "text" : "number") + ")");
  if (p.type.is_string())
    return *given;
  // Written as a literal in the script would be (1_000, 0x10, 10ms), with an optional '-'.
  bool negative = !given->empty() && (*given)[0] == '-';
  auto magnitude = int_literal_value(given->substr(negative ? 1 : 0));
  if (!magnitude && magnitude.error().err != ERANGE)
    return make_error("", "'" + *given + "' is not a number");
  // Up to 2^64-1 (0xffffffffffffffff: the parameter is then unsigned, see check_getopt).
  uint64_t limit = negative ? uint64_t(INT64_MAX) + 1 : UINT64_MAX;
  if (!magnitude || *magnitude > limit)
    return make_error("", "'" + *given + "' does not fit in 64 bits");
  return negative ? std::to_string(static_cast<int64_t>(0 - *magnitude))
                  : std::to_string(*magnitude);
}

}  // namespace

Type TypeChecker::check_getopt(const Call &call) {
  auto *name = dyn_cast<StrLit>(call.args[0]);
  if (!name || name->value.empty()) {
    check_expr(*call.args[0]);
    diags_.error(call.args[0]->range, "getopt's first argument must be a parameter name in quotes");
    return Type::none();
  }
  info_.types[name] = Type::string(static_cast<uint32_t>(name->value.size() + 1));
  NamedParam p;
  // No default: a boolean flag, false unless --name is given.
  p.type = Type::boolean();
  p.default_text = "false";
  if (call.args.size() >= 2) {
    const Expr &def = *call.args[1];
    Type t = check_expr(def);
    auto *lit = dyn_cast<IntLit>(&def);
    if (auto *s = dyn_cast<StrLit>(&def)) {
      auto given = env_.named.find(name->value);
      size_t size = given != env_.named.end() && given->second ? given->second->size()
                                                               : s->value.size();
      p.type = Type::string(static_cast<uint32_t>(size + 1));
      p.default_text = "\"" + s->value + "\"";
      p.value = s->value;
    } else if (lit && lit->is_bool) {
      p.default_text = lit->value ? "true" : "false";
      p.value = lit->value ? "1" : "0";
    } else if (auto n = const_int(def); n && !t.is_none()) {
      // Signed, unless the command line gives a value only uint64 holds (as bpftrace).
      auto given = env_.named.find(name->value);
      auto big = given != env_.named.end() && given->second
                     ? numeric_argument(*given->second)
                     : std::nullopt;
      p.type = Type::integer(64, !big || big->negative || big->value <= uint64_t(INT64_MAX));
      p.default_text = p.value = std::to_string(*n);
    } else {
      if (!t.is_none())
        diags_.error(def.range, "getopt's default must be a number, a string or a boolean "
                                "literal (its type is the parameter's)");
      return Type::none();
    }
  } else {
    p.value = "0";
  }
  if (call.args.size() == 3) {
    auto *desc = dyn_cast<StrLit>(call.args[2]);
    check_expr(*call.args[2]);
    if (!desc) {
      diags_.error(call.args[2]->range, "getopt's description must be a string literal");
      return Type::none();
    }
    p.description = desc->value;
  }
  auto [it, inserted] = info_.named_params.try_emplace(name->value, p);
  if (!inserted && it->second.default_text != p.default_text) {
    diags_.error(call.range, "getopt(\"" + name->value + "\") has the default " +
                                 it->second.default_text + " elsewhere: one parameter, one default");
    return Type::none();
  }
  if (!inserted && p.description.empty())
    p.description = it->second.description;
  it->second = p;
  return p.type;
}

void bind_named_params(SemaInfo &info, const Environment &env) {
  for (const auto &[name, given] : env.named) {
    auto p = info.named_params.find(name);
    if (p == info.named_params.end() && name == "help") {
      info.named_params_help = true;
      continue;
    }
    if (p == info.named_params.end()) {
      std::string known;
      for (const auto &[n, np] : info.named_params)
        known += (known.empty() ? "--" : ", --") + n + (np.description.empty() ? "" : " (" + np.description + ")");
      info.usage_errors.push_back("the script has no named parameter --" + name + " (" +
                                  (known.empty() ? "it reads none with getopt()" : "it reads " + known) + ")");
      continue;
    }
    auto value = parse_value(p->second, given);
    if (!value)
      info.usage_errors.push_back("named parameter --" + name + ": " + value.error().why);
    else
      p->second.value = *value;
  }
}

}  // namespace rbt::sema
