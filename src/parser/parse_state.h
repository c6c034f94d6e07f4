#pragma once
// State shared by the Flex lexer and the Bison parser during one parse (internal to the parser
// library: only lexer.l, parser.yy and parse.cpp include it).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ast_context.h"
#include "diagnostics.h"
#include "source.h"

namespace rbt {

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
  }

  // Top-level declarations seen between probes; finish() moves them into the program.
  std::vector<ast::MapDecl> map_decls;
  std::vector<ast::MacroDef> macros;
  void add_map_decl(const SourceRange &range, const std::string &text);
  void add_macro(const SourceRange &range, std::string name, std::vector<std::string> params,
                 ast::Block *body);
  void finish(ast::Program &program);
  // `{ ...; v }` as a value: the block's statements and its unterminated last expression.
  ast::BlockExpr *block_expr(ast::Block *block);
  // `_ = expr` discards a value; any other name on the left is an error.
  void check_discard(const SourceRange &range, const std::string &name);

  template <typename T, typename... Args> T *make(const SourceRange &r, Args &&...args) {
    return ctx.make<T>(r, std::forward<Args>(args)...);
  }
};

// Decodes a string literal's escapes (\n \t \\ \" \0NN \xHH); reports bad ones.
std::string decode_string_literal(ParseState &state, const char *text, size_t len);
// Parses an integer literal: decimal, 0x hex, 0 octal, `_` separators, an exponent (1e3) and
// duration suffixes (ns us ms s m h d, giving nanoseconds... only where bpftrace has them).
std::optional<uint64_t> parse_int_literal(ParseState &state, const std::string &text);

}  // namespace rbt
