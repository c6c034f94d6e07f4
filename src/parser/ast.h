#pragma once
// The abstract syntax tree. Nodes are owned by an ASTContext (an arena) and handed out as raw
// non-owning pointers. Types are not stored here: the type checker records them in a side table
// (sema::TypeTable), so passes never mutate nodes to annotate them.

#include <cstdint>
#include <string>
#include <vector>

#include "diagnostics.h"

namespace rbt::ast {

enum class NodeKind : uint8_t {
  // Expressions
  IntLit,
  StrLit,
  Builtin,
  Var,
  MapRef,
  Call,
  Binary,
  Unary,
  Ternary,
  Tuple,
  FieldAccess,
  Cast,
  Positional,
  TypeQuery,
  Index,
  BlockExpr,
  TypeExpr,
  // Statements
  ExprStmt,
  AssignMap,
  AssignVar,
  If,
  While,
  For,
  Unroll,
  Jump,
  Block,
  VarDecl,
  // Structure
  AttachPoint,
  Probe,
  Program,
};

struct Node {
  explicit Node(NodeKind kind, SourceRange range) : kind(kind), range(range) {}
  virtual ~Node() = default;
  const NodeKind kind;
  SourceRange range;
};

// LLVM-style checked casts on the kind tag.
template <typename T> bool isa(const Node *n) { return n && n->kind == T::Kind; }
template <typename T> T *dyn_cast(Node *n) { return isa<T>(n) ? static_cast<T *>(n) : nullptr; }
template <typename T> const T *dyn_cast(const Node *n) {
  return isa<T>(n) ? static_cast<const T *>(n) : nullptr;
}

struct Expr : Node {
  using Node::Node;
};
struct Stmt;

struct IntLit : Expr {
  static constexpr NodeKind Kind = NodeKind::IntLit;
  IntLit(SourceRange r, uint64_t value, bool is_bool = false)
      : Expr(Kind, r), value(value), is_bool(is_bool) {}
  uint64_t value;
  bool is_bool;  // `true` / `false`
};

struct StrLit : Expr {
  static constexpr NodeKind Kind = NodeKind::StrLit;
  StrLit(SourceRange r, std::string value) : Expr(Kind, r), value(std::move(value)) {}
  std::string value;  // escapes decoded
};

// A builtin identifier such as pid, comm, nsecs, arg0.
struct Builtin : Expr {
  static constexpr NodeKind Kind = NodeKind::Builtin;
  Builtin(SourceRange r, std::string name) : Expr(Kind, r), name(std::move(name)) {}
  std::string name;
};

// A scratch variable `$name`.
struct Var : Expr {
  static constexpr NodeKind Kind = NodeKind::Var;
  Var(SourceRange r, std::string name) : Expr(Kind, r), name(std::move(name)) {}
  std::string name;  // including the '$'
};

// `@name` or `@name[k1, k2]`; several keys form a tuple key.
struct MapRef : Expr {
  static constexpr NodeKind Kind = NodeKind::MapRef;
  MapRef(SourceRange r, std::string name, std::vector<Expr *> keys)
      : Expr(Kind, r), name(std::move(name)), keys(std::move(keys)) {}
  std::string name;  // including the '@'
  std::vector<Expr *> keys;
};

struct Call : Expr {
  static constexpr NodeKind Kind = NodeKind::Call;
  Call(SourceRange r, std::string name, std::vector<Expr *> args)
      : Expr(Kind, r), name(std::move(name)), args(std::move(args)) {}
  std::string name;
  std::vector<Expr *> args;
};

enum class BinaryOp : uint8_t {
  Add, Sub, Mul, Div, Mod, BitAnd, BitOr, BitXor, Shl, Shr,
  Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr,
};
const char *binary_op_spelling(BinaryOp op);
bool is_comparison(BinaryOp op);

struct Binary : Expr {
  static constexpr NodeKind Kind = NodeKind::Binary;
  Binary(SourceRange r, BinaryOp op, Expr *lhs, Expr *rhs)
      : Expr(Kind, r), op(op), lhs(lhs), rhs(rhs) {}
  BinaryOp op;
  Expr *lhs, *rhs;
};

// Deref: `*p` reads what a pointer points to; AddrOf: `&$x` is a variable's address.
enum class UnaryOp : uint8_t { Neg, Not, BitNot, Deref, AddrOf };

struct Unary : Expr {
  static constexpr NodeKind Kind = NodeKind::Unary;
  Unary(SourceRange r, UnaryOp op, Expr *operand) : Expr(Kind, r), op(op), operand(operand) {}
  UnaryOp op;
  Expr *operand;
};

struct Ternary : Expr {
  static constexpr NodeKind Kind = NodeKind::Ternary;
  Ternary(SourceRange r, Expr *cond, Expr *then_expr, Expr *else_expr)
      : Expr(Kind, r), cond(cond), then_expr(then_expr), else_expr(else_expr) {}
  Expr *cond, *then_expr, *else_expr;
};

struct Tuple : Expr {
  static constexpr NodeKind Kind = NodeKind::Tuple;
  Tuple(SourceRange r, std::vector<Expr *> elems, std::vector<std::string> names = {})
      : Expr(Kind, r), elems(std::move(elems)), names(std::move(names)) {}
  std::vector<Expr *> elems;
  // A record `(a = 1, b = "x")`: the name of each element (empty for a plain tuple).
  std::vector<std::string> names;
};

// `expr.field`, `expr->field`, or a tuple element `expr.0`.
struct FieldAccess : Expr {
  static constexpr NodeKind Kind = NodeKind::FieldAccess;
  FieldAccess(SourceRange r, Expr *base, std::string field, bool arrow)
      : Expr(Kind, r), base(base), field(std::move(field)), arrow(arrow) {}
  Expr *base;
  std::string field;
  bool arrow;
};

// `(uint8)x`, `(struct task_struct *)p`, `(int32 *)p`, `(int32 **)p`, `(void *)p`,
// `(int8[])"str"`, `(uint8[8])x`.
struct Cast : Expr {
  static constexpr NodeKind Kind = NodeKind::Cast;
  Cast(SourceRange r, std::string type_name, bool is_struct, uint32_t pointers, Expr *operand,
       bool is_array = false, uint32_t array_count = 0)
      : Expr(Kind, r), type_name(std::move(type_name)), is_struct(is_struct),
        pointers(pointers), operand(operand), is_array(is_array), array_count(array_count) {}
  std::string type_name;  // "uint8", "void", or the struct's name
  bool is_struct;
  uint32_t pointers;  // how many `*` follow the type: 0 for a value, 2 for `int32 **`
  Expr *operand;
  bool is_array;         // a cast to an integer array
  uint32_t array_count;  // its length; 0: the operand's size decides
};

// A type as written after `let $x:`: `uint16`, `string`, `string[32]`, `int32 *`,
// `struct task_struct *`.
struct TypeSpec {
  SourceRange range;
  std::string name;  // "uint16", "string", or a struct's name
  bool is_struct = false;
  bool is_pointer = false;
  uint32_t size = 0;  // string[N]: N
  Expr *of = nullptr;  // `typeof(expr)`: the type of expr (never evaluated); name is empty
};

// `{ stmt; ...; value }`: a block used as an expression; its value is the last statement's
// expression when that has no `;` after it (null: the block has no value, a macro's body made
// of statements).
struct BlockExpr : Expr {
  static constexpr NodeKind Kind = NodeKind::BlockExpr;
  BlockExpr(SourceRange r, std::vector<Stmt *> stmts, Expr *value)
      : Expr(Kind, r), stmts(std::move(stmts)), value(value) {}
  std::vector<Stmt *> stmts;
  Expr *value;
};

// `sizeof(expr)`, `sizeof(type)` and `offsetof(struct S, field)`: constants the checker
// computes (SemaInfo::constants). `operand` is set for sizeof(expr), `type_name` otherwise.
struct TypeQuery : Expr {
  static constexpr NodeKind Kind = NodeKind::TypeQuery;
  TypeQuery(SourceRange r, Expr *operand, std::string type_name, bool is_struct,
            std::string field)
      : Expr(Kind, r), operand(operand), type_name(std::move(type_name)), is_struct(is_struct),
        field(std::move(field)) {}
  Expr *operand;
  std::string type_name;  // "uint32", or a struct's name
  bool is_struct;
  std::string field;  // offsetof: the field; empty for sizeof
};

// `typeof(uint64 *)` as a value: a type handed to a macro (`macro m(t) { sizeof(t) }`), where
// sizeof, typeof, `t[N]` (an array of N) and `t*` (inside sizeof) take it; it has no value.
struct TypeExpr : Expr {
  static constexpr NodeKind Kind = NodeKind::TypeExpr;
  TypeExpr(SourceRange r, TypeSpec type) : Expr(Kind, r), type(type) {}
  TypeSpec type;  // with `of` and is_pointer: a pointer to of's type (`sizeof(t*)`)
};

// `base[index]`: an element of an array (a struct's or a tracepoint's `u16 tags[3]`).
struct Index : Expr {
  static constexpr NodeKind Kind = NodeKind::Index;
  Index(SourceRange r, Expr *base, Expr *index) : Expr(Kind, r), base(base), index(index) {}
  Expr *base;
  Expr *index;
};

// `$1`..`$N` (index >= 1) or `$#` (index 0): the script's command-line arguments.
struct Positional : Expr {
  static constexpr NodeKind Kind = NodeKind::Positional;
  Positional(SourceRange r, unsigned index) : Expr(Kind, r), index(index) {}
  unsigned index;
};

struct Stmt : Node {
  using Node::Node;
};

struct ExprStmt : Stmt {
  static constexpr NodeKind Kind = NodeKind::ExprStmt;
  ExprStmt(SourceRange r, Expr *expr) : Stmt(Kind, r), expr(expr) {}
  Expr *expr;
  bool unterminated = false;  // the last statement of a block, without `;`: the block's value
};

// `let $x;`, `let $x = v;`, `let $x: type [= v];`: declares $x in the current block.
struct VarDecl : Stmt {
  static constexpr NodeKind Kind = NodeKind::VarDecl;
  VarDecl(SourceRange r, struct Var *var, bool typed, TypeSpec type, Expr *value)
      : Stmt(Kind, r), var(var), typed(typed), type(std::move(type)), value(value) {}
  struct Var *var;
  bool typed;
  TypeSpec type;
  Expr *value;  // null: 0 (or empty) until assigned
};

// `@m[k] = v`. Compound assignments (`@m += v`) are desugared by the parser into `@m = @m + v`.
struct AssignMap : Stmt {
  static constexpr NodeKind Kind = NodeKind::AssignMap;
  AssignMap(SourceRange r, MapRef *map, Expr *value) : Stmt(Kind, r), map(map), value(value) {}
  MapRef *map;
  Expr *value;
};

struct AssignVar : Stmt {
  static constexpr NodeKind Kind = NodeKind::AssignVar;
  AssignVar(SourceRange r, Var *var, Expr *value) : Stmt(Kind, r), var(var), value(value) {}
  Var *var;
  Expr *value;
};

struct Block : Stmt {
  static constexpr NodeKind Kind = NodeKind::Block;
  Block(SourceRange r, std::vector<Stmt *> stmts) : Stmt(Kind, r), stmts(std::move(stmts)) {}
  std::vector<Stmt *> stmts;
};

struct If : Stmt {
  static constexpr NodeKind Kind = NodeKind::If;
  If(SourceRange r, Expr *cond, Block *then_block, Stmt *else_stmt)
      : Stmt(Kind, r), cond(cond), then_block(then_block), else_stmt(else_stmt) {}
  Expr *cond;
  Block *then_block;
  Stmt *else_stmt;  // a Block, an If (else if), or null
};

struct While : Stmt {
  static constexpr NodeKind Kind = NodeKind::While;
  While(SourceRange r, Expr *cond, Block *body) : Stmt(Kind, r), cond(cond), body(body) {}
  Expr *cond;
  Block *body;
};

// `for ($i : lo..hi) { }`: $i takes lo, lo+1, ..., hi-1.
struct For : Stmt {
  static constexpr NodeKind Kind = NodeKind::For;
  For(SourceRange r, Var *var, Expr *lo, Expr *hi, Block *body)
      : Stmt(Kind, r), var(var), lo(lo), hi(hi), body(body) {}
  Var *var;
  Expr *lo, *hi;  // `for ($kv : @map)`: lo is the map, hi is null
  Block *body;
};

// `unroll (N) { }`: the body repeated N times at compile time.
struct Unroll : Stmt {
  static constexpr NodeKind Kind = NodeKind::Unroll;
  Unroll(SourceRange r, uint64_t count, Block *body, unsigned positional = 0)
      : Stmt(Kind, r), count(count), body(body), positional(positional) {}
  uint64_t count;  // with `positional`: the checker's (SemaInfo::constants)
  Block *body;
  unsigned positional;  // `unroll ($N)`: the count is the script's argument N
};

enum class JumpKind : uint8_t { Break, Continue, Return };

struct Jump : Stmt {
  static constexpr NodeKind Kind = NodeKind::Jump;
  Jump(SourceRange r, JumpKind jump) : Stmt(Kind, r), jump(jump) {}
  JumpKind jump;
};

// One attach point as written, e.g. "tracepoint:syscalls:sys_enter_openat"; sema parses it.
struct AttachPoint : Node {
  static constexpr NodeKind Kind = NodeKind::AttachPoint;
  AttachPoint(SourceRange r, std::string text) : Node(Kind, r), text(std::move(text)) {}
  std::string text;
};

struct Probe : Node {
  static constexpr NodeKind Kind = NodeKind::Probe;
  Probe(SourceRange r, std::vector<AttachPoint *> attach_points, Expr *predicate, Block *body)
      : Node(Kind, r), attach_points(std::move(attach_points)), predicate(predicate), body(body) {}
  std::vector<AttachPoint *> attach_points;
  Expr *predicate;  // null when absent
  Block *body;
};

// One `key = value` of the `config = { ... }` block.
struct ConfigItem {
  SourceRange range;
  std::string key;
  Expr *value;
};

// A C struct definition at the top of a script, kept as its text (sema/c_struct.cpp lays it
// out).
struct CStructDef {
  SourceRange range;
  std::string text;
};

// `let @m = lruhash(1000);` at the top of a script: the BPF map type and capacity of @m.
struct MapDecl {
  SourceRange range;
  std::string name;      // "@m"
  std::string map_type;  // hash, lruhash, percpuhash, percpulruhash (checked by sema)
  uint64_t max_entries;
};

// `macro name($v, @m, e) { body }`: expanded at each call by sema/macros.cpp before checking.
struct MacroDef {
  SourceRange range;
  std::string name;
  std::vector<std::string> params;  // "$v", "@m" or "e", as written
  std::vector<Stmt *> body;
  Expr *value;  // the body's last expression without `;`, or null
};

struct Program : Node {
  static constexpr NodeKind Kind = NodeKind::Program;
  Program(SourceRange r, std::vector<Probe *> probes, std::vector<ConfigItem> config = {},
          std::vector<CStructDef> structs = {})
      : Node(Kind, r), probes(std::move(probes)), config(std::move(config)),
        structs(std::move(structs)) {}
  std::vector<Probe *> probes;
  std::vector<ConfigItem> config;
  std::vector<CStructDef> structs;
  std::vector<MapDecl> map_decls;
  std::vector<MacroDef> macros;
};

}  // namespace rbt::ast
