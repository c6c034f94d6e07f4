#include <algorithm>
#include <cassert>
#include <cctype>
#include <cstdlib>

#include "c_struct.h"
#include "parse.h"
#include "probe_spec.h"
#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

const Type &SemaInfo::type_of(const Node *n) const {
  static const Type none;
  auto it = types.find(n);
  return it == types.end() ? none : it->second;
}

Type storage_type(const Type &t) {
  if (t.kind == TypeKind::Int) {
    Type wide = Type::integer(64, t.is_signed);
    wide.enum_name = t.enum_name;
    return wide;
  }
  if (t.kind == TypeKind::Tuple) {
    std::vector<Type> elems;
    for (auto &e : t.elems)
      elems.push_back(storage_type(e));
    return Type::record_tuple(std::move(elems), t.field_names);
  }
  return t;
}

void TypeChecker::check_program(const Program &program) {
  changed_ = false;
  check_config(program);
  for (const Probe *probe : program.probes)
    check_probe(*probe);
  check_map_decls(program);
  for (auto &e : attach_errors_)
    diags_.error(e.range, e.message, e.note);
  for (auto &w : skipped_probes_)
    diags_.warning(w.range, w.message, w.note);
  // Reads of maps that no probe assigns, reported once every assignment has been seen.
  for (const MapRef *m : unknown_map_reads_)
    if (!info_.maps.count(m->name))
      diags_.error(m->range, "undefined map " + m->name + " (it is never assigned)");
  for (const MapRef *m : len_maps_) {
    auto it = info_.maps.find(m->name);
    if (it != info_.maps.end() && it->second.key.is_none())
      diags_.error(m->range, "len() counts a map's keys, and " + m->name +
                                 " is a scalar map (it holds one value, with no key)");
  }
}

// $1..$N in an attach point (`profile:hz:$1`, `uprobe:$1:main`) are replaced by the words
// after the script, as bpftrace does; returns the first one that has no value ("" if none).
static std::string expand_attach_positionals(std::string &text, const std::vector<std::string> &args) {
  std::string out;
  for (size_t i = 0; i < text.size(); i++) {
    size_t j = i + 1;
    while (text[i] == '$' && j < text.size() && isdigit(static_cast<unsigned char>(text[j])))
      j++;
    if (j == i + 1) {
      out += text[i];
      continue;
    }
    size_t n = std::strtoul(text.substr(i + 1, j - i - 1).c_str(), nullptr, 10);
    if (n == 0 || n > args.size())
      return text.substr(i, j - i);
    out += args[n - 1];
    i = j - 1;
  }
  text = out;
  return "";
}

// Parses each attach point and lets the environment expand it (library names, wildcards).
// Done once: later passes keep the result.
void TypeChecker::resolve_attach_points(const Probe &probe) {
  auto [it, inserted] = info_.probes.try_emplace(&probe);
  if (!inserted)
    return;
  for (const AttachPoint *ap : probe.attach_points) {
    std::string text = ap->text;
    if (std::string missing = expand_attach_positionals(text, env_.positional); !missing.empty()) {
      attach_errors_.push_back({Severity::Error, ap->range,
                                "attach point uses " + missing + " but no such argument was given",
                                "pass it after the script: rbt SCRIPT ARG..."});
      continue;
    }
    ProbeSpecResult r = parse_probe_spec(text);
    if (!r.error.empty()) {
      attach_errors_.push_back({Severity::Error, ap->range, r.error, {}});
      continue;
    }
    if (!env_.expand_probe) {
      it->second.push_back(r.probe);
      continue;
    }
    auto expanded = env_.expand_probe(r.probe);
    if (!expanded && info_.config.missing_probes != MissingProbes::Error) {
      // missing_probes = warn|ignore: the probe is left out, the others run.
      if (info_.config.missing_probes == MissingProbes::Warn)
        skipped_probes_.push_back({Severity::Warning, ap->range,
                                   expanded.error().why.empty() ? expanded.error().what
                                                                : expanded.error().why,
                                   "skipped: missing_probes = warn"});
      continue;
    }
    if (!expanded) {
      Error &e = expanded.error();
      attach_errors_.push_back({Severity::Error, ap->range, e.why.empty() ? e.what : e.why, e.hint});
      continue;
    }
    for (auto &p : *expanded) {
      // missing_probes = warn|ignore: a tracepoint the kernel does not have is left out now,
      // before its `args` are checked against a format nobody can read.
      if (p.kind == ProbeKind::Tracepoint && info_.config.missing_probes != MissingProbes::Error &&
          env_.tracepoint_format && !env_.tracepoint_format(p)) {
        if (info_.config.missing_probes == MissingProbes::Warn)
          skipped_probes_.push_back({Severity::Warning, ap->range,
                                     "No matches for tracepoint " + p.target + ":" + p.func +
                                         " (the kernel has no such tracepoint)",  // bpftrace's words
                                     "skipped: missing_probes = warn"});
        continue;
      }
      it->second.push_back(std::move(p));
    }
  }
}

void TypeChecker::check_probe(const Probe &probe) {
  probe_ = &probe;
  lowered_stmts_ = 0;
  resolve_attach_points(probe);
  scopes_.assign(1, {});
  ended_vars_.clear();
  let_vars_.clear();
  if (probe.predicate) {
    Type t = check_expr(*probe.predicate);
    expect_int(*probe.predicate, t, "a predicate");
  }
  check_block(*probe.body);
}

void TypeChecker::check_block(const Block &block) { check_stmts(block.stmts); }

void TypeChecker::check_stmt(const Stmt &stmt) {
  // LLVM's loop passes take time quadratic in how deeply loops nest (800 nested while: 50 s);
  // no BPF program the verifier accepts nests loops anywhere near this deep.
  if ((isa<While>(&stmt) || isa<For>(&stmt)) && loop_depth_ == kMaxLoopNesting)
    diags_.error(stmt.range, "loops nest too deeply (more than " +
                                 std::to_string(kMaxLoopNesting) + " levels)");
  lowered_stmts_ = std::min(lowered_stmts_ + unroll_copies_, uint64_t{1} << 62);
  if (!unrolls_.empty() && lowered_stmts_ > kMaxUnrolledStmts &&
      lowered_stmts_ - unroll_copies_ <= kMaxUnrolledStmts)
    diags_.error(unrolls_.front()->range,
                 "unroll makes this probe more than " + std::to_string(kMaxUnrolledStmts) +
                     " statements long; unroll fewer times or use a loop (while, for)");
  switch (stmt.kind) {
  case NodeKind::ExprStmt: {
    auto &e = static_cast<const ExprStmt &>(stmt);
    if (auto *call = dyn_cast<Call>(e.expr))
      info_.types[call] = check_call(*call, false);
    else
      check_expr(*e.expr);
    break;
  }
  case NodeKind::AssignMap:
    check_assign_map(static_cast<const AssignMap &>(stmt));
    break;
  case NodeKind::AssignVar:
    check_assign_var(static_cast<const AssignVar &>(stmt));
    break;
  case NodeKind::VarDecl:
    check_var_decl(static_cast<const VarDecl &>(stmt));
    break;
  case NodeKind::Block:
    check_block(static_cast<const Block &>(stmt));
    break;
  case NodeKind::If: {
    auto &s = static_cast<const If &>(stmt);
    expect_int(*s.cond, check_expr(*s.cond), "an if condition");
    check_block(*s.then_block);
    if (s.else_stmt)
      check_stmt(*s.else_stmt);
    break;
  }
  case NodeKind::While: {
    auto &s = static_cast<const While &>(stmt);
    expect_int(*s.cond, check_expr(*s.cond), "a while condition");
    loop_depth_++;
    check_block(*s.body);
    loop_depth_--;
    break;
  }
  case NodeKind::For: {
    auto &f = static_cast<const For &>(stmt);
    if (!f.hi) {
      check_for_map(f);
      break;
    }
    expect_int(*f.lo, check_expr(*f.lo), "a range's start");
    expect_int(*f.hi, check_expr(*f.hi), "a range's end");
    // The loop variable belongs to the loop's own scope.
    scopes_.emplace_back();
    auto it = info_.vars.find(&f);
    if (it == info_.vars.end()) {
      info_.var_storage.push_back(
          std::make_unique<VarInfo>(VarInfo{f.var->name, Type::integer(64, true)}));
      it = info_.vars.emplace(&f, info_.var_storage.back().get()).first;
    }
    scopes_.back()[f.var->name] = it->second;
    info_.vars[f.var] = it->second;
    info_.types[f.var] = it->second->type;
    loop_depth_++;
    check_block(*f.body);
    loop_depth_--;
    scopes_.pop_back();
    break;
  }
  case NodeKind::Unroll: {
    auto &u = static_cast<const Unroll &>(stmt);
    uint64_t count = u.count;
    if (u.positional) {  // `unroll ($1)`: the argument, a number
      const std::string *arg = u.positional <= env_.positional.size()
                                   ? &env_.positional[u.positional - 1]
                                   : nullptr;
      char *end = nullptr;
      count = arg && !arg->empty() ? std::strtoull(arg->c_str(), &end, 0) : 0;
      if (!arg || arg->empty() || *end != '\0') {
        diags_.error(u.range, "unroll ($" + std::to_string(u.positional) +
                                  ") needs a number as argument " + std::to_string(u.positional));
        count = 1;
      }
      info_.constants[&u] = count;
    }
    if (count < 1 || count > 100)  // bpftrace's words
      diags_.error(u.range, count < 1 ? "unroll minimum value is 1" : "unroll maximum value is 100");
    uint64_t outer = unroll_copies_;
    unrolls_.push_back(&u);
    unroll_copies_ = std::min<uint64_t>(outer * std::clamp<uint64_t>(count, 1, 100),
                                        uint64_t{1} << 40);
    check_block(*u.body);
    unroll_copies_ = outer;
    unrolls_.pop_back();
    break;
  }
  case NodeKind::Jump: {
    auto &s = static_cast<const Jump &>(stmt);
    if (s.jump != JumpKind::Return && loop_depth_ == 0)
      diags_.error(s.range, std::string(s.jump == JumpKind::Break ? "'break'" : "'continue'") +
                                " outside of a loop");
    break;
  }
  default:
    assert(false && "not a statement");
  }
}

void TypeChecker::check_assign_map(const AssignMap &assign) {
  Type key = check_map_key(*assign.map);
  Type value;
  if (auto *call = dyn_cast<Call>(assign.value)) {
    value = check_call(*call, true);
    info_.types[call] = value;
  } else if (auto *block = dyn_cast<BlockExpr>(assign.value)) {
    value = info_.types[block] = check_block_expr(*block, true);
  } else {
    value = check_expr(*assign.value);
  }
  if (value.kind == TypeKind::Void) {
    diags_.error(assign.value->range, "this expression has no value to assign");
    return;
  }
  value = held_value(*assign.value, value);
  if (value.is_none())
    return;
  record_map(*assign.map, key, storage_type(value), assign.value->range);
}

void TypeChecker::record_map(const MapRef &map, const Type &key, const Type &value,
                             const SourceRange &value_range) {
  auto [it, inserted] = info_.maps.try_emplace(map.name, MapInfo{map.name, key, value, {}});
  MapInfo &m = it->second;
  if (inserted) {
    changed_ = true;
    for (const Expr *k : map.keys) {
      if (auto *b = dyn_cast<Builtin>(k))
        m.key_names.push_back(b->name);
      else if (auto *c = dyn_cast<Call>(k))
        m.key_names.push_back(c->name);
      else
        m.key_names.push_back("");
    }
  } else {
    if (!m.value.compatible(value) || m.value.is_aggregation() != value.is_aggregation()) {
      diags_.error(value_range, "type mismatch for " + map.name + ": assigning " + value.name() +
                                    " to a map that holds " + m.value.name());
      return;
    }
    Type unified = Type::unify(m.value, value);
    if (!(unified == m.value)) {
      m.value = unified;
      changed_ = true;
    }
  }
  if (!key.is_none() && !m.key.is_none() && !(Type::unify(m.key, key) == m.key)) {
    m.key = Type::unify(m.key, key);
    changed_ = true;
  }
  info_.types[&map] = m.value;
}

// The key type of `map`, checking it against earlier uses; none() for a map without keys.
Type TypeChecker::check_map_key(const MapRef &map) {
  Type key;
  if (map.keys.size() == 1) {
    key = storage_type(held_value(*map.keys[0], check_expr(*map.keys[0])));
  } else if (map.keys.size() > 1) {
    std::vector<Type> elems;
    for (const Expr *k : map.keys)
      elems.push_back(storage_type(held_value(*k, check_expr(*k))));
    key = Type::tuple(std::move(elems));
  }
  for (const Expr *k : map.keys) {
    const Type &kt = info_.type_of(k);
    if (kt.is_aggregation() || kt.kind == TypeKind::Void)
      diags_.error(k->range, "a map key must be an integer, a string or a tuple, not " +
                                 kt.name());
  }
  auto it = info_.maps.find(map.name);
  if (it != info_.maps.end()) {
    const Type &known = it->second.key;
    if (known.is_none() != key.is_none() ||
        (!key.is_none() && !known.compatible(key))) {
      diags_.error(map.range, map.name + " is used with " +
                                  (key.is_none() ? std::string("no key") : "a key of type " + key.name()) +
                                  " here but " +
                                  (known.is_none() ? std::string("no key") : "a key of type " + known.name()) +
                                  " elsewhere");
      return Type::none();
    }
  }
  return key;
}

void TypeChecker::check_assign_var(const AssignVar &assign) {
  Type t = check_expr(*assign.value);
  if (t.kind == TypeKind::Void) {
    diags_.error(assign.value->range, "this expression has no value to assign");
    return;
  }
  if (t.is_aggregation()) {
    diags_.error(assign.value->range, "an aggregation can only be stored in a map");
    return;
  }
  if (t.is_record() && (t = held_value(*assign.value, t)).is_none())
    return;
  VarInfo *var = nullptr;
  for (auto s = scopes_.rbegin(); s != scopes_.rend() && !var; ++s) {
    auto it = s->find(assign.var->name);
    if (it != s->end())
      var = it->second;
  }
  if (auto legacy = info_.probe_scoped_vars.find({probe_, assign.var->name});
      !var && legacy != info_.probe_scoped_vars.end()) {
    var = legacy->second.var;
    scopes_.front()[assign.var->name] = var;  // the probe's scope: visible from here on
  }
  if (!var) {
    auto it = info_.vars.find(&assign);
    if (it == info_.vars.end()) {
      info_.var_storage.push_back(std::make_unique<VarInfo>(VarInfo{assign.var->name, {}}));
      it = info_.vars.emplace(&assign, info_.var_storage.back().get()).first;
    }
    var = it->second;
    scopes_.back()[assign.var->name] = var;
  }
  info_.vars[assign.var] = var;
  assign_var_type(var, t, *assign.value);
  info_.types[assign.var] = var->type;
}

void TypeChecker::assign_var_type(VarInfo *var, const Type &t, const Expr &value) {
  if (t.is_none())
    return;
  Type st = storage_type(t);
  Type natural = var->declared_type ? var->type : natural_type(value, t);
  if (var->natural.is_none() || !var->natural.compatible(natural))
    var->natural = natural;
  else
    var->natural = Type::unify(var->natural, natural);
  if (var->declared_type) {
    // `let $x: uint16`: the value converts to the declared type (a literal must fit in it).
    if (!var->type.compatible(st) && !(var->type.is_pointer() && st.is_scalar()))
      diags_.error(value.range, "type mismatch for " + var->name + ": assigning " + st.name() +
                                    " to a variable declared " + var->type.name());
    else if (auto *lit = dyn_cast<IntLit>(&value); lit && var->type.kind == TypeKind::Int &&
                                                     var->type.size < 8 && !lit->is_bool &&
                                                     lit->value >> (var->type.size * 8 - var->type.is_signed))
      diags_.error(value.range, "integer " + std::to_string(lit->value) + " does not fit in " +
                                    var->type.name() + " (cast it to say so)");
    return;
  }
  if (var->type.is_none() || (var->untyped_let && !st.is_int())) {
    var->type = st;
    var->untyped_let = false;
    changed_ = true;
  } else if (!var->type.compatible(st)) {
    diags_.error(value.range, "type mismatch for " + var->name + ": assigning " + st.name() +
                                  " to a variable that holds " + var->type.name());
  } else if (Type u = Type::unify(var->type, st); !(u == var->type)) {
    var->type = u;
    changed_ = true;
  }
}

// bpftrace types an integer literal as the smallest signed integer that holds it (1 and -1 are
// int8, -1000 int16; beyond int64, uint64), a variable as the widest value assigned to it, and
// a tuple by its elements.
Type TypeChecker::natural_type(const Expr &e, const Type &t) const {
  const Expr *lit_expr = &e;
  bool negative = false;
  if (auto *u = dyn_cast<Unary>(&e); u && u->op == UnaryOp::Neg)
    lit_expr = u->operand, negative = true;
  if (auto *lit = dyn_cast<IntLit>(lit_expr); lit && !lit->is_bool && t.kind == TypeKind::Int) {
    if (!negative && lit->value > uint64_t(INT64_MAX))
      return Type::integer(64, false);
    for (unsigned bits : {8u, 16u, 32u})
      if (negative ? lit->value <= (uint64_t(1) << (bits - 1)) : lit->value < (uint64_t(1) << (bits - 1)))
        return Type::integer(bits, true);
    return Type::integer(64, true);
  }
  if (auto *v = dyn_cast<Var>(&e)) {
    auto it = info_.vars.find(v);
    if (it != info_.vars.end() && !it->second->natural.is_none())
      return it->second->natural;
  }
  if (auto *tu = dyn_cast<Tuple>(&e); tu && t.is_tuple() && t.elems.size() == tu->elems.size()) {
    std::vector<Type> elems;
    for (size_t i = 0; i < t.elems.size(); i++)
      elems.push_back(natural_type(*tu->elems[i], t.elems[i]));
    return Type::record_tuple(std::move(elems), t.field_names);
  }
  return t;
}

bool TypeChecker::expect_int(const Expr &e, const Type &t, const std::string &what) {
  if (t.is_none() || t.is_scalar())
    return true;
  diags_.error(e.range, what + " must be an integer, not " + t.name());
  return false;
}

const StrLit *TypeChecker::expect_literal(const Expr &e, const std::string &what) {
  auto *lit = dyn_cast<StrLit>(&e);
  if (!lit) {
    check_expr(e);
    diags_.error(e.range, what + " must be a string literal");
    return nullptr;
  }
  info_.types[lit] = Type::string(static_cast<uint32_t>(lit->value.size() + 1));
  return lit;
}

std::optional<int64_t> TypeChecker::const_int(const Expr &e) {
  if (auto *lit = dyn_cast<IntLit>(&e))
    return static_cast<int64_t>(lit->value);
  if (auto *p = dyn_cast<Positional>(&e)) {  // a number on the command line is a literal
    auto c = info_.constants.find(p);
    return c == info_.constants.end() ? std::nullopt : std::optional<int64_t>(c->second);
  }
  // Arithmetic of constants folds ((1, 2)[1 - 1], lhist(x, 0, 10 * 1000, 100)); it wraps.
  if (auto *bin = dyn_cast<Binary>(&e)) {
    auto l = const_int(*bin->lhs), r = l ? const_int(*bin->rhs) : std::nullopt;
    if (!r)
      return std::nullopt;
    uint64_t a = static_cast<uint64_t>(*l), b = static_cast<uint64_t>(*r);
    switch (bin->op) {
    case BinaryOp::Add: return static_cast<int64_t>(a + b);
    case BinaryOp::Sub: return static_cast<int64_t>(a - b);
    case BinaryOp::Mul: return static_cast<int64_t>(a * b);
    case BinaryOp::BitAnd: return static_cast<int64_t>(a & b);
    case BinaryOp::BitOr: return static_cast<int64_t>(a | b);
    case BinaryOp::BitXor: return static_cast<int64_t>(a ^ b);
    case BinaryOp::Shl: return b < 64 ? std::optional<int64_t>(static_cast<int64_t>(a << b)) : std::nullopt;
    default: return std::nullopt;
    }
  }
  if (auto *u = dyn_cast<Unary>(&e); u && u->op == UnaryOp::Neg)
    if (auto v = const_int(*u->operand))  // wraps: -(-9223372036854775808) is UB in int64
      return static_cast<int64_t>(0 - static_cast<uint64_t>(*v));
  return std::nullopt;
}

[[gnu::noinline]] Type TypeChecker::check_positional(const Positional &p) {
  // $N is a number when its argument is one (123, -5, 0x1f, 0775, 0xffffffffffffffff: a
  // constant, usable where a literal is), a string otherwise; a missing one is 0. $# counts.
  info_.positional = env_.positional;
  const std::string *arg = p.index && p.index <= env_.positional.size()
                               ? &env_.positional[p.index - 1]
                               : nullptr;
  if (arg && !numeric_argument(*arg))
    return Type::string(static_cast<uint32_t>(arg->size() + 1));
  auto n = arg ? numeric_argument(*arg) : std::nullopt;
  uint64_t value = p.index == 0 ? env_.positional.size() : n ? n->value : 0;
  info_.constants[&p] = value;
  return Type::integer(64, !n || n->negative || value <= uint64_t(INT64_MAX));
}

[[gnu::noinline]] Type TypeChecker::check_var(const Var &v) {
  Type t;
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    if (auto it = s->find(v.name); it != s->end()) {
      info_.vars[&v] = it->second;
      t = it->second->type;
      break;
    }
  }
  // Assigned in a block that has ended (`if (...) { $a = 1; } else { $a = 2; } print($a)`):
  // today's bpftrace refuses this, 0.17's variables lived for the whole probe, and its tools
  // (Debian's /usr/sbin/*.bt) rely on that. Not for a name a `let` declared: that one asked
  // for block scope. The next pass binds every assignment of the name to one variable.
  if (!info_.vars.count(&v) && ended_vars_.count(v.name) && !let_vars_.count(v.name) && probe_) {
    auto &scoped = info_.probe_scoped_vars[{probe_, v.name}];
    if (!scoped.var) {
      info_.var_storage.push_back(std::make_unique<VarInfo>(VarInfo{v.name, {}}));
      scoped.var = info_.var_storage.back().get();
      scoped.var->probe_scoped = true;
      scoped.first_use = &v;
      changed_ = true;
    }
    info_.vars[&v] = scoped.var;
    t = scoped.var->type;
  }
  auto found = info_.vars.find(&v);
  if (found == info_.vars.end()) {
    diags_.error(v.range, "variable " + v.name + " is used before it is assigned",
                 ended_vars_.count(v.name)
                     ? "it was assigned in a block that has ended, and a variable lives in the "
                       "block that assigns it (as in today's bpftrace); declare it before that "
                       "block: let " + v.name + ";"
                     : "");
  } else if (found->second->probe_scoped &&
             info_.probe_scoped_vars[{probe_, v.name}].first_use == &v) {
    diags_.warning(v.range, "variable " + v.name + " is used after the block that assigned it",
                   "it is kept for the whole probe, as bpftrace 0.17 did (today's bpftrace "
                   "refuses this); declare it before that block to say so: let " + v.name + ";");
  }
  return t;
}

[[gnu::noinline]] Type TypeChecker::check_map_read(const MapRef &m) {
  Type t;
  check_map_key(m);
  auto it = info_.maps.find(m.name);
  if (it == info_.maps.end()) {
    unknown_map_reads_.push_back(&m);
  } else if (const Type &v = it->second.value; v.is_aggregation()) {
    // count, sum, min, max and avg read as the integer they print (their CPUs combined, as
    // bpftrace coerces them); stats and histograms are only printed.
    if (v.kind == TypeKind::Stats || v.is_histogram())
      diags_.error(m.range, "the value of " + m.name + " (" + v.name() +
                                ") cannot be read in an expression; it is only printed");
    else
      t = Type::integer(64, v.kind != TypeKind::Count && v.is_signed);
  } else {
    t = it->second.value;
  }
  return t;
}

[[gnu::noinline]] Type TypeChecker::check_ternary(const Ternary &te) {
  Type t;
  expect_int(*te.cond, check_expr(*te.cond), "a condition");
  Type a = check_expr(*te.then_expr), b = check_expr(*te.else_expr);
  if (a.is_none() || b.is_none())
    return t;
  if (a.kind == TypeKind::Void && b.kind == TypeKind::Void)
    return a;  // `c ? printf("yes") : printf("no")`: an if/else, as in bpftrace
  if (a.kind == TypeKind::Void || b.kind == TypeKind::Void) {
    diags_.error(te.range, "a branch of this conditional has no value");
    return t;
  }
  if (!a.compatible(b) || a.is_aggregation()) {
    diags_.error(te.range, "the branches of '?:' have different types: " + a.name() + " and " +
                               b.name());
    return t;
  }
  t = Type::unify(a, b);
  return t;
}

[[gnu::noinline]] Type TypeChecker::check_tuple(const Tuple &tu) {
  Type t;
  std::vector<Type> elems;
  bool ok = true;
  for (const Expr *e : tu.elems) {
    Type et = held_value(*e, check_expr(*e));
    if (et.is_none() || et.kind == TypeKind::Void || et.is_aggregation()) {
      if (!et.is_none())
        diags_.error(e->range, "a tuple element cannot be " + et.name());
      ok = false;
    }
    // Elements keep their own widths, laid out with natural alignment as bpftrace packs
    // them: ((int8)1, (int16)1, (int32)1) is 8 bytes. Maps and events still store every
    // integer as 64 bits (storage_type).
    elems.push_back(et);
  }
  if (ok)
    t = Type::record_tuple(std::move(elems), tu.names);  // names: none for a plain tuple
  return t;
}

// check_expr recurses once per level of nesting (up to kMaxNesting, 1000), so its frame is
// kept small: the cases with strings and vectors of their own are functions that are not
// inlined into it. Inlined, they made its frame 8.3 KB under ASan (3.5 KB without them), and
// 900 nested `!` overflowed an 8 MB stack (scripts/sanitize:
// FuzzRegression.deep_expressions_are_an_error_not_a_stack_overflow).
Type TypeChecker::check_expr(const Expr &expr) {
  Type t;
  switch (expr.kind) {
  case NodeKind::IntLit: {
    auto &lit = static_cast<const IntLit &>(expr);
    t = lit.is_bool ? Type::boolean()
                    : Type::integer(64, lit.value <= static_cast<uint64_t>(INT64_MAX));
    break;
  }
  case NodeKind::Positional:
    t = check_positional(static_cast<const Positional &>(expr));
    break;
  case NodeKind::StrLit:
    t = Type::string(static_cast<uint32_t>(static_cast<const StrLit &>(expr).value.size() + 1));
    break;
  case NodeKind::Builtin:
    t = check_builtin_var(static_cast<const Builtin &>(expr));
    break;
  case NodeKind::Var:
    t = check_var(static_cast<const Var &>(expr));
    break;
  case NodeKind::MapRef:
    t = check_map_read(static_cast<const MapRef &>(expr));
    break;
  case NodeKind::Call:
    t = check_call(static_cast<const Call &>(expr), false);
    break;
  case NodeKind::Binary:
    t = check_binary(static_cast<const Binary &>(expr));
    break;
  case NodeKind::Unary:
    t = check_unary(static_cast<const Unary &>(expr));
    break;
  case NodeKind::BlockExpr:
    t = check_block_expr(static_cast<const BlockExpr &>(expr));
    break;
  case NodeKind::Ternary:
    t = check_ternary(static_cast<const Ternary &>(expr));
    break;
  case NodeKind::Tuple:
    t = check_tuple(static_cast<const Tuple &>(expr));
    break;
  case NodeKind::FieldAccess:
    t = check_field_access(static_cast<const FieldAccess &>(expr));
    break;
  case NodeKind::Cast:
    t = check_cast(static_cast<const Cast &>(expr));
    break;
  case NodeKind::TypeQuery:
    t = check_type_query(static_cast<const TypeQuery &>(expr));
    break;
  case NodeKind::TypeExpr:
    diags_.error(expr.range, "typeof(...) names a type, which has no value here (sizeof and "
                             "typeof take it)");
    break;
  case NodeKind::Index:
    t = check_index(static_cast<const Index &>(expr));
    break;
  default:
    assert(false && "not an expression");
  }
  info_.types[&expr] = t;
  return t;
}

namespace {
constexpr uint32_t kDataLocStrlen = 64;
}  // namespace

Type field_type(const FieldLayout &f, bool remote, bool user_space) {
  switch (f.kind) {
  case FieldLayout::Kind::Int:
    if (f.size == 1 || f.size == 2 || f.size == 4 || f.size == 8)
      return Type::integer(f.size * 8, f.is_signed);
    return Type::none();
  case FieldLayout::Kind::CharArray:
    return Type::string(f.count);
  case FieldLayout::Kind::Array: {
    // An element whose layout is known: an array of arrays (`int y[2][2]`) or of pointers.
    if (f.element && f.element->kind != FieldLayout::Kind::Record) {
      Type elem = field_type(*f.element, remote, user_space);
      if (elem.is_none() || elem.size * f.count != f.size)
        return Type::none();
      return Type::array(std::move(elem), f.count);
    }
    // Arrays of integers (`__u8 saddr[4]`); arrays of structs are not readable yet.
    uint32_t elem = f.count ? f.size / f.count : 0;
    bool integers = f.type_name.find("struct") == std::string::npos &&
                    f.type_name.find("union") == std::string::npos &&
                    f.type_name.find('*') == std::string::npos;
    if (!integers || f.count * elem != f.size || (elem != 1 && elem != 2 && elem != 4 && elem != 8))
      return Type::none();
    return Type::array(Type::integer(elem * 8, f.is_signed), f.count);
  }
  case FieldLayout::Kind::DataLoc:
    return remote ? Type::none() : Type::string(kDataLocStrlen);
  case FieldLayout::Kind::Record:
    return Type::record_of(f.type_name, f.size, remote, user_space);
  case FieldLayout::Kind::Pointer: {
    Type pointee;
    if (f.pointee && f.pointee->kind == FieldLayout::Kind::Record)
      pointee = Type::record_of(f.pointee->type_name, f.pointee->size, true, user_space);
    else if (f.pointee && f.pointee->kind == FieldLayout::Kind::Int && f.pointee->size)
      pointee = Type::integer(f.pointee->size * 8, f.pointee->is_signed);
    else if (f.pointee && f.pointee->kind == FieldLayout::Kind::Pointer)  // `char **argv`
      pointee = field_type(*f.pointee, true, user_space);
    return Type::pointer(pointee, user_space);
  }
  default:
    return Type::none();
  }
}

bool TypeChecker::probe_reads_user_space() const {
  auto it = info_.probes.find(probe_);
  if (it == info_.probes.end() || it->second.empty())
    return false;
  const ProbeDesc &p = it->second.front();
  switch (p.kind) {
  case ProbeKind::Uprobe:
  case ProbeKind::Uretprobe:
  case ProbeKind::Usdt:
    return true;
  case ProbeKind::Tracepoint:
    return p.target == "syscalls";  // syscall arguments are user addresses
  default:
    return false;
  }
}

const RecordLayout *TypeChecker::record_layout(const Type &record) {
  if (auto it = info_.records.find(record.record); it != info_.records.end())
    return it->second;
  return find_struct(record.record);
}

const RecordLayout *TypeChecker::find_struct(const std::string &name) const {
  if (auto it = info_.script_structs.find(name); it != info_.script_structs.end())
    return it->second.get();
  return env_.kernel_struct ? env_.kernel_struct(name) : nullptr;
}

[[gnu::noinline]] Type TypeChecker::check_field_access(const FieldAccess &fa) {
  Type base = check_expr(*fa.base);
  if (base.is_none())
    return base;
  if (base.is_named_tuple() && !fa.arrow) {
    size_t index = base.field_index(fa.field);
    if (index < base.elems.size())
      return base.elems[index];
    diags_.error(fa.range, base.name() + " has no field '" + fa.field + "'");
    return Type::none();
  }
  if (base.is_tuple() && !fa.arrow && !fa.field.empty() && isdigit(static_cast<unsigned char>(fa.field[0]))) {
    size_t index = std::stoul(fa.field);
    if (index < base.elems.size())
      return base.elems[index];
    diags_.error(fa.range, "tuple index " + fa.field + " is out of range for " + base.name());
    return Type::none();
  }
  if (base.is_struct())
    return struct_field(fa, base);
  Type record;
  if (base.is_pointer() && !base.elems.empty() && base.elems[0].is_record()) {
    record = base.elems[0];  // `p.field` dereferences p, as `p->field` does (current bpftrace)
  } else if (base.is_record()) {
    // `args->field` is the 0.17 spelling of `args.field`; current bpftrace takes -> as an
    // alias of . everywhere.
    record = base;
  } else {
    diags_.error(fa.range, "cannot access field '" + fa.field + "' of a value of type " +
                               base.name());
    return Type::none();
  }
  const RecordLayout *layout = record_layout(record);
  if (!layout) {
    diags_.error(fa.range, "the layout of " + record.name() +
                               " is unknown (the kernel has no BTF for it)");
    return Type::none();
  }
  const FieldLayout *field = layout->find(fa.field);
  if (!field) {
    diags_.error(fa.range, record.name() + " has no field '" + fa.field + "'");
    return Type::none();
  }
  if (!record.remote && !check_args_field(fa, *field))
    return Type::none();
  if (field->bit_size && (field->kind != FieldLayout::Kind::Int ||
                          field->bit_offset + field->bit_size > 64)) {
    diags_.error(fa.range, "bit field '" + fa.field + "' spans more than 8 bytes: rbt cannot "
                           "read it");
    return Type::none();
  }
  Type t = field_type(*field, record.remote, record.user_space);
  if (t.is_none() && record.remote)
    t = struct_array(fa, *field, record.user_space);
  if (field->bit_size)
    t.is_signed = false;  // bpftrace reads every bit field as unsigned (`short b:8` of 0xd9: 217)
  else if (t.kind == TypeKind::Int)
    t.enum_name = kernel_enum_of(*field);
  if (t.is_none() && field->kind == FieldLayout::Kind::Float)
    float_field_error(fa, field->type_name);
  else if (t.is_none())
    diags_.error(fa.range, "field '" + fa.field + "' has a type rbt cannot read yet (" +
                               field->type_name + ")");
  info_.fields[&fa] = field;
  return t;
}

// A field of a kernel enum type (a tracepoint's `enum skb_drop_reason reason`): its values
// print as the enumerators' names, as bpftrace shows them, the enum taken from BTF (a script's
// enum of the same name wins). Empty for other fields.
std::string TypeChecker::kernel_enum_of(const FieldLayout &field) {
  std::string type = field.type_name;
  for (const char *q : {"const ", "volatile "})
    if (type.starts_with(q))
      type.erase(0, std::string(q).size());
  if (field.kind != FieldLayout::Kind::Int || !type.starts_with("enum "))
    return {};
  std::string name = type.substr(5);
  if (info_.script_enums.count(name))
    return name;
  auto values = env_.kernel_enum_type ? env_.kernel_enum_type(name)
                                      : std::vector<std::pair<std::string, int64_t>>{};
  if (values.empty())
    return {};
  info_.script_enums[name] = EnumDesc{name, std::move(values)};
  return name;
}

[[gnu::noinline]] Type TypeChecker::check_cast(const Cast &cast) {
  Type operand = check_expr(*cast.operand);
  if (operand.is_none())
    return operand;
  if (cast.is_array || operand.is_array())
    return check_array_cast(cast, operand);
  if (!operand.is_scalar()) {
    diags_.error(cast.range, "cannot cast a value of type " + operand.name());
    return Type::none();
  }
  bool user = operand.is_pointer() ? operand.user_space : probe_reads_user_space();
  info_.user_space[&cast] = user;
  Type target;
  if (cast.is_struct) {
    const RecordLayout *layout = find_struct(cast.type_name);
    if (!layout) {
      diags_.error(cast.range, "unknown struct '" + cast.type_name + "'");
      return Type::none();
    }
    return pointer_to(Type::record_of(cast.type_name, layout->size, true, user), cast.pointers, user);
  }
  if (cast.type_name.starts_with("enum ")) {  // `(enum Foo)$x`: printed as Foo's names
    std::string name = cast.type_name.substr(5);
    if (!info_.script_enums.count(name) || cast.pointers) {
      diags_.error(cast.range, "unknown enum '" + name + "' (only enums the script defines)");
      return Type::none();
    }
    target = Type::integer(64, true);
    target.enum_name = name;
    return target;
  }
  if (cast.type_name == "void" && !cast.pointers) {
    diags_.error(cast.range, "cannot cast to void (only to a pointer, as in (void *)p)");
    return Type::none();
  }
  target = int_type_named(cast.type_name);  // void: none, what `void *` points to
  return pointer_to(target, cast.pointers, user);
}

// sizeof(x) is the bytes x takes in bpftrace (a string its buffer, an int its width, a variable
// its natural type's, a tuple packed as C packs a struct); sizeof and offsetof of structs come
// from their layout (the script's or BTF's), as in C.
[[gnu::noinline]] Type TypeChecker::check_type_query(const TypeQuery &q) {
  uint64_t value = 0;
  auto *index = dyn_cast<Index>(q.operand);
  if (auto *te = dyn_cast<TypeExpr>(index ? index->base : q.operand)) {
    // sizeof(t) of a type handed to a macro; sizeof(t[N]): N of them.
    Type t = resolve_type_expr(*te);
    if (t.is_none())
      return t;
    const RecordLayout *layout = t.is_record() ? record_layout(t) : nullptr;
    value = layout ? layout->size : t.size;
    if (index) {
      auto n = const_int(*index->index);
      if (!n || *n < 0) {
        diags_.error(index->index->range, "the number of elements must be a constant");
        return Type::none();
      }
      value *= static_cast<uint64_t>(*n);
    }
  } else if (q.operand) {
    Type t = check_expr(*q.operand);
    if (t.is_none())
      return t;
    t = natural_type(*q.operand, t);
    if (t.is_record()) {
      const RecordLayout *layout = record_layout(t);
      value = layout ? layout->size : t.size;
    } else {
      value = t.size;
    }
  } else if (!q.is_struct) {
    if (q.type_name == "void") {
      diags_.error(q.range, "void has no size");
      return Type::none();
    }
    value = int_type_named(q.type_name).size;
  } else {
    const RecordLayout *layout = find_struct(q.type_name);
    if (!layout) {
      diags_.error(q.range, "unknown struct '" + q.type_name + "'");
      return Type::none();
    }
    value = layout->size;
    // `offsetof(struct Foo, bar.x)`: the offsets along the path add up.
    if (!q.field.empty())
      value = 0;
    const RecordLayout *record = layout;
    for (size_t start = 0; !q.field.empty() && start <= q.field.size();) {
      size_t dot = std::min(q.field.find('.', start), q.field.size());
      std::string name = q.field.substr(start, dot - start);
      const FieldLayout *field = record ? record->find(name) : nullptr;
      if (!field) {
        diags_.error(q.range, (record ? "struct " + record->name : std::string("a field that is no struct")) +
                                  " has no field '" + name + "'");
        return Type::none();
      }
      value += field->offset;
      record = field->kind == FieldLayout::Kind::Record ? find_struct(field->type_name) : nullptr;
      start = dot + 1;
    }
  }
  info_.constants[&q] = value;
  return Type::integer(64, false);
}

// `for ($kv : @m) { }`: $kv is (key, value) of each entry, the body a BPF callback of
// bpf_for_each_map_elem. Aggregation maps are per-CPU, where the helper shows only this CPU's
// share: a count/sum/min/max/avg value is read as an integer, its CPUs combined (as in an
// expression); stats and histograms are refused.
void TypeChecker::check_for_map(const For &f) {
  auto &map = static_cast<const MapRef &>(*f.lo);
  Type kv = Type::none();
  auto it = info_.maps.find(map.name);
  if (it == info_.maps.end() || it->second.value.is_none()) {
    diags_.error(map.range, "undefined map " + map.name + " (it is never assigned)");
  } else if (it->second.key.is_none()) {
    diags_.error(map.range, "for needs a map with keys; " + map.name + " has none");
  } else if (const Type &v = it->second.value;
             v.is_aggregation() && (v.kind == TypeKind::Stats || v.is_histogram())) {
    diags_.error(map.range, "for cannot iterate " + map.name + ": its " +
                                it->second.value.name() + " values are kept per CPU");
  } else if (v.is_aggregation()) {
    kv = Type::tuple({it->second.key, Type::integer(64, v.kind != TypeKind::Count && v.is_signed)});
  } else {
    kv = Type::tuple({it->second.key, it->second.value});
  }
  scopes_.emplace_back();
  auto vit = info_.vars.find(&f);
  if (vit == info_.vars.end()) {
    info_.var_storage.push_back(std::make_unique<VarInfo>(VarInfo{f.var->name, kv}));
    vit = info_.vars.emplace(&f, info_.var_storage.back().get()).first;
  }
  vit->second->type = kv;
  scopes_.back()[f.var->name] = vit->second;
  info_.vars[f.var] = vit->second;
  info_.types[f.var] = kv;
  loop_depth_++;
  check_block(*f.body);
  loop_depth_--;
  scopes_.pop_back();
}

// A constant index must name one of `count` elements; a computed one is checked when it runs.
bool TypeChecker::constant_index_fits(const Index &x, uint64_t count, const Type &base) {
  auto *lit = dyn_cast<IntLit>(x.index);
  if (!lit || lit->value < count)
    return true;
  diags_.error(x.index->range, "the index " + std::to_string(lit->value) +  // bpftrace's words
                                   " is out of bounds for " +
                                   (base.is_string() ? "string" : "array") + " of size " +
                                   std::to_string(count));
  return false;
}

// arr[i]: an integer array's element. A constant index out of range is an error; a computed
// one reads 0 when out of range (the lowering checks it, and the verifier needs that check).
[[gnu::noinline]] Type TypeChecker::check_index(const Index &x) {
  Type base = check_expr(*x.base);
  Type index = check_expr(*x.index);
  if (base.is_none() || index.is_none())
    return Type::none();
  if (base.is_pointer()) {
    // p[i] is *(p + i).
    if (!expect_int(*x.index, index, "an index"))
      return Type::none();
    return pointee_type(x, base);
  }
  if (base.is_string()) {
    // s[i]: the string's i-th byte, a char (int8), as bpftrace (upstream opensnoop.bt:
    // `$path[0] != "/"[0]`).
    if (!expect_int(*x.index, index, "a string index") || !constant_index_fits(x, base.size, base))
      return Type::none();
    return Type::integer(8, true);
  }
  if (base.is_tuple()) {
    // $t[1 + 1]: as $t.2; the index must be known when the script compiles (bpftrace).
    auto n = const_int(*x.index);
    if (!n || *n < 0 || static_cast<uint64_t>(*n) >= base.elems.size()) {
      diags_.error(x.index->range, n ? "tuple index " + std::to_string(*n) +
                                           " is out of range for " + base.name()
                                     : std::string("a tuple's index must be a constant"));
      return Type::none();
    }
    info_.constants[&x] = static_cast<uint64_t>(*n);
    return base.elems[static_cast<size_t>(*n)];
  }
  if (!base.is_array()) {
    diags_.error(x.range, "cannot index a value of type " + base.name() +
                              " (only arrays, strings, tuples and pointers)");
    return Type::none();
  }
  // A flexible array member (`int y[0];` ending a struct) reached through a pointer: `p.y[i]`
  // reads past the struct's end, as in C and bpftrace, with no bound to check.
  if (auto *fa = dyn_cast<FieldAccess>(x.base); fa && base.count == 0 && !base.elems.empty()) {
    const Type &record = info_.type_of(fa->base);
    if (record.is_pointer() || (record.is_record() && record.remote))
      return expect_int(*x.index, index, "an array index") ? base.elems[0] : Type::none();
  }
  if (!expect_int(*x.index, index, "an array index") || !constant_index_fits(x, base.count, base))
    return Type::none();
  return base.elems[0];
}

Type TypeChecker::check_binary(const Binary &bin) {
  Type a = check_expr(*bin.lhs), b = check_expr(*bin.rhs);
  // A map read before any assignment typed it (`@n = @n + 1`, `@n++`) takes the other side's
  // integer type, as in bpftrace.
  // So does a variable declared by `let $n;` before anything typed it (`$n += 1`).
  auto untyped_map = [&](const Expr *e, const Type &t) {
    return t.is_none() && (isa<MapRef>(e) || (isa<Var>(e) && info_.vars.count(e)));
  };
  if (untyped_map(bin.lhs, a) && b.is_int())
    a = Type::integer(64, true);
  if (untyped_map(bin.rhs, b) && a.is_int())
    b = Type::integer(64, true);
  if (a.is_none() || b.is_none())
    return Type::none();
  std::string op = binary_op_spelling(bin.op);
  if (a.is_string() && b.is_string() && (bin.op == BinaryOp::Eq || bin.op == BinaryOp::Ne))
    return Type::boolean();
  // Arrays of one type, and buffers (their lengths and the bytes within), compare bytewise.
  if ((bin.op == BinaryOp::Eq || bin.op == BinaryOp::Ne) &&
      ((a.is_array() && a.name() == b.name()) || (a.is_buffer() && b.is_buffer()))) {
    if (std::max(a.size, b.size) > kMaxComparedBytes) {
      diags_.error(bin.range, "'" + op + "' compares values of at most " +
                                  std::to_string(kMaxComparedBytes) + " bytes, not " + a.name());
      return Type::none();
    }
    return Type::boolean();
  }
  if (!a.is_scalar() || !b.is_scalar()) {
    diags_.error(bin.range, "type mismatch for '" + op + "': " + a.name() + " " + op + " " +
                                b.name() +
                                (a.is_string() && b.is_string()
                                     ? " (strings support only == and !=)"
                                     : ""));
    return Type::none();
  }
  if (is_comparison(bin.op) || bin.op == BinaryOp::LogicalAnd || bin.op == BinaryOp::LogicalOr)
    return Type::boolean();
  // Pointer arithmetic as in C: p + n and p - n move by n elements; p - q counts elements.
  if (a.is_pointer() && b.is_int() && (bin.op == BinaryOp::Add || bin.op == BinaryOp::Sub))
    return a;
  if (b.is_pointer() && a.is_int() && bin.op == BinaryOp::Add)
    return b;
  if (a.is_pointer() && b.is_pointer() && bin.op == BinaryOp::Sub)
    return Type::integer(64, true);
  // A constant right operand that BPF would quietly turn into 0 (x / 0, x % 0) or into
  // whatever the shift instruction does (x << 64) is a mistake in the script.
  if (auto r = const_int(*bin.rhs)) {
    if ((bin.op == BinaryOp::Div || bin.op == BinaryOp::Mod) && *r == 0) {
      diags_.error(bin.range, bin.op == BinaryOp::Div ? "division by zero" : "modulo by zero");
      return Type::none();
    }
    if ((bin.op == BinaryOp::Shl || bin.op == BinaryOp::Shr) && (*r < 0 || *r > 63)) {
      diags_.error(bin.range, "shift by " + std::to_string(*r) +
                                  " is out of range (a 64-bit value shifts by 0 to 63)");
      return Type::none();
    }
  }
  return Type::integer(64, a.is_signed || b.is_signed);
}

Type TypeChecker::check_call(const Call &call, bool as_map_value) {
  const BuiltinInfo *b = find_builtin_call(call.name);
  if (!b) {
    diags_.error(call.range, "unknown function '" + call.name + "'");
    for (const Expr *a : call.args)
      check_expr(*a);
    return Type::none();
  }
  info_.builtins[&call] = b->id;
  int n = static_cast<int>(call.args.size());
  if (n < b->min_args || n > b->max_args) {
    std::string expected = b->min_args == b->max_args
                               ? std::to_string(b->min_args)
                               : b->max_args >= 64 ? "at least " + std::to_string(b->min_args)
                                                   : std::to_string(b->min_args) + " to " +
                                                         std::to_string(b->max_args);
    diags_.error(call.range, call.name + "() takes " + expected + " argument" +
                                 (expected == "1" ? "" : "s") + ", got " + std::to_string(n));
    return Type::none();
  }
  if (b->kind == BuiltinInfo::Kind::Agg && !as_map_value) {
    diags_.error(call.range, call.name + "() is an aggregation: it can only be assigned to a map, "
                                         "as in @x = " + call.name + "(...)");
    return Type::none();
  }
  switch (b->id) {
#define RBT_FUNC(id, name, min_args, max_args)                                                     \
  case BuiltinId::id:                                                                              \
    return check_##id(call);
#define RBT_AGG(id, name, min_args, max_args)                                                      \
  case BuiltinId::id:                                                                              \
    return check_##id(call);
#include "builtins.def"
  default:
    assert(false && "builtin var in call position");
    return Type::none();
  }
}

[[gnu::noinline]] Type TypeChecker::check_builtin_var(const Builtin &node) {
  const BuiltinInfo *b = find_builtin_var(node.name);
  if (!b) {
    if (find_builtin_call(node.name)) {
      diags_.error(node.range, "'" + node.name + "' is a function: call it as " + node.name + "()");
    } else if (auto e = info_.script_enumerators.find(node.name);
               e != info_.script_enumerators.end()) {
      info_.constants[&node] = static_cast<uint64_t>(e->second.second);
      Type t = Type::integer(64, true);
      t.enum_name = e->second.first;  // printed as the enumerator's name
      return t;
    } else if (auto value = env_.kernel_enum ? env_.kernel_enum(node.name) : std::nullopt) {
      info_.constants[&node] = static_cast<uint64_t>(*value);  // a kernel enumerator
      return Type::integer(64, true);
    } else
      diags_.error(node.range, "unknown identifier '" + node.name + "'");
    return Type::none();
  }
  info_.builtins[&node] = b->id;
  switch (b->id) {
#define RBT_VAR(id, name)                                                                          \
  case BuiltinId::id:                                                                              \
    return check_##id(node);
#include "builtins.def"
  default:
    assert(false && "builtin call in identifier position");
    return Type::none();
  }
}

namespace {

// The structs, unions and enums the script defines at its top, in the order written (a
// definition may use the ones before it).
void define_c_types(const Program &program, DiagnosticEngine &diags, SemaInfo &info,
                    const Environment &env) {
  int anonymous = 0;
  auto find = [&](const std::string &name) -> const RecordLayout * {
    if (auto it = info.script_structs.find(name); it != info.script_structs.end())
      return it->second.get();
    return env.kernel_struct ? env.kernel_struct(name) : nullptr;
  };
  auto constant = [&](const std::string &name) -> std::optional<int64_t> {
    if (auto it = info.script_enumerators.find(name); it != info.script_enumerators.end())
      return it->second.second;
    return env.kernel_enum ? env.kernel_enum(name) : std::nullopt;
  };
  auto script_only = [&](const std::string &name) -> const RecordLayout * {
    auto it = info.script_structs.find(name);
    return it != info.script_structs.end() ? it->second.get() : nullptr;
  };
  for (const CStructDef &def : program.structs) {
    // A script's own definition of a kernel struct (struct task_struct { int x; }) replaces
    // the kernel's and, as in bpftrace, sees only the script's types: a kernel struct it holds
    // by value is unknown there (pointers to it are fine).
    std::string kernel_name;
    size_t b = def.text.find_first_not_of(" \t\n");
    if (b != std::string::npos && def.text.compare(b, 7, "struct ") == 0) {
      size_t n = def.text.find_first_not_of(" \t\n", b + 7);
      size_t e = n == std::string::npos ? n : def.text.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", n);
      if (n != std::string::npos && e != n)
        kernel_name = def.text.substr(n, e == std::string::npos ? e : e - n);
      if (!env.kernel_struct || !env.kernel_struct(kernel_name))
        kernel_name.clear();
    }
    auto defs = kernel_name.empty() ? parse_c_definition(def.text, find, constant)
                                    : parse_c_definition(def.text, script_only, constant);
    if (!defs) {
      diags.error(def.range, defs.error().why,
                  kernel_name.empty() ? ""
                                      : "this definition replaces the kernel's struct " +
                                            kernel_name +
                                            " and sees only the script's own types: define "
                                            "the types it holds by value before it");
      continue;
    }
    for (auto &record : defs->records)
      info.script_structs[record->name] = record;
    for (CEnum &e : defs->enums) {
      std::string name = e.name.empty() ? "enum#" + std::to_string(++anonymous) : e.name;
      if (info.script_enums.count(name))
        diags.error(def.range, "enum " + name + " is defined twice");
      for (auto &[enumerator, value] : e.values)
        if (!info.script_enumerators.emplace(enumerator, std::make_pair(name, value)).second)
          diags.error(def.range, "enumerator " + enumerator + " is defined twice");
      info.script_enums[name] = EnumDesc{name, std::move(e.values)};
    }
  }
}

}  // namespace

bool analyse(const Program &program, DiagnosticEngine &diags, SemaInfo &info,
             const Environment &env) {
  define_c_types(program, diags, info, env);
  // Iterate until map and variable types settle (a map may be read before the probe that
  // assigns it); only the last pass's diagnostics are reported.
  for (int pass = 0;; pass++) {
    DiagnosticEngine scratch(diags.source());
    TypeChecker checker(scratch, info, env);
    checker.check_program(program);
    if (!checker.changed() || pass == 4) {
      for (auto &d : scratch.diagnostics()) {
        if (d.severity == Severity::Error)
          diags.error(d.range, d.message, d.note);
        else
          diags.warning(d.range, d.message, d.note);
      }
      bind_named_params(info, env);
      return !diags.has_errors() && info.usage_errors.empty();
    }
  }
}

}  // namespace rbt::sema
