// A back-end error names a place in the user's script, never a stdlib header.

#include <gtest/gtest.h>

#include "ast_context.h"
#include "backend_error.h"
#include "parse.h"

namespace {

struct Parsed {
  explicit Parsed(const std::string &text) : source("script.rbt", text), diags(source) {
    program = rbt::parse(source, ctx, diags);
  }
  rbt::SourceFile source;
  rbt::DiagnosticEngine diags;
  rbt::ast::ASTContext ctx;
  rbt::ast::Program *program = nullptr;
};

TEST(BackendError, stack_overflow_in_a_probe_is_a_caret_error_on_that_probe) {
  const std::string text = "BEGIN { exit(); }\ntracepoint:a:b { @x = 1; }\n";
  Parsed p(text);
  ASSERT_NE(p.program, nullptr);
  std::map<std::string, const rbt::ast::Probe *> functions{{"probe_0", p.program->probes[0]},
                                                           {"probe_1", p.program->probes[1]}};
  rbt::Error e = rbt::codegen::backend_error(
      "stdlib/bpf/usdt.bpf.c:0:0: in function probe_1_loop i32 (ptr): Looks like the BPF stack "
      "limit is exceeded. Please move large on stack variables into BPF per-cpu array map.\n",
      functions, "script.rbt", text);
  EXPECT_NE(e.diagnostic.find("script.rbt:2:1: error: this probe needs more than the 512 bytes"),
            std::string::npos)
      << e.diagnostic;
  EXPECT_NE(e.diagnostic.find("tracepoint:a:b { @x = 1; }\n^~~~"), std::string::npos)
      << e.diagnostic;
  EXPECT_EQ(e.diagnostic.find("usdt.bpf.c"), std::string::npos);
  EXPECT_NE(e.detail.find("usdt.bpf.c"), std::string::npos);  // LLVM's words, with -v
}

TEST(BackendError, unknown_function_keeps_the_message_without_a_location) {
  Parsed p("BEGIN { }\n");
  rbt::Error e = rbt::codegen::backend_error("x.c:0:0: in function helper i32 (ptr): bad thing",
                                             {}, "script.rbt", "BEGIN { }\n");
  EXPECT_TRUE(e.diagnostic.empty());
  EXPECT_EQ(e.why, "bad thing");
}

}  // namespace
