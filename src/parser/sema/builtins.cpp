#include "builtins.h"

#include <cctype>

namespace rbt::sema {

static const BuiltinInfo kBuiltins[] = {
#define RBT_VAR(id, name) {BuiltinId::id, name, BuiltinInfo::Kind::Var, 0, 0},
#define RBT_FUNC(id, name, min_args, max_args)                                                     \
  {BuiltinId::id, name, BuiltinInfo::Kind::Func, min_args, max_args},
#define RBT_AGG(id, name, min_args, max_args)                                                      \
  {BuiltinId::id, name, BuiltinInfo::Kind::Agg, min_args, max_args},
#include "builtins.def"
};

const BuiltinInfo &builtin_info(BuiltinId id) { return kBuiltins[static_cast<int>(id)]; }

namespace {
// bpftrace's stdlib spells every builtin also as `__builtin_<name>` (its macros use that name
// so that a script's own `comm` cannot shadow it); both spellings are the same builtin.
std::string_view without_builtin_prefix(std::string_view name) {
  constexpr std::string_view prefix = "__builtin_";
  return name.starts_with(prefix) ? name.substr(prefix.size()) : name;
}
}  // namespace

const BuiltinInfo *find_builtin_var(std::string_view name) {
  name = without_builtin_prefix(name);
  // arg0, arg1, ... arg99 share one entry (how many a probe has is the checker's matter).
  auto digit = [&](size_t i) { return isdigit(static_cast<unsigned char>(name[i])); };
  if ((name.size() == 4 || (name.size() == 5 && name[3] != '0' && digit(4))) &&
      name.substr(0, 3) == "arg" && digit(3))
    return &builtin_info(BuiltinId::arg);
  for (auto &b : kBuiltins)
    if (b.kind == BuiltinInfo::Kind::Var && b.id != BuiltinId::arg && name == b.name)
      return &b;
  return nullptr;
}

unsigned builtin_arg_index(std::string_view name) {
  name = without_builtin_prefix(name);
  unsigned n = 0;
  for (char c : name.substr(3))
    n = n * 10 + static_cast<unsigned>(c - '0');
  return n;
}

const BuiltinInfo *find_builtin_call(std::string_view name) {
  name = without_builtin_prefix(name);
  for (auto &b : kBuiltins)
    if (b.kind != BuiltinInfo::Kind::Var && name == b.name)
      return &b;
  return nullptr;
}

}  // namespace rbt::sema
