#pragma once
// Prints an AST as an indented tree (`-d ast`, and parser unit tests). With a SemaInfo, each
// expression is followed by its type (`-d types`).

#include <ostream>

#include "ast.h"

namespace rbt::sema {
struct SemaInfo;
}

namespace rbt::ast {

void print_ast(std::ostream &out, const Node &node, const sema::SemaInfo *types = nullptr);

}  // namespace rbt::ast
