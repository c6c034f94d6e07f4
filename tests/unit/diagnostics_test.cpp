#include <gtest/gtest.h>

#include "test_helpers.h"

using rbt::test::Checked;

TEST(Diagnostics, syntax_error_has_caret_under_the_token) {
  Checked c("BEGIN { @x = ; }");
  EXPECT_FALSE(c.program);
  EXPECT_EQ(c.errors(), "test.rbt:1:14: error: syntax error: unexpected ';', expected expression\n"
                        "BEGIN { @x = ; }\n"
                        "             ^\n");
}

TEST(Diagnostics, range_is_underlined_with_tildes) {
  Checked c("BEGIN { foo(1); }");
  EXPECT_EQ(c.errors(), "test.rbt:1:9: error: unknown function 'foo'\n"
                        "BEGIN { foo(1); }\n"
                        "        ^~~~~~\n");
}

TEST(Diagnostics, reports_errors_on_the_right_line) {
  Checked c("BEGIN {\n  @x = 1;\n  @x = \"s\";\n}\n");
  EXPECT_EQ(c.errors(), "test.rbt:3:8: error: type mismatch for @x: assigning string[2] to a map "
                        "that holds int64\n"
                        "  @x = \"s\";\n"
                        "       ^~~\n");
}

TEST(Diagnostics, several_errors_in_one_run) {
  Checked c("BEGIN { foo(); bar(); }");
  EXPECT_EQ(c.diags.diagnostics().size(), 2u);
}

TEST(Diagnostics, unterminated_string_and_invalid_character) {
  Checked a("BEGIN { printf(\"abc); }");
  EXPECT_NE(a.errors().find("unterminated string literal"), std::string::npos);
  Checked b("BEGIN { @x = 1 # 2; }");
  EXPECT_NE(b.errors().find("invalid character '#'"), std::string::npos);
}

TEST(Diagnostics, end_of_input_points_past_the_last_character) {
  Checked c("BEGIN { @x = 1");
  EXPECT_EQ(c.errors(), "test.rbt:1:15: error: syntax error: unexpected end of input, expected "
                        "'}'\n"
                        "BEGIN { @x = 1\n"
                        "              ^\n");
}

TEST(Diagnostics, error_in_a_macro_body_notes_each_call_that_expanded_it) {
  Checked c("macro m() { foo(1) }\nBEGIN { m(); }");
  EXPECT_EQ(c.errors(), "test.rbt:1:13: error: unknown function 'foo'\n"
                        "macro m() { foo(1) }\n"
                        "            ^~~~~~\n"
                        "test.rbt:2:9: note: expanded from here\n"
                        "BEGIN { m(); }\n"
                        "        ^~~\n");
}
