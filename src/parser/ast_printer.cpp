#include "ast_printer.h"

#include "sema/sema.h"

namespace rbt::ast {
namespace {

class Printer {
public:
  Printer(std::ostream &out, const sema::SemaInfo *info) : out_(out), info_(info) {}

  void print(const Node *n, int depth) {
    if (!n)
      return;
    out_ << std::string(depth * 2, ' ') << label(*n);
    if (info_ && dynamic_cast<const Expr *>(n))
      out_ << " :: " << info_->type_of(n).name();
    out_ << "\n";
    for (const Node *c : children(*n))
      print(c, depth + 1);
  }

private:
  static std::string escape(const std::string &s) {
    std::string o;
    for (char c : s)
      o += c == '\n' ? std::string("\\n") : c == '"' ? std::string("\\\"") : std::string(1, c);
    return o;
  }

  static std::string label(const Node &n) {
    switch (n.kind) {
    case NodeKind::IntLit: {
      auto &lit = static_cast<const IntLit &>(n);
      return lit.is_bool ? (lit.value ? "true" : "false") : "int " + std::to_string(lit.value);
    }
    case NodeKind::StrLit: return "string \"" + escape(static_cast<const StrLit &>(n).value) + "\"";
    case NodeKind::Builtin: return "builtin " + static_cast<const Builtin &>(n).name;
    case NodeKind::Var: return "var " + static_cast<const Var &>(n).name;
    case NodeKind::MapRef: return "map " + static_cast<const MapRef &>(n).name;
    case NodeKind::Call: return "call " + static_cast<const Call &>(n).name;
    case NodeKind::Binary: return std::string("binop ") + binary_op_spelling(static_cast<const Binary &>(n).op);
    case NodeKind::Unary: {
      auto op = static_cast<const Unary &>(n).op;
      static const char *kSpelling[] = {"-", "!", "~", "*", "&"};
      return std::string("unop ") + kSpelling[static_cast<int>(op)];
    }
    case NodeKind::Ternary: return "?:";
    case NodeKind::Tuple: return "tuple";
    case NodeKind::FieldAccess: {
      auto &f = static_cast<const FieldAccess &>(n);
      return std::string(f.arrow ? "->" : ".") + f.field;
    }
    case NodeKind::Cast: {
      auto &c = static_cast<const Cast &>(n);
      return "cast " + std::string(c.is_struct ? "struct " : "") + c.type_name +
             (c.pointers ? " " + std::string(c.pointers, '*') : "") +
             (c.is_array ? "[" + (c.array_count ? std::to_string(c.array_count) : "") + "]" : "");
    }
    case NodeKind::Index: return "[]";
    case NodeKind::BlockExpr: return "block expression";
    case NodeKind::TypeExpr: {
      auto &t = static_cast<const TypeExpr &>(n).type;
      return "typeof " + std::string(t.is_struct ? "struct " : "") + t.name + (t.is_pointer ? " *" : "");
    }
    case NodeKind::VarDecl: {
      auto &d = static_cast<const VarDecl &>(n);
      return "let" + (d.typed ? ": " + std::string(d.type.is_struct ? "struct " : "") + d.type.name +
                                    (d.type.is_pointer ? " *" : "")
                              : std::string());
    }
    case NodeKind::TypeQuery: {
      auto &q = static_cast<const TypeQuery &>(n);
      std::string what = q.operand ? "" : (q.is_struct ? "struct " : "") + q.type_name;
      return q.field.empty() ? "sizeof " + what : "offsetof " + what + ", " + q.field;
    }
    case NodeKind::Positional: {
      unsigned i = static_cast<const Positional &>(n).index;
      return i ? "$" + std::to_string(i) : std::string("$#");
    }
    case NodeKind::For: return "for";
    case NodeKind::Unroll: return "unroll " + std::to_string(static_cast<const Unroll &>(n).count);
    case NodeKind::ExprStmt: return "expr";
    case NodeKind::AssignMap: return "=";
    case NodeKind::AssignVar: return "=";
    case NodeKind::If: return "if";
    case NodeKind::While: return "while";
    case NodeKind::Jump: {
      auto j = static_cast<const Jump &>(n).jump;
      return j == JumpKind::Break ? "break" : j == JumpKind::Continue ? "continue" : "return";
    }
    case NodeKind::Block: return "block";
    case NodeKind::AttachPoint: return static_cast<const AttachPoint &>(n).text;
    case NodeKind::Probe: return "probe";
    case NodeKind::Program: return "program";
    }
    return "?";
  }

  static std::vector<const Node *> children(const Node &n) {
    switch (n.kind) {
    case NodeKind::MapRef: {
      auto &m = static_cast<const MapRef &>(n);
      return {m.keys.begin(), m.keys.end()};
    }
    case NodeKind::Call: {
      auto &c = static_cast<const Call &>(n);
      return {c.args.begin(), c.args.end()};
    }
    case NodeKind::Binary: {
      auto &b = static_cast<const Binary &>(n);
      return {b.lhs, b.rhs};
    }
    case NodeKind::Unary: return {static_cast<const Unary &>(n).operand};
    case NodeKind::Ternary: {
      auto &t = static_cast<const Ternary &>(n);
      return {t.cond, t.then_expr, t.else_expr};
    }
    case NodeKind::Tuple: {
      auto &t = static_cast<const Tuple &>(n);
      return {t.elems.begin(), t.elems.end()};
    }
    case NodeKind::FieldAccess: return {static_cast<const FieldAccess &>(n).base};
    case NodeKind::Cast: return {static_cast<const Cast &>(n).operand};
    case NodeKind::Index: {
      auto &x = static_cast<const Index &>(n);
      return {x.base, x.index};
    }
    case NodeKind::TypeQuery: {
      auto &q = static_cast<const TypeQuery &>(n);
      return q.operand ? std::vector<const Node *>{q.operand} : std::vector<const Node *>{};
    }
    case NodeKind::TypeExpr: {
      auto &t = static_cast<const TypeExpr &>(n);
      return t.type.of ? std::vector<const Node *>{t.type.of} : std::vector<const Node *>{};
    }
    case NodeKind::For: {
      auto &f = static_cast<const For &>(n);
      return {f.var, f.lo, f.hi, f.body};
    }
    case NodeKind::Unroll: return {static_cast<const Unroll &>(n).body};
    case NodeKind::ExprStmt: return {static_cast<const ExprStmt &>(n).expr};
    case NodeKind::AssignMap: {
      auto &a = static_cast<const AssignMap &>(n);
      return {a.map, a.value};
    }
    case NodeKind::AssignVar: {
      auto &a = static_cast<const AssignVar &>(n);
      return {a.var, a.value};
    }
    case NodeKind::VarDecl: {
      auto &d = static_cast<const VarDecl &>(n);
      return d.value ? std::vector<const Node *>{d.var, d.value} : std::vector<const Node *>{d.var};
    }
    case NodeKind::BlockExpr: {
      auto &b = static_cast<const BlockExpr &>(n);
      std::vector<const Node *> c(b.stmts.begin(), b.stmts.end());
      if (b.value)
        c.push_back(b.value);
      return c;
    }
    case NodeKind::If: {
      auto &i = static_cast<const If &>(n);
      return {i.cond, i.then_block, i.else_stmt};
    }
    case NodeKind::While: {
      auto &w = static_cast<const While &>(n);
      return {w.cond, w.body};
    }
    case NodeKind::Block: {
      auto &b = static_cast<const Block &>(n);
      return {b.stmts.begin(), b.stmts.end()};
    }
    case NodeKind::Probe: {
      auto &p = static_cast<const Probe &>(n);
      std::vector<const Node *> c(p.attach_points.begin(), p.attach_points.end());
      if (p.predicate)
        c.push_back(p.predicate);
      c.push_back(p.body);
      return c;
    }
    case NodeKind::Program: {
      auto &p = static_cast<const Program &>(n);
      return {p.probes.begin(), p.probes.end()};
    }
    default:
      return {};
    }
  }

  std::ostream &out_;
  const sema::SemaInfo *info_;
};

}  // namespace

void print_ast(std::ostream &out, const Node &node, const sema::SemaInfo *info) {
  Printer(out, info).print(&node, 0);
}

}  // namespace rbt::ast
