// Macro expansion, run by parse() once the grammar has built the program. Before/after:
//
//   macro add_one(x) { x + 1 }            BEGIN { $a = 10; print({ $a + 1 }); }
//   BEGIN { $a = 10; print(add_one($a)); }
//
// Each call (or a bare identifier naming a macro without parameters) becomes a block
// expression holding a copy of the body. Parameters are bpftrace's hygienic kinds: `x` is an
// expression pasted wherever x appears, `$v` a caller's variable used by name, `@m` a caller's
// map. Variables the body creates are its own (renamed so they cannot meet the caller's), and
// the body may use no map that was not passed to it. bpftrace's stdlib macro assert(cond,
// message) is built in (assert_block).

#include "macros.h"
#include "sema/builtins.h"

#include <map>
#include <string>

namespace rbt {

using namespace ast;

namespace {

constexpr int kMaxDepth = 16;  // macros calling macros; deeper is recursion

class Expander {
public:
  Expander(ASTContext &ctx, DiagnosticEngine &diags, const std::vector<MacroDef> &macros)
      : ctx_(ctx), diags_(diags), macros_(macros) {}

  void run(Program &program) {
    for (Probe *p : program.probes) {
      if (p->predicate)
        p->predicate = rewrite(p->predicate, 0);
      rewrite_stmts(p->body->stmts, 0);
    }
  }

private:
  // How one expansion substitutes: expression parameters by the caller's expressions,
  // variable and map parameters by the caller's names, the body's own variables by fresh ones.
  struct Subst {
    const MacroDef *macro;
    std::map<std::string, Expr *> exprs;
    std::map<std::string, std::string> names;  // "$v" / "@m" → the caller's name
    unsigned serial;
    bool identity = false;  // copying the caller's own expression: names stay as they are
    const SourceRange *site = nullptr;  // the call being expanded (kept by the ASTContext)
  };

  // A range of the body's text as this expansion copies it: it points at the call, so that
  // diagnostics about it can say which call it came from. The caller's own text stays as is.
  static SourceRange placed(const SourceRange &r, const Subst &s) {
    SourceRange out = r;
    if (!s.identity)
      out.expanded_from = s.site;
    return out;
  }

  const MacroDef *find(const std::string &name, size_t nargs) const {
    for (const MacroDef &m : macros_)
      if (m.name == name && m.params.size() == nargs)
        return &m;
    return nullptr;
  }
  bool is_macro_name(const std::string &name) const {
    for (const MacroDef &m : macros_)
      if (m.name == name)
        return true;
    return false;
  }

  void rewrite_stmts(std::vector<Stmt *> &stmts, int depth) {
    for (Stmt *&s : stmts)
      rewrite_stmt(s, depth);
  }

  void rewrite_stmt(Stmt *s, int depth) {
    switch (s->kind) {
    case NodeKind::ExprStmt: {
      auto *e = static_cast<ExprStmt *>(s);
      e->expr = rewrite(e->expr, depth);
      break;
    }
    case NodeKind::AssignMap: {
      auto *a = static_cast<AssignMap *>(s);
      for (Expr *&k : a->map->keys)
        k = rewrite(k, depth);
      a->value = rewrite(a->value, depth);
      break;
    }
    case NodeKind::AssignVar: {
      auto *a = static_cast<AssignVar *>(s);
      a->value = rewrite(a->value, depth);
      break;
    }
    case NodeKind::VarDecl: {
      auto *d = static_cast<VarDecl *>(s);
      if (d->value)
        d->value = rewrite(d->value, depth);
      if (d->type.of)
        d->type.of = rewrite(d->type.of, depth);
      break;
    }
    case NodeKind::Block:
      rewrite_stmts(static_cast<Block *>(s)->stmts, depth);
      break;
    case NodeKind::If: {
      auto *i = static_cast<If *>(s);
      i->cond = rewrite(i->cond, depth);
      rewrite_stmts(i->then_block->stmts, depth);
      if (i->else_stmt)
        rewrite_stmt(i->else_stmt, depth);
      break;
    }
    case NodeKind::While: {
      auto *w = static_cast<While *>(s);
      w->cond = rewrite(w->cond, depth);
      rewrite_stmts(w->body->stmts, depth);
      break;
    }
    case NodeKind::For: {
      auto *f = static_cast<For *>(s);
      if (f->hi) {
        f->lo = rewrite(f->lo, depth);
        f->hi = rewrite(f->hi, depth);
      }
      rewrite_stmts(f->body->stmts, depth);
      break;
    }
    case NodeKind::Unroll:
      rewrite_stmts(static_cast<Unroll *>(s)->body->stmts, depth);
      break;
    default:
      break;
    }
  }

  // Rewrites the expressions under `e`, then `e` itself if it calls a macro.
  Expr *rewrite(Expr *e, int depth) {
    switch (e->kind) {
    case NodeKind::Builtin: {
      auto *b = static_cast<Builtin *>(e);
      if (const MacroDef *m = find(b->name, 0))
        return expand(*m, {}, e->range, depth);
      return e;
    }
    case NodeKind::Call: {
      auto *c = static_cast<Call *>(e);
      for (Expr *&a : c->args)
        a = rewrite(a, depth);
      if (const MacroDef *m = find(c->name, c->args.size()))
        return expand(*m, c->args, e->range, depth);
      if (c->name == "assert" && c->args.size() == 2 && !is_macro_name(c->name))
        return assert_block(*c);
      // A macro named like a builtin (cpu) does not hide the builtin at another arity.
      if (is_macro_name(c->name) && !sema::find_builtin_call(c->name) &&
          !(c->args.empty() && sema::find_builtin_var(c->name)))
        diags_.error(c->range, "macro '" + c->name + "' takes a different number of arguments (" +
                                   std::to_string(c->args.size()) + " given)");
      return e;
    }
    case NodeKind::MapRef:
      for (Expr *&k : static_cast<MapRef *>(e)->keys)
        k = rewrite(k, depth);
      return e;
    case NodeKind::Binary: {
      auto *b = static_cast<Binary *>(e);
      b->lhs = rewrite(b->lhs, depth);
      b->rhs = rewrite(b->rhs, depth);
      return e;
    }
    case NodeKind::Unary: {
      auto *u = static_cast<Unary *>(e);
      u->operand = rewrite(u->operand, depth);
      return e;
    }
    case NodeKind::Ternary: {
      auto *t = static_cast<Ternary *>(e);
      t->cond = rewrite(t->cond, depth);
      t->then_expr = rewrite(t->then_expr, depth);
      t->else_expr = rewrite(t->else_expr, depth);
      return e;
    }
    case NodeKind::Tuple:
      for (Expr *&x : static_cast<Tuple *>(e)->elems)
        x = rewrite(x, depth);
      return e;
    case NodeKind::FieldAccess: {
      auto *f = static_cast<FieldAccess *>(e);
      f->base = rewrite(f->base, depth);
      return e;
    }
    case NodeKind::Cast: {
      auto *c = static_cast<Cast *>(e);
      c->operand = rewrite(c->operand, depth);
      return e;
    }
    case NodeKind::TypeQuery: {
      auto *q = static_cast<TypeQuery *>(e);
      if (q->operand)
        q->operand = rewrite(q->operand, depth);
      return e;
    }
    case NodeKind::TypeExpr: {
      auto *t = static_cast<TypeExpr *>(e);
      if (t->type.of)
        t->type.of = rewrite(t->type.of, depth);
      return e;
    }
    case NodeKind::Index: {
      auto *x = static_cast<Index *>(e);
      x->base = rewrite(x->base, depth);
      x->index = rewrite(x->index, depth);
      return e;
    }
    case NodeKind::BlockExpr: {
      auto *b = static_cast<BlockExpr *>(e);
      rewrite_stmts(b->stmts, depth);
      if (b->value)
        b->value = rewrite(b->value, depth);
      return e;
    }
    default:
      return e;
    }
  }

  // bpftrace's stdlib macro assert(cond, message), unless the script defines its own:
  //   { if (!cond) { errorf("assert failed: %s", message); exit(1); } }
  Expr *assert_block(const Call &c) {
    const SourceRange &at = c.range;
    auto *fail = ctx_.make<Call>(
        at, "errorf", std::vector<Expr *>{ctx_.make<StrLit>(at, "assert failed: %s"), c.args[1]});
    auto *stop = ctx_.make<Call>(at, "exit", std::vector<Expr *>{ctx_.make<IntLit>(at, 1)});
    auto *then = ctx_.make<Block>(
        at, std::vector<Stmt *>{ctx_.make<ExprStmt>(at, fail), ctx_.make<ExprStmt>(at, stop)});
    auto *check = ctx_.make<If>(at, ctx_.make<Unary>(at, UnaryOp::Not, c.args[0]), then, nullptr);
    return ctx_.make<BlockExpr>(at, std::vector<Stmt *>{check}, nullptr);
  }

  Expr *expand(const MacroDef &m, const std::vector<Expr *> &args, const SourceRange &at,
               int depth) {
    if (depth >= kMaxDepth) {
      diags_.error(at, "macro '" + m.name + "' expands more than " + std::to_string(kMaxDepth) +
                           " levels deep (does it call itself?)");
      return ctx_.make<IntLit>(at, 0);
    }
    Subst s{&m, {}, {}, ++serial_, false, ctx_.keep_site(at)};
    for (size_t i = 0; i < args.size(); i++) {
      const std::string &p = m.params[i];
      if (p[0] == '$' || p[0] == '@') {
        auto *var = dyn_cast<Var>(args[i]);
        auto *map = dyn_cast<MapRef>(args[i]);
        bool ok = p[0] == '$' ? var != nullptr : map && map->keys.empty();
        if (!ok) {
          diags_.error(args[i]->range, "macro '" + m.name + "' expects " +
                                           (p[0] == '$' ? "a scratch variable" : "a map without keys") +
                                           " for its parameter " + p);
          return ctx_.make<IntLit>(at, 0);
        }
        s.names[p] = var ? var->name : map->name;
      } else {
        s.exprs[p] = args[i];
      }
    }
    std::vector<Stmt *> stmts;
    for (const Stmt *st : m.body)
      stmts.push_back(clone_stmt(st, s));
    Expr *value = m.value ? clone(m.value, s) : nullptr;
    if (stmts.empty() && value)  // `macro cpu() { "hi" }`: the expression itself, a literal
      return rewrite(value, depth + 1);
    auto *block = ctx_.make<BlockExpr>(at, std::move(stmts), value);
    return rewrite(block, depth + 1);
  }

  std::string var_name(const std::string &name, const Subst &s) {
    if (s.identity)
      return name;
    if (auto it = s.names.find(name); it != s.names.end())
      return it->second;
    // The body's own variable: a name no script can write (it has a '.').
    return name + "." + s.macro->name + std::to_string(s.serial);
  }

  std::string map_name(const MapRef &m, const Subst &s) {
    if (s.identity)
      return m.name;
    if (auto it = s.names.find(m.name); it != s.names.end())
      return it->second;
    diags_.error(placed(m.range, s), "macro '" + s.macro->name + "' uses " + m.name +
                              ", which is not one of its parameters (pass it as @name)");
    return m.name;
  }

  std::vector<Expr *> clone_all(const std::vector<Expr *> &v, const Subst &s) {
    std::vector<Expr *> out;
    for (const Expr *e : v)
      out.push_back(clone(e, s));
    return out;
  }

  Block *clone_block(const Block *b, const Subst &s) {
    std::vector<Stmt *> stmts;
    for (const Stmt *st : b->stmts)
      stmts.push_back(clone_stmt(st, s));
    return ctx_.make<Block>(placed(b->range, s), std::move(stmts));
  }

  Var *clone_var(const Var *v, const Subst &s) {
    return ctx_.make<Var>(placed(v->range, s), var_name(v->name, s));
  }

  MapRef *clone_map(const MapRef *m, const Subst &s) {
    return ctx_.make<MapRef>(placed(m->range, s), map_name(*m, s), clone_all(m->keys, s));
  }

  Stmt *clone_stmt(const Stmt *st, const Subst &s) {
    switch (st->kind) {
    case NodeKind::ExprStmt: {
      auto *e = static_cast<const ExprStmt *>(st);
      auto *c = ctx_.make<ExprStmt>(placed(e->range, s), clone(e->expr, s));
      c->unterminated = e->unterminated;
      return c;
    }
    case NodeKind::AssignMap: {
      auto *a = static_cast<const AssignMap *>(st);
      return ctx_.make<AssignMap>(placed(a->range, s), clone_map(a->map, s), clone(a->value, s));
    }
    case NodeKind::AssignVar: {
      auto *a = static_cast<const AssignVar *>(st);
      return ctx_.make<AssignVar>(placed(a->range, s), clone_var(a->var, s), clone(a->value, s));
    }
    case NodeKind::VarDecl: {
      auto *d = static_cast<const VarDecl *>(st);
      if (s.names.count(d->var->name))
        diags_.error(placed(d->var->range, s), "variable declaration shadows macro parameter " + d->var->name);
      TypeSpec type = d->type;
      if (type.of)
        type.of = clone(type.of, s);
      type.range = placed(type.range, s);
      return ctx_.make<VarDecl>(placed(d->range, s), clone_var(d->var, s), d->typed, type,
                                d->value ? clone(d->value, s) : nullptr);
    }
    case NodeKind::Block:
      return clone_block(static_cast<const Block *>(st), s);
    case NodeKind::If: {
      auto *i = static_cast<const If *>(st);
      return ctx_.make<If>(placed(i->range, s), clone(i->cond, s), clone_block(i->then_block, s),
                           i->else_stmt ? clone_stmt(i->else_stmt, s) : nullptr);
    }
    case NodeKind::While: {
      auto *w = static_cast<const While *>(st);
      return ctx_.make<While>(placed(w->range, s), clone(w->cond, s), clone_block(w->body, s));
    }
    case NodeKind::For: {
      auto *f = static_cast<const For *>(st);
      Expr *lo = f->hi ? clone(f->lo, s) : clone_map(static_cast<const MapRef *>(f->lo), s);
      return ctx_.make<For>(placed(f->range, s), clone_var(f->var, s), lo, f->hi ? clone(f->hi, s) : nullptr,
                            clone_block(f->body, s));
    }
    case NodeKind::Unroll: {
      auto *u = static_cast<const Unroll *>(st);
      return ctx_.make<Unroll>(placed(u->range, s), u->count, clone_block(u->body, s), u->positional);
    }
    case NodeKind::Jump: {
      auto *j = static_cast<const Jump *>(st);
      return ctx_.make<Jump>(placed(j->range, s), j->jump);
    }
    default:
      return const_cast<Stmt *>(st);
    }
  }

  // `(a*)x` where the parameter a is given a type (`typeof(uint8)`): the cast takes that type.
  // typeof(typeof(t)) and a nested macro's `typeof(param)` name the type inside.
  Expr *clone_cast(const Cast *c, const Subst &s) {
    Expr *operand = clone(c->operand, s);
    auto it = c->is_struct ? s.exprs.end() : s.exprs.find(c->type_name);
    if (it == s.exprs.end())
      return ctx_.make<Cast>(placed(c->range, s), c->type_name, c->is_struct, c->pointers, operand,
                             c->is_array, c->array_count);
    const Expr *arg = it->second;
    uint32_t pointers = c->pointers;
    while (arg->kind == NodeKind::TypeExpr && static_cast<const TypeExpr *>(arg)->type.of) {
      pointers += static_cast<const TypeExpr *>(arg)->type.is_pointer ? 1 : 0;
      arg = static_cast<const TypeExpr *>(arg)->type.of;
    }
    if (arg->kind != NodeKind::TypeExpr || static_cast<const TypeExpr *>(arg)->type.size) {
      diags_.error(placed(c->range, s), "macro '" + s.macro->name + "' casts to its parameter " + c->type_name +
                                 ", which is given no type (pass one as typeof(type))");
      return operand;
    }
    const TypeSpec &type = static_cast<const TypeExpr *>(arg)->type;
    return ctx_.make<Cast>(placed(c->range, s), type.name, type.is_struct, pointers + (type.is_pointer ? 1 : 0),
                           operand);
  }

  Expr *clone(const Expr *e, const Subst &s) {
    switch (e->kind) {
    case NodeKind::IntLit: {
      auto *i = static_cast<const IntLit *>(e);
      return ctx_.make<IntLit>(placed(i->range, s), i->value, i->is_bool);
    }
    case NodeKind::StrLit:
      return ctx_.make<StrLit>(placed(e->range, s), static_cast<const StrLit *>(e)->value);
    case NodeKind::Positional:
      return ctx_.make<Positional>(placed(e->range, s), static_cast<const Positional *>(e)->index);
    case NodeKind::Builtin: {
      auto *b = static_cast<const Builtin *>(e);
      // An expression parameter: a fresh copy of the caller's expression each time.
      if (auto it = s.exprs.find(b->name); it != s.exprs.end())
        return clone(it->second, Subst{s.macro, {}, {}, 0, true});
      return ctx_.make<Builtin>(placed(b->range, s), b->name);
    }
    case NodeKind::Var:
      return clone_var(static_cast<const Var *>(e), s);
    case NodeKind::MapRef:
      return clone_map(static_cast<const MapRef *>(e), s);
    case NodeKind::Call: {
      auto *c = static_cast<const Call *>(e);
      return ctx_.make<Call>(placed(c->range, s), c->name, clone_all(c->args, s));
    }
    case NodeKind::Binary: {
      auto *b = static_cast<const Binary *>(e);
      return ctx_.make<Binary>(placed(b->range, s), b->op, clone(b->lhs, s), clone(b->rhs, s));
    }
    case NodeKind::Unary: {
      auto *u = static_cast<const Unary *>(e);
      return ctx_.make<Unary>(placed(u->range, s), u->op, clone(u->operand, s));
    }
    case NodeKind::Ternary: {
      auto *t = static_cast<const Ternary *>(e);
      return ctx_.make<Ternary>(placed(t->range, s), clone(t->cond, s), clone(t->then_expr, s),
                                clone(t->else_expr, s));
    }
    case NodeKind::Tuple:
      return ctx_.make<Tuple>(placed(e->range, s), clone_all(static_cast<const Tuple *>(e)->elems, s),
                              static_cast<const Tuple *>(e)->names);
    case NodeKind::FieldAccess: {
      auto *f = static_cast<const FieldAccess *>(e);
      return ctx_.make<FieldAccess>(placed(f->range, s), clone(f->base, s), f->field, f->arrow);
    }
    case NodeKind::Cast:
      return clone_cast(static_cast<const Cast *>(e), s);
    case NodeKind::TypeQuery: {
      auto *q = static_cast<const TypeQuery *>(e);
      return ctx_.make<TypeQuery>(placed(q->range, s), q->operand ? clone(q->operand, s) : nullptr,
                                  q->type_name, q->is_struct, q->field);
    }
    case NodeKind::Index: {
      auto *x = static_cast<const Index *>(e);
      return ctx_.make<Index>(placed(x->range, s), clone(x->base, s), clone(x->index, s));
    }
    case NodeKind::TypeExpr: {
      TypeSpec type = static_cast<const TypeExpr *>(e)->type;
      if (type.of)
        type.of = clone(type.of, s);
      type.range = placed(type.range, s);
      return ctx_.make<TypeExpr>(placed(e->range, s), type);
    }
    case NodeKind::BlockExpr: {
      auto *b = static_cast<const BlockExpr *>(e);
      std::vector<Stmt *> stmts;
      for (const Stmt *st : b->stmts)
        stmts.push_back(clone_stmt(st, s));
      return ctx_.make<BlockExpr>(placed(b->range, s), std::move(stmts), b->value ? clone(b->value, s) : nullptr);
    }
    default:
      return const_cast<Expr *>(e);
    }
  }

  ASTContext &ctx_;
  DiagnosticEngine &diags_;
  const std::vector<MacroDef> &macros_;
  unsigned serial_ = 0;
};

}  // namespace

void expand_macros(Program &program, ASTContext &ctx, DiagnosticEngine &diags) {
  // Also without macros of the script's own: assert() is one (bpftrace's stdlib).
  Expander(ctx, diags, program.macros).run(program);
}

}  // namespace rbt
