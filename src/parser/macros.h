#pragma once
// bpftrace's macros (`macro name($v, @m, e) { ... }`): every call is replaced by a block
// expression holding the body, its parameters substituted (macros.cpp says how).

#include "ast.h"
#include "ast_context.h"
#include "diagnostics.h"

namespace rbt {

void expand_macros(ast::Program &program, ast::ASTContext &ctx, DiagnosticEngine &diags);

}  // namespace rbt
