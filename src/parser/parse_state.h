#pragma once
// State shared by the Flex lexer and the Bison parser during one parse (internal to the parser
// library: only lexer.l, parser.yy and parse.cpp include it).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ast_context.h"
#include "diagnostics.h"
#include "source.h"

namespace rbt {

// How deeply statements and expressions may nest. Every pass after the parser (the AST
// printer, the type checker, codegen) recurses once per level, so an unbounded tree overflows
// the C++ stack (30,000 nested `if`, 100,000 `1 + 1 + ...`); the parser, whose own stack is on
// the heap, refuses such a tree with a caret error instead. No script written by hand nests
// anywhere near this.
constexpr uint32_t kMaxNesting = 1000;

struct ParseState {
  ParseState(const SourceFile &source, ast::ASTContext &ctx, DiagnosticEngine &diags)
      : source(source), ctx(ctx), diags(diags) {}

  const SourceFile &source;
  ast::ASTContext &ctx;
  DiagnosticEngine &diags;

  // Lexer cursor: where the next character is, and the range of the last token.
  unsigned line = 1, col = 1;
  SourceRange token;
  int brace_depth = 0;  // inside an action block when > 0
  const SourceFile *file = nullptr;  // an imported file being parsed (null: the script)
  // A C definition being read (lexer.l's CDEF): its text so far, its range, brace depth.
  std::string c_def;
  SourceRange c_def_range;
  int c_def_depth = 0;
  // The expression parameters (`a`, not `$v`/`@m`) of the macro being lexed: in its body
  // `(a*)` is a cast to a pointer to the type `a` will name (lexer.l, PARAM_PTR_CAST).
  std::vector<std::string> macro_params;
  bool in_macro_params = false;
  // Where the lexer's input position is; Flex reads from this buffer.
  size_t input_pos = 0;

  // Records the range of the text just matched and moves the cursor past it.
  void advance(const char *text, size_t len) {
    token.line = line;
    token.col = col;
    for (size_t i = 0; i < len; i++) {
      if (text[i] == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    token.end_line = line;
    token.end_col = col;
    token.file = file;
  }

  // Top-level declarations seen between probes; finish() moves them into the program.
  std::vector<ast::MapDecl> map_decls;
  std::vector<ast::MacroDef> macros;
  std::vector<ast::CStructDef> c_defs;
  std::optional<std::vector<ast::ConfigItem>> config;
  // `import "path";` lines, in order; parse() reads them once the file is parsed.
  std::vector<std::pair<SourceRange, std::string>> imports;
  bool body_seen = false;  // a probe, macro or map declaration: no import may follow
  void add_import(const SourceRange &range, std::string path);
  void add_config(const SourceRange &range, std::vector<ast::ConfigItem> items);
  void add_map_decl(const SourceRange &range, const std::string &text);
  void add_macro(const SourceRange &range, std::string name, std::vector<std::string> params,
                 ast::Block *body);
  void finish(ast::Program &program);
  // `{ ...; v }` as a value: the block's statements and its unterminated last expression.
  ast::BlockExpr *block_expr(ast::Block *block);
  // `if c { a } else { b }` as a value (`print(if ...)`, or ending a block that is one): the
  // ternary of its branches' values; null when a branch has none or there is no else.
  ast::Expr *if_value(ast::If *stmt);
  // An if where a value is expected: if_value, else an error.
  ast::Expr *if_expr(ast::Stmt *if_stmt);
  // `$x++`, `--@m[k]` and the like: `$x = $x + 1` as a statement; as a value a block
  // expression `{ $x = $x + 1; $x - 1 }` (postfix: the old value) or `{ ...; $x }` (prefix).
  ast::Expr *increment(const SourceRange &range, ast::Expr *target, ast::BinaryOp op,
                       bool prefix);
  // An expression used as a statement: an increment is its assignment alone.
  ast::Stmt *statement_of(const SourceRange &range, ast::Expr *expr);
  // `(a = 1, b = "x")`: a tuple whose elements have names; a name may appear once.
  ast::Expr *record(const SourceRange &range,
                    std::vector<std::pair<std::string, ast::Expr *>> fields);
  // `name(args)`: a call; bpftrace's stdlib functions of a task become the fields they read
  // (`ppid(t)`: `t.real_parent.pid`).
  ast::Expr *call(const SourceRange &range, const std::string &name, std::vector<ast::Expr *> args);
  // `container_of(p, typeof(struct T), field)` (bpftrace's stdlib macro): the struct T whose
  // `field` p points to, `(struct T *)((uint8 *)p - offsetof(struct T, field))`.
  ast::Expr *container_of(const SourceRange &range, const SourceRange &name_range,
                          const std::string &name, std::vector<ast::Expr *> args,
                          const std::string &type, const std::string &field);
  // `name()`: a call, or a builtin variable spelled as a call (`comm()`, as bpftrace allows).
  ast::Expr *call_without_args(const SourceRange &range, const std::string &name);
  // `a ?: b` (a when it is true, else b): `{ $__elvisN = a; $__elvisN ? $__elvisN : b }`, so
  // that a is evaluated once.
  ast::Expr *elvis(const SourceRange &range, ast::Expr *value, ast::Expr *otherwise);
  // `(enum Foo)x`: a cast to an enum the script defines (the only two-word cast).
  ast::Expr *enum_cast(const SourceRange &range, const SourceRange &keyword_range,
                       const std::string &keyword, const std::string &name, ast::Expr *operand);
  // `(union U *)p`: a union is laid out as a struct whose members share offset 0.
  ast::Expr *union_cast(const SourceRange &range, const SourceRange &keyword_range,
                        const std::string &keyword, const std::string &name, ast::Expr *operand);
  // `sizeof(union U)`.
  ast::Expr *union_size(const SourceRange &range, const SourceRange &keyword_range,
                        const std::string &keyword, const std::string &name);
  // `sizeof(t*)`, `typeof(t**)` with t a macro's parameter (lexed as one PARAM_PTR_CAST
  // token): a pointer type over the type of whatever t is given.
  ast::TypeExpr *param_pointer_type(const SourceRange &range,
                                    const std::pair<std::string, unsigned> &param);
  // `return expr;`: the value is evaluated (its side effects happen), then the probe returns.
  ast::Stmt *return_value(const SourceRange &range, ast::Expr *value);
  // `_ = expr` discards a value; any other name on the left is an error.
  void check_discard(const SourceRange &range, const std::string &name);

  // Makes a node and records its nesting depth: one more than its deepest child's (a block
  // adds none: the statement that owns it already counted).
  template <typename T, typename... Args> T *make(const SourceRange &r, Args &&...args) {
    uint32_t below = std::max({uint32_t{0}, depth_of(args)...});
    T *node = ctx.make<T>(r, std::forward<Args>(args)...);
    note_depth(node, below + (std::is_same_v<T, ast::Block> ? 0 : 1),
               !std::is_base_of_v<ast::Expr, T>);
    return node;
  }

  // A block that is a statement by itself (`{ { ... } }`) is a level of nesting, as the
  // statement that owns a block (if, while) is.
  ast::Block *nest(ast::Block *block) {
    note_depth(block, depth_[block] + 1);
    return block;
  }

private:
  int elvis_count_ = 0;
  bool in_if_value_ = false;  // if_value is reading the branches of an if used as a value
  void note_depth(const ast::Node *node, uint32_t d, bool statement = true) {
    depth_[node] = d;
    if (d > kMaxNesting && !too_deep_) {
      too_deep_ = true;
      diags.error(node->range, std::string(statement ? "statements nest" : "expression nests") +
                                   " too deeply (more than " + std::to_string(kMaxNesting) +
                                   " levels)");
    }
  }

  template <typename A> uint32_t depth_of(const A &arg) const {
    using D = std::decay_t<A>;
    if constexpr (std::is_pointer_v<D> &&
                  std::is_base_of_v<ast::Node, std::remove_cv_t<std::remove_pointer_t<D>>>) {
      auto it = arg ? depth_.find(arg) : depth_.end();
      return it == depth_.end() ? 0 : it->second;
    } else if constexpr (is_node_vector<D>::value) {
      uint32_t d = 0;
      for (auto *n : arg)
        d = std::max(d, depth_of(n));
      return d;
    } else {
      return 0;
    }
  }
  template <typename V> struct is_node_vector : std::false_type {};
  template <typename N> struct is_node_vector<std::vector<N *>> : std::is_base_of<ast::Node, N> {};

  std::unordered_map<const ast::Node *, uint32_t> depth_;
  std::unordered_map<const ast::Expr *, ast::Stmt *> increments_;  // value → its assignment
  bool too_deep_ = false;
};

// Decodes a string literal's escapes (\n \t \\ \" \0NN \xHH); reports bad ones.
std::string decode_string_literal(ParseState &state, const char *text, size_t len);
// Parses an integer literal: decimal, 0x hex, 0 octal, `_` separators, an exponent (1e3) and
// duration suffixes (ns us ms s m h d, giving nanoseconds... only where bpftrace has them).
std::optional<uint64_t> parse_int_literal(ParseState &state, const std::string &text);

}  // namespace rbt
