#pragma once
// The type checker's internals, shared by type_check.cpp (statements and operators) and
// check_builtins.cpp (one check_<id> per line of builtins.def).

#include <algorithm>
#include <cassert>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "sema.h"

namespace rbt::sema {

// The rbt type of a C field. `remote`: the record was reached through a pointer, so an
// embedded struct is too; `user_space`: which memory the pointer addresses.
Type field_type(const FieldLayout &f, bool remote, bool user_space);

// The type a lexer type name stands for: "uint16", "int64", "bool"; "void" is none (what a
// `void *` points to).
Type int_type_named(const std::string &name);
// `pointee` behind `depth` pointers (`int32 **`: two); depth 0 is `pointee` itself.
Type pointer_to(Type pointee, uint32_t depth, bool user_space);

class TypeChecker {
public:
  TypeChecker(DiagnosticEngine &diags, SemaInfo &info, const Environment &env)
      : diags_(diags), info_(info), env_(env) {}

  // One pass over the program. Map types learned in earlier passes are kept in `info`, so a
  // map read in a probe that comes before its assignment is typed on the second pass.
  void check_program(const ast::Program &program);
  bool changed() const { return changed_; }

  // Builtin checks, declared from builtins.def.
#define RBT_VAR(id, name) Type check_##id(const ast::Builtin &node);
#define RBT_FUNC(id, name, min_args, max_args) Type check_##id(const ast::Call &call);
#define RBT_AGG(id, name, min_args, max_args) Type check_##id(const ast::Call &call);
#include "builtins.def"

private:
  void check_config(const ast::Program &program);  // check_config.cpp
  void check_ignored_config(const ast::ConfigItem &item, const std::string &key);
  Type check_address_space(const ast::Call &call, bool user);  // uptr/kptr (check_addrspace.cpp)
  void check_probe(const ast::Probe &probe);
  void resolve_attach_points(const ast::Probe &probe);
  void check_block(const ast::Block &block);
  void check_stmt(const ast::Stmt &stmt);
  void check_assign_map(const ast::AssignMap &assign);
  void check_assign_var(const ast::AssignVar &assign);
  // The statements of a block in a new scope; warns about those after a return or exit().
  void check_stmts(const std::vector<ast::Stmt *> &stmts);
  void check_stmts_in_scope(const std::vector<ast::Stmt *> &stmts);
  void check_var_decl(const ast::VarDecl &decl);
  Type check_block_expr(const ast::BlockExpr &block, bool as_map_value = false);
  Type check_unary(const ast::Unary &u);
  // What `*p` or `p[i]` reads: an integer, or a struct at the pointer's address.
  Type pointee_type(const ast::Expr &at, const Type &pointer);
  // The type `e` (of type `t`) is stored as: `t` itself, or for a struct reached through a
  // pointer (`*p`) its bytes as a Struct value (check_struct_values.cpp); none() after an error.
  Type held_value(const ast::Expr &e, const Type &t);
  Type struct_array(const ast::FieldAccess &fa, const FieldLayout &field, bool user_space);
  Type resolve_type_expr(const ast::TypeExpr &te);
  // bpftrace's type of `e` (whose rbt type is t): VarInfo::natural.
  Type natural_type(const ast::Expr &e, const Type &t) const;
  Type struct_value_of(const Type &record, const ast::Expr &at, int depth);
  // `$s.field` of a Struct value: the field's type.
  Type struct_field(const ast::FieldAccess &fa, const Type &value);
  // The error for reading a float field (`type`: float, double, long double) on its own.
  void float_field_error(const ast::FieldAccess &fa, const std::string &type);
  // `(int8[])"str"`, `(uint8[8])x`, `(uint64)$bytes`: the same bytes seen another way.
  Type check_array_cast(const ast::Cast &cast, const Type &operand);
  // Assigns a value of type `t` (the checked `value`) to `var`: the first typed assignment
  // gives the variable its type, later ones must be compatible.
  void assign_var_type(VarInfo *var, const Type &t, const ast::Expr &value);
  // The type a `let $x: T` names, or none() after an error.
  Type resolve_type_spec(const ast::TypeSpec &spec);
  // Whether a statement always leaves its block (return, break, continue, exit()).
  static bool terminates(const ast::Stmt &stmt);
  void check_map_decls(const ast::Program &program);
  Type check_expr(const ast::Expr &expr);
  // Cases of check_expr, out of line to keep its frame small (it recurses per nesting level).
  Type check_positional(const ast::Positional &p);
  Type check_var(const ast::Var &v);
  Type check_map_read(const ast::MapRef &m);
  Type check_ternary(const ast::Ternary &te);
  Type check_tuple(const ast::Tuple &tu);
  Type check_binary(const ast::Binary &bin);
  Type check_call(const ast::Call &call, bool as_map_value);
  Type check_map_key(const ast::MapRef &map);
  Type check_builtin_var(const ast::Builtin &node);
  Type check_field_access(const ast::FieldAccess &fa);
  // `args.f` in a probe on several tracepoints: f must have one type in all of them.
  bool check_args_field(const ast::FieldAccess &fa, const FieldLayout &field);
  std::string kernel_enum_of(const FieldLayout &field);
  Type check_cast(const ast::Cast &cast);
  Type check_type_query(const ast::TypeQuery &query);
  Type check_index(const ast::Index &index);
  bool constant_index_fits(const ast::Index &x, uint64_t count, const Type &base);
  bool bind_task_path(const ast::Builtin &node, const char *pointer, const char *field,
                      uint32_t field_size);
  void check_for_map(const ast::For &loop);
  Type check_stack_call(const ast::Call &call, StackKind kind);
  // rlabel/rpath/rline's ([stack, ]index) arguments (check_rstack.cpp); false after an error.
  bool check_rframe_args(const ast::Call &call, const std::string &name);
  // The layout behind a Record type (a tracepoint's args or a kernel struct), or null.
  const RecordLayout *record_layout(const Type &record);
  // A struct by name: the script's own definitions first, then the kernel's BTF.
  const RecordLayout *find_struct(const std::string &name) const;
  // Whether addresses read in the current probe are in user space (uprobes, usdt, syscalls).
  bool probe_reads_user_space() const;
  void record_map(const ast::MapRef &map, const Type &key, const Type &value,
                  const SourceRange &value_range);

  // Checks `call.args[first]` as a printf-style format literal and the rest as its values
  // (check_actions.cpp: cat, system); `what` names the function in messages.
  bool check_format_args(const ast::Call &call, size_t first, const std::string &what);
  // The map of print/clear/zero: null (after reporting) unless `e` is a map without keys.
  const ast::MapRef *action_map(const ast::Expr &e, const std::string &what);
  bool expect_int(const ast::Expr &e, const Type &t, const std::string &what);
  bool require_probe_kinds(const ast::Call &call, std::initializer_list<ProbeKind> kinds,
                           const std::string &needs);
  // `e` as a string literal (typed as one), or null after reporting "`what` must be a string
  // literal": formats, separators, filters, names.
  const ast::StrLit *expect_literal(const ast::Expr &e, const std::string &what);
  std::optional<int64_t> const_int(const ast::Expr &e);
  std::optional<std::string> positional_text(const ast::Expr &e);
  std::optional<std::string> literal_text(const ast::Expr &e);

  DiagnosticEngine &diags_;
  SemaInfo &info_;
  const Environment &env_;
  const ast::Probe *probe_ = nullptr;
  std::vector<std::unordered_map<std::string, VarInfo *>> scopes_;
  std::set<std::string> let_vars_;    // variables a `let` declared in the probe so far
  std::set<std::string> ended_vars_;  // variables of the probe's blocks that have ended (a hint)
  int loop_depth_ = 0;
  static constexpr int kMaxLoopNesting = 100;
  // unroll: the statements the current probe lowers to, counting each one once per copy the
  // enclosing unrolls make; bounded so that unroll(100) four deep (10^8 copies) is an error
  // rather than minutes of codegen.
  static constexpr uint64_t kMaxUnrolledStmts = 100000;
  std::vector<const ast::Unroll *> unrolls_;  // the enclosing unroll statements, outermost first
  uint64_t unroll_copies_ = 1;                // the product of their counts
  uint64_t lowered_stmts_ = 0;
  std::vector<const ast::MapRef *> unknown_map_reads_;
  // len()'s maps: a scalar map (no keys) is an error, as in bpftrace, judged once every
  // assignment has been seen.
  std::set<const ast::MapRef *> len_maps_;
  // Attach point errors, found once and reported by every pass (only the last pass counts).
  std::vector<Diagnostic> &attach_errors_ = info_.attach_errors;
  std::vector<Diagnostic> &skipped_probes_ = info_.skipped_probes;
  bool changed_ = false;

  friend struct BuiltinChecks;
};

}  // namespace rbt::sema
