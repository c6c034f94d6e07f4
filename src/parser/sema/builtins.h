#pragma once
// Identifiers for the builtins listed in builtins.def.

#include <optional>
#include <string_view>

namespace rbt::sema {

enum class BuiltinId {
#define RBT_VAR(id, name) id,
#define RBT_FUNC(id, name, min_args, max_args) id,
#define RBT_AGG(id, name, min_args, max_args) id,
#include "builtins.def"
};

struct BuiltinInfo {
  BuiltinId id;
  const char *name;
  enum class Kind { Var, Func, Agg } kind;
  int min_args, max_args;
};

// Looks up an identifier (`pid`, `arg3`) or a call name (`printf`, `count`).
const BuiltinInfo *find_builtin_var(std::string_view name);
const BuiltinInfo *find_builtin_call(std::string_view name);
const BuiltinInfo &builtin_info(BuiltinId id);
// N of `argN` (or `__builtin_argN`), a name find_builtin_var took for the arg builtin.
unsigned builtin_arg_index(std::string_view name);

}  // namespace rbt::sema
