#pragma once
// Shared by codegen tests: a script parsed, checked and compiled in memory (no kernel).

#include <string>

#include "codegen.h"
#include "parse.h"
#include "sema/sema.h"

namespace rbt::test {

struct Compiled {
  explicit Compiled(const std::string &text, const codegen::CodegenOptions &options = {})
      : source("test.rbt", text), diags(source) {
    auto *program = parse(source, ctx, diags);
    if (!program || !sema::analyse(*program, diags, info)) {
      error = diags.render();
      return;
    }
    auto r = codegen::compile(*program, info, options);
    if (!r) {
      error = r.error().why;
      return;
    }
    object = std::move(*r);
  }
  SourceFile source;
  DiagnosticEngine diags;
  ast::ASTContext ctx;
  sema::SemaInfo info;
  codegen::CompiledObject object;
  std::string error;
};

}  // namespace rbt::test
