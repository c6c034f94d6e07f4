#pragma once
// The parser's entry point: source text → AST. Syntax errors go to the DiagnosticEngine.

#include "ast_context.h"
#include "diagnostics.h"
#include "preprocess.h"
#include "source.h"

namespace rbt {

// Parses `source` into `ctx`. Returns the program, or null when any error was reported.
// Preprocessor lines are applied first, with `header_macros` for what #include brings.
ast::Program *parse(const SourceFile &source, ast::ASTContext &ctx, DiagnosticEngine &diags,
                    const HeaderMacros &header_macros = {});

}  // namespace rbt
