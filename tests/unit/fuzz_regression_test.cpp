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

// The BPF back end's "stack limit exceeded" went to LLVM's default diagnostic handler, which
// printed it and called exit(1) from inside codegen; now it is an ordinary codegen error.
TEST(FuzzRegression, bpf_stack_overflow_is_an_error_not_an_exit) {
  // A 600-byte key once overflowed the 512-byte stack; large values now live in per-CPU
  // scratch memory, and only a value larger than a scratch page is an error.
  std::string key(600, 'a');
  EXPECT_EQ(compile_error("BEGIN { @k[\"" + key + "\"] = 1; }"), "");
  std::string huge(40000, 'a');
  EXPECT_NE(compile_error("BEGIN { @k[\"" + huge + "\"] = 1; }").find("scratch memory"),
            std::string::npos);
}

// `!!!!...1` nested ~1,800 deep overflowed the stack in the type checker under ASan, and
// `1 + 1 + ...` 10,000 terms did so in a release build.
TEST(FuzzRegression, deep_expressions_are_an_error_not_a_stack_overflow) {
  std::string sum = "BEGIN { @t = 1";
  for (int i = 0; i < 20000; i++)
    sum += " + 1";
  EXPECT_EQ(compile_error(sum + "; }"), "expression nests too deeply (more than 1000 levels)");
  EXPECT_EQ(compile_error("BEGIN { @t = " + std::string(5000, '!') + "1; }"),
            "expression nests too deeply (more than 1000 levels)");
  EXPECT_EQ(compile_error("BEGIN { @t = " + std::string(900, '!') + "1; }"), "");
}

// std::stoul threw std::out_of_range on a struct's array size of 80 digits; sizes that fit but
// would overflow 32-bit offsets are refused too.
TEST(FuzzRegression, struct_array_sizes_are_bounded) {
  EXPECT_EQ(compile_error("struct a { char n[77777777777777777777777777777777777777777]; }\n"
                          "BEGIN { }"),
            "an array in struct a must have at most 1048576 elements");  // 0: a flexible array
  EXPECT_EQ(compile_error("struct b { char n[1000000]; }\nstruct a { struct b x[1000]; }\n"
                          "BEGIN { }"),
            "struct a is larger than 16777216 bytes");
  EXPECT_EQ(compile_error("struct a { char n[16]; }\nBEGIN { @ = sizeof(struct a); }"), "");
}
