#include <gtest/gtest.h>

#include "test_helpers.h"

using rbt::test::Checked;

namespace {
std::string first_error_of(const Checked &c) {
  return c.diags.diagnostics().empty() ? "" : c.diags.diagnostics()[0].message;
}
}  // namespace

TEST(Parser, builds_probe_with_predicate_and_body) {
  Checked c("tracepoint:syscalls:sys_enter_openat /comm == \"cat\"/ { @[comm] = count(); }");
  ASSERT_TRUE(c.program) << c.errors();
  EXPECT_EQ(c.ast(), "program\n"
                     "  probe\n"
                     "    tracepoint:syscalls:sys_enter_openat\n"
                     "    binop ==\n"
                     "      builtin comm\n"
                     "      string \"cat\"\n"
                     "    block\n"
                     "      =\n"
                     "        map @\n"
                     "          builtin comm\n"
                     "        call count\n");
}

TEST(Parser, operator_precedence_follows_c) {
  Checked c("BEGIN { $x = 1 + 2 * 3 == 7 && !0; }");
  ASSERT_TRUE(c.program) << c.errors();
  EXPECT_EQ(c.ast(), "program\n  probe\n    BEGIN\n    block\n      =\n        var $x\n"
                     "        binop &&\n"
                     "          binop ==\n"
                     "            binop +\n"
                     "              int 1\n"
                     "              binop *\n"
                     "                int 2\n"
                     "                int 3\n"
                     "            int 7\n"
                     "          unop !\n"
                     "            int 0\n");
}

TEST(Parser, several_attach_points_and_paths) {
  Checked c("uprobe:/usr/bin/ruby:rb_str_new, i:s:1 { }");
  ASSERT_TRUE(c.program) << c.errors();
  ASSERT_EQ(c.program->probes[0]->attach_points.size(), 2u);
  EXPECT_EQ(c.program->probes[0]->attach_points[0]->text, "uprobe:/usr/bin/ruby:rb_str_new");
  EXPECT_EQ(c.program->probes[0]->attach_points[1]->text, "i:s:1");
}

TEST(Parser, compound_assignment_desugars_to_binary) {
  Checked c("BEGIN { @x = 1; @x += 2; }");
  ASSERT_TRUE(c.program) << c.errors();
  EXPECT_NE(c.ast().find("      =\n        map @x\n        binop +\n          map @x\n          int 2\n"),
            std::string::npos)
      << c.ast();
}

TEST(Parser, if_else_if_else_and_while) {
  Checked c("BEGIN { $i = 0; while ($i < 3) { $i++; } if ($i == 1) { } else if ($i == 2) { } "
            "else { exit(); } }");
  ASSERT_TRUE(c.program) << c.errors();
  EXPECT_NE(c.ast().find("while"), std::string::npos);
  EXPECT_NE(c.ast().find("      if\n"), std::string::npos);
}

// A C definition is one token up to its matching brace (nested definitions, comments and
// attributes included, the ';' optional), at the top or between probes, before or after config.
TEST(Parser, c_definitions_are_read_whole) {
  Checked c("struct A { struct { int x; } in; int y[2]; } /* c */ __attribute__((packed));\n"
            "config = { max_strlen = 64 }\n"
            "enum E { X = 1, Y }\n"
            "BEGIN { }\n"
            "union U { int i; char c; }\n"
            "END { }");
  ASSERT_TRUE(c.program) << c.errors();
  ASSERT_EQ(c.program->structs.size(), 3u);
  EXPECT_EQ(c.program->structs[0].text.rfind("struct A {", 0), 0u);
  EXPECT_NE(c.program->structs[0].text.find("packed"), std::string::npos);
  EXPECT_EQ(c.program->structs[1].text, "enum E { X = 1, Y }");
  EXPECT_EQ(c.program->config.size(), 1u);
  EXPECT_EQ(c.program->probes.size(), 2u);
}

// `$a++` as a value is a block expression; as a statement, only its assignment.
TEST(Parser, increments_are_values_and_statements) {
  Checked c("BEGIN { $a = 0; $a++; @x = avg($a--); @y = ++@x; }");
  ASSERT_TRUE(c.program) << c.errors();
  std::string ast = c.ast();
  size_t avg = ast.find("call avg\n");
  ASSERT_NE(avg, std::string::npos) << ast;
  EXPECT_EQ(ast.find("block expression", avg), ast.find("\n", avg) + 1 + ast.substr(ast.find("\n", avg) + 1).find_first_not_of(' ')) << ast;
  EXPECT_EQ(ast.find("expr\n"), std::string::npos) << ast;  // `$a++;` is no expression statement
  EXPECT_EQ(first_error_of(Checked("config = { a = 1 } config = { b = 2 } BEGIN { }")),
            "a second 'config = { ... }' block: give every key in one");
}

TEST(Lexer, integer_literals_hex_octal_separators_exponent) {
  Checked c("BEGIN { @a = 0x1f; @b = 010; @c = 1_000; @d = 1e3; }");
  ASSERT_TRUE(c.program) << c.errors();
  std::string ast = c.ast();
  EXPECT_NE(ast.find("int 31"), std::string::npos);
  EXPECT_NE(ast.find("int 8"), std::string::npos);
  EXPECT_NE(ast.find("int 1000"), std::string::npos);
}

TEST(Lexer, string_escapes_are_decoded) {
  Checked c(R"(BEGIN { printf("a\tb\n\x41\101\"\\"); })");
  ASSERT_TRUE(c.program) << c.errors();
  EXPECT_NE(c.ast().find("string \"a\tb\\nAA\\\"\\\""), std::string::npos) << c.ast();
}

TEST(Lexer, comments_and_shebang_are_skipped) {
  Checked c("#!/usr/bin/env rbt\n// line\n/* block\n comment */ BEGIN { /* in body */ exit(); }\n");
  EXPECT_TRUE(c.program) << c.errors();
}

TEST(Lexer, predicate_division_needs_no_special_syntax) {
  Checked c("BEGIN /10 / 2 == 5/ { exit(); }");
  EXPECT_TRUE(c.program) << c.errors();
}
