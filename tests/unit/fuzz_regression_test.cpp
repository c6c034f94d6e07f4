// Inputs the libFuzzer target (tests/fuzz) once crashed on, run through the same pipeline:
// parse → type check → codegen, in memory. Each is also a seed in tests/fuzz/corpus/.

#include <gtest/gtest.h>

#include <string>

#include "codegen.h"
#include "parse.h"
#include "sema/sema.h"

namespace {

// The first diagnostic or codegen error, or "" when the script compiled.
std::string compile_error(const std::string &text) {
  rbt::SourceFile source("fuzz.rbt", text);
  rbt::DiagnosticEngine diags(source);
  rbt::ast::ASTContext ctx;
  rbt::sema::SemaInfo info;
  auto *program = rbt::parse(source, ctx, diags);
  if (!program || !rbt::sema::analyse(*program, diags, info))
    return diags.diagnostics().empty() ? "failed" : diags.diagnostics()[0].message;
  auto object = rbt::codegen::compile(*program, info, {});
  return object ? "" : object.error().why;
}

}  // namespace

// std::stoul threw std::out_of_range from the lexer.
TEST(FuzzRegression, huge_positional_parameter_is_a_missing_one) {
  EXPECT_EQ(compile_error("BEGIN { @ = $99999999999999999999; }"), "");
}

// 1e20 wrapped to 7766279631452241920 and 1e64 to 0 instead of being rejected.
TEST(FuzzRegression, exponent_literals_that_overflow_are_errors) {
  EXPECT_EQ(compile_error("BEGIN { @ = 1e20; }"), "integer literal '1e20' does not fit in 64 bits");
  EXPECT_EQ(compile_error("BEGIN { @ = 1e64; }"), "integer literal '1e64' does not fit in 64 bits");
  EXPECT_EQ(compile_error("BEGIN { @ = 1e19; }"), "");
}

// Linking stdlib bitcode read the buffer name from a destroyed temporary (ASan:
// stack-use-after-scope in link_stdlib).
TEST(FuzzRegression, scripts_that_link_the_bpf_library_compile) {
  EXPECT_EQ(compile_error("uprobe:libc:getpid { @[rstack] = count(); }"), "");
}
