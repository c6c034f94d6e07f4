// Declarations and blocks: `let $x[: type] [= v]`, block expressions `{ ...; v }`, the
// unreachable-statement warning, and `let @m = lruhash(N)` map declarations.

#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

bool TypeChecker::terminates(const Stmt &stmt) {
  switch (stmt.kind) {
  case NodeKind::Jump:
    return true;
  case NodeKind::ExprStmt: {
    auto *call = dyn_cast<Call>(static_cast<const ExprStmt &>(stmt).expr);
    return call && call->name == "exit";
  }
  case NodeKind::If: {
    auto &s = static_cast<const If &>(stmt);
    if (!s.else_stmt)
      return false;
    bool then_ends = false;
    for (const Stmt *t : s.then_block->stmts)
      then_ends = then_ends || terminates(*t);
    return then_ends && terminates(*s.else_stmt);
  }
  case NodeKind::Block: {
    for (const Stmt *t : static_cast<const Block &>(stmt).stmts)
      if (terminates(*t))
        return true;
    return false;
  }
  default:
    return false;
  }
}

void TypeChecker::check_stmts(const std::vector<Stmt *> &stmts) {
  bool outermost = scopes_.empty();  // a probe's body: what ended in another probe is no hint
  if (outermost)
    ended_vars_.clear();
  scopes_.emplace_back();
  check_stmts_in_scope(stmts);
  for (const auto &[name, var] : scopes_.back())
    ended_vars_.insert(name);
  scopes_.pop_back();
}

void TypeChecker::check_stmts_in_scope(const std::vector<Stmt *> &stmts) {
  bool warned = false;
  for (size_t i = 0; i < stmts.size(); i++) {
    check_stmt(*stmts[i]);
    // As bpftrace: code after return, break, continue or exit() never runs; say so once.
    if (!warned && i + 1 < stmts.size() && terminates(*stmts[i])) {
      diags_.warning(stmts[i + 1]->range, "unreachable statement");
      warned = true;
    }
  }
}

// typeof(...) handed around as a value (a macro's argument): the type it names. A struct is
// the struct itself (its size is the struct's), `typeof(t)` of such a value is t, and a pointer
// spec over `of` (`t*`) points to of's type.
Type TypeChecker::resolve_type_expr(const TypeExpr &te) {
  const TypeSpec &spec = te.type;
  Type t;
  if (spec.of) {
    auto *inner = dyn_cast<TypeExpr>(spec.of);
    t = inner ? resolve_type_expr(*inner) : resolve_type_spec(TypeSpec{spec.range, "", false, false, 0, spec.of});
    return spec.is_pointer && !t.is_none() ? pointer_to(t, 1, probe_reads_user_space()) : t;
  }
  if (spec.is_struct && !spec.is_pointer) {
    const RecordLayout *layout = find_struct(spec.name);
    if (!layout) {
      diags_.error(spec.range, "unknown struct '" + spec.name + "'");
      return Type::none();
    }
    return Type::record_of(spec.name, layout->size, true, probe_reads_user_space());
  }
  return resolve_type_spec(spec);
}

Type TypeChecker::resolve_type_spec(const TypeSpec &spec) {
  if (auto *te = dyn_cast<TypeExpr>(spec.of)) {  // `let $y: typeof(t)`, t a macro's type
    Type t = resolve_type_expr(*te);
    if (t.is_record()) {
      diags_.error(spec.range, "typeof: a variable cannot hold " + t.name() + " (a pointer to it can)");
      return Type::none();
    }
    return t;
  }
  if (spec.of) {  // typeof(expr): the type a variable would hold for expr
    Type t = check_expr(*spec.of);
    if (t.kind == TypeKind::Void || t.is_aggregation() || t.is_record()) {
      diags_.error(spec.range, "typeof: a variable cannot hold " + t.name());
      return Type::none();
    }
    return t;
  }
  if (spec.is_struct) {
    const RecordLayout *layout = find_struct(spec.name);
    if (!layout) {
      diags_.error(spec.range, "unknown struct '" + spec.name + "'");
      return Type::none();
    }
    bool user = probe_reads_user_space();
    if (spec.size) {  // `let $w: struct W[10]`: ten W values
      IntLit at(spec.range, 0);
      Type elem = struct_value_of(Type::record_of(spec.name, layout->size, true, user), at, 0);
      return elem.is_none() ? elem : Type::array(std::move(elem), spec.size);
    }
    return Type::pointer(Type::record_of(spec.name, layout->size, true, user), user);
  }
  if (spec.name == "string") {
    uint32_t n = spec.size ? spec.size : info_.config.max_strlen;
    if (n > kMaxStrlen) {
      diags_.error(spec.range, "a string holds at most " + std::to_string(kMaxStrlen) + " bytes");
      return Type::none();
    }
    return Type::string(n);
  }
  bool is_int_type = spec.name == "bool" || spec.name.find("int") != std::string::npos ||
                     (spec.name == "void" && spec.is_pointer);
  if (!is_int_type || spec.size) {
    diags_.error(spec.range, "unknown type '" + spec.name + (spec.size ? "[N]" : "") +
                                 "' (integer types, bool, string, string[N], pointers)");
    return Type::none();
  }
  return pointer_to(int_type_named(spec.name), spec.is_pointer ? 1 : 0, probe_reads_user_space());
}

// `let $x;` declares $x in the current block (0 until assigned); `let $x: T` fixes its type.
// As in bpftrace, a declaration may not shadow a variable already visible.
void TypeChecker::check_var_decl(const VarDecl &d) {
  const std::string &name = d.var->name;
  let_vars_.insert(name);
  for (auto &scope : scopes_)
    if (scope.count(name)) {
      diags_.error(d.var->range, "variable " + name +
                                     " was already declared; variable shadowing is not allowed");
      return;
    }
  Type value;
  if (d.value) {
    value = check_expr(*d.value);
    if (value.kind == TypeKind::Void || value.is_aggregation() || value.is_record()) {
      diags_.error(d.value->range, "this expression cannot be stored in a variable (" +
                                       value.name() + ")");
      return;
    }
  }
  auto it = info_.vars.find(&d);
  if (it == info_.vars.end()) {
    info_.var_storage.push_back(std::make_unique<VarInfo>(VarInfo{name, {}}));
    it = info_.vars.emplace(&d, info_.var_storage.back().get()).first;
  }
  VarInfo *var = it->second;
  if (d.typed && var->type.is_none()) {
    var->type = resolve_type_spec(d.type);
    var->declared_type = !var->type.is_none();
    if (var->declared_type)
      changed_ = true;
  }
  scopes_.back()[name] = var;
  info_.vars[d.var] = var;
  if (d.value)
    assign_var_type(var, value, *d.value);
  else if (!d.typed && var->type.is_none()) {
    var->type = Type::integer(64, true);  // `let $x;` reads 0 until something else types it
    var->untyped_let = true;
  }
  info_.types[d.var] = var->type;
}

// The block's statements run in a scope of their own; its value is its last expression's.
// `as_map_value`: the block is a map's value (`@ = { let $a = 1; avg($a) }`), so its value
// may be an aggregation, as in bpftrace.
Type TypeChecker::check_block_expr(const BlockExpr &block, bool as_map_value) {
  scopes_.emplace_back();
  check_stmts_in_scope(block.stmts);
  Type t = Type::void_type();
  if (block.value) {
    bool ends = false;
    for (const Stmt *s : block.stmts)
      ends = ends || terminates(*s);
    if (ends)
      diags_.warning(block.value->range, "unreachable expression");
    auto *call = as_map_value ? dyn_cast<Call>(block.value) : nullptr;
    t = call ? info_.types[call] = check_call(*call, true) : check_expr(*block.value);
  }
  scopes_.pop_back();
  return t;
}

// `let @m = hash|lruhash|percpuhash|percpulruhash(N);`. Per-CPU maps hold aggregations
// (count(), sum(), ...), the others plain values, as bpftrace requires. A declared map that no
// probe uses is a warning.
void TypeChecker::check_map_decls(const Program &program) {
  for (const MapDecl &d : program.map_decls) {
    static const char *kTypes[] = {"hash", "lruhash", "percpuhash", "percpulruhash"};
    bool known = false;
    for (const char *k : kTypes)
      known = known || d.map_type == k;
    if (!known) {
      diags_.error(d.range, "invalid BPF map type '" + d.map_type +
                                "' (hash, lruhash, percpuhash, percpulruhash)");
      continue;
    }
    auto it = info_.maps.find(d.name);
    if (it == info_.maps.end()) {
      diags_.warning(d.range, "unused map: " + d.name);
      continue;
    }
    info_.map_decls[d.name] = MapDeclInfo{d.map_type, static_cast<uint32_t>(d.max_entries)};
    bool per_cpu = d.map_type.rfind("percpu", 0) == 0;
    const Type &value = it->second.value;
    if (!value.is_none() && per_cpu != value.is_aggregation())
      diags_.error(d.range, "incompatible map types: " + d.name + " is declared " + d.map_type +
                                " but holds " + value.name() +
                                (per_cpu ? " (per-CPU maps hold aggregations such as count())"
                                         : " (aggregations need percpuhash or percpulruhash)"));
  }
}

namespace {
// A C type without its qualifiers: `const struct timespec *` reads as `struct timespec *`.
std::string unqualified(std::string type) {
  for (const char *q : {"const ", "volatile "})
    for (size_t at; (at = type.find(q)) != std::string::npos;)
      type.erase(at, std::string(q).size());
  return type;
}
}  // namespace

bool TypeChecker::check_args_field(const FieldAccess &fa, const FieldLayout &field) {
  auto it = info_.probes.find(probe_);
  if (it == info_.probes.end() || it->second.size() < 2)
    return true;
  for (const ProbeDesc &p : it->second) {
    auto layout = info_.args_layouts.find(p.name);
    if (layout == info_.args_layouts.end())
      continue;
    const FieldLayout *f = layout->second->find(fa.field);
    if (!f) {
      diags_.error(fa.range, "args of " + p.name + " has no field '" + fa.field + "'");
      return false;
    }
    if (f->kind != field.kind || f->size != field.size || f->is_signed != field.is_signed ||
        unqualified(f->type_name) != unqualified(field.type_name)) {
      diags_.error(fa.range, "field '" + fa.field + "' has different types in the tracepoints of "
                             "this probe (" + field.type_name + ", " + f->type_name +
                             "); use separate probes");
      return false;
    }
  }
  return true;
}

}  // namespace rbt::sema
