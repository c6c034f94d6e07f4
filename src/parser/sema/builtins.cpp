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

const BuiltinInfo *find_builtin_var(std::string_view name) {
  // arg0..arg9 share one entry.
  if (name.size() == 4 && name.substr(0, 3) == "arg" && isdigit(static_cast<unsigned char>(name[3])))
    return &builtin_info(BuiltinId::arg);
  for (auto &b : kBuiltins)
    if (b.kind == BuiltinInfo::Kind::Var && b.id != BuiltinId::arg && name == b.name)
      return &b;
  return nullptr;
}

const BuiltinInfo *find_builtin_call(std::string_view name) {
  for (auto &b : kBuiltins)
    if (b.kind != BuiltinInfo::Kind::Var && name == b.name)
      return &b;
  return nullptr;
}

}  // namespace rbt::sema
