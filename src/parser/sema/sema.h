#pragma once
// Semantic analysis: resolves attach points, checks types and contexts, and records what it
// learned in side tables (SemaInfo) that codegen reads. The AST itself is never annotated.

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ast.h"
#include "builtins.h"
#include "diagnostics.h"
#include "manifest.h"
#include "types.h"

namespace rbt::sema {

struct MapInfo {
  std::string name;
  Type key;    // none() when the map takes no key
  Type value;  // storage type: aggregation, or a normalized int/string/tuple
};

// A scratch variable; one per declaration (first assignment in a scope).
struct VarInfo {
  std::string name;
  Type type;
};

struct SemaInfo {
  std::unordered_map<const ast::Node *, Type> types;            // every expression
  std::map<std::string, MapInfo> maps;                          // ordered by name
  std::unordered_map<const ast::Probe *, std::vector<ProbeDesc>> probes;
  std::unordered_map<const ast::Node *, BuiltinId> builtins;    // Builtin and Call nodes
  std::unordered_map<const ast::Node *, VarInfo *> vars;        // Var and AssignVar nodes
  std::vector<std::unique_ptr<VarInfo>> var_storage;

  const Type &type_of(const ast::Node *n) const;
};

// Integers are stored as 64 bits in maps and events; tuples are normalized element-wise.
Type storage_type(const Type &t);

// Checks `program`, reporting problems to `diags`. Returns false when any error was reported.
bool analyse(const ast::Program &program, DiagnosticEngine &diags, SemaInfo &info);

}  // namespace rbt::sema
