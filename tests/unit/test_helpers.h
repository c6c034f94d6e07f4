#pragma once
// Shared helpers for front-end unit tests: parse and check a program, render diagnostics.

#include <sstream>
#include <string>

#include "ast_printer.h"
#include "parse.h"
#include "sema/sema.h"

namespace rbt::test {

struct Checked {
  explicit Checked(const std::string &text, const sema::Environment &env = {})
      : source("test.rbt", text), diags(source) {
    program = parse(source, ctx, diags);
    if (program)
      ok = sema::analyse(*program, diags, info, env);
  }
  std::string errors() const { return diags.render(); }
  std::string ast() const {
    std::ostringstream s;
    ast::print_ast(s, *program);
    return s.str();
  }

  SourceFile source;
  DiagnosticEngine diags;
  ast::ASTContext ctx;
  ast::Program *program = nullptr;
  sema::SemaInfo info;
  bool ok = false;
};

}  // namespace rbt::test
