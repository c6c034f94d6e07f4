#pragma once
// The parser's entry point: source text → AST. Syntax errors go to the DiagnosticEngine.

#include <optional>

#include "ast_context.h"
#include "diagnostics.h"
#include "preprocess.h"
#include "result.h"
#include "source.h"

namespace rbt {

// Parses `source` into `ctx`. Returns the program, or null when any error was reported.
// Preprocessor lines are applied first, with `header_macros` for what #include brings.
ast::Program *parse(const SourceFile &source, ast::ASTContext &ctx, DiagnosticEngine &diags,
                    const HeaderMacros &header_macros = {});

// An integer literal's value, written as in a script: decimal, 0x hex, 0 octal, `_`
// separators, an exponent (1e3), duration suffixes (10ms: nanoseconds). The error's err is
// ERANGE when it does not fit in 64 bits, EINVAL when it is no integer.
Result<uint64_t> int_literal_value(const std::string &text);

// A command-line argument ($1, --name=value) read as a number, as bpftrace does: an optional
// '-', then decimal, 0x hex or 0 octal digits, up to 2^64-1 (0xffffffffffffffff). The value is
// its 64-bit two's complement; `negative` says whether it was written with '-'. Anything
// else (a word, "10ms", "1e3") is no number: such an argument is a string.
struct NumericArgument {
  uint64_t value;
  bool negative;
};
std::optional<NumericArgument> numeric_argument(const std::string &text);

}  // namespace rbt
