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

// bpftrace syntax of issue 14: records, `a ?: b`, casts through pointers and C type names,
// typeof, container_of, __builtin_ names, builtins called as name().
TEST(Parser, record_is_a_tuple_with_field_names) {
  Checked c("BEGIN { $t = (a = 1, b = \"x\", c = (2, 3)); $u = $t.c; @m = $t.b; }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.maps.at("@m").value.name(), "string[2]");
  Checked order("BEGIN { $t = (a = 1, b = 2); $t = (b = 3, a = 4); }");
  EXPECT_TRUE(order.ok) << order.errors();
  Checked other("BEGIN { $t = (a = 1, b = 2); $t = (a = 3, c = 4); }");
  EXPECT_FALSE(other.ok);
  EXPECT_EQ(first_error_of(Checked("BEGIN { $t = (a = 1); print($t.b); }")),
            "record { int64 a } has no field 'b'");
}

TEST(Parser, elvis_evaluates_its_value_once) {
  Checked c("BEGIN { $a = @x++ ?: 5; }");
  ASSERT_TRUE(c.ok) << c.errors();
  // `@x++` is written once (`@x = @x + 1`, value `@x - 1`: three references to @x); the value
  // is kept in a variable of its own rather than copied into both places it is used.
  std::string ast = c.ast();
  EXPECT_NE(ast.find("var $__elvis1"), std::string::npos) << ast;
  size_t count = 0;
  for (size_t at = ast.find("map @x"); at != std::string::npos; at = ast.find("map @x", at + 1))
    count++;
  EXPECT_EQ(count, 3u) << ast;
}

TEST(Parser, casts_through_several_pointers_and_c_type_names) {
  Checked c("BEGIN { $p = (int32 **)0; $q = *$p; $v = (void *)0; $c = (char)1; "
            "$s = (struct S **)0; $l = (unsigned long)1; $i = (int *)0; }",
            {});
  EXPECT_FALSE(c.ok);  // struct S is unknown; everything else parses
  EXPECT_EQ(first_error_of(c), "unknown struct 'S'");
  Checked ok("BEGIN { $p = (int32 **)0; $q = *$p; $v = (void *)0; $c = (char)1; "
             "$l = (unsigned long)1; $i = (int *)0; @q = $q; @c = $c; @l = $l; }");
  ASSERT_TRUE(ok.ok) << ok.errors();
  EXPECT_EQ(ok.info.maps.at("@q").value.name(), "int32 *");
  EXPECT_EQ(first_error_of(Checked("BEGIN { $v = (void)1; }")),
            "cannot cast to void (only to a pointer, as in (void *)p)");
}

TEST(Parser, typeof_declares_a_variable_of_an_expression_type) {
  Checked c("macro add(x) { let $y: typeof(x); $y = 1; x + $y } "
            "BEGIN { let $a: typeof(uint16); let $b: typeof(uint64 *); @r = add(1); @a = $a; }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.maps.at("@r").value.name(), "int64");
}

TEST(Parser, container_of_steps_back_to_the_struct) {
  Checked c("struct Foo { int m; int n; } BEGIN { $n = (int32 *)8; "
            "$f = container_of($n, typeof(struct Foo), n); @f = $f; }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.maps.at("@f").value.name(), "struct Foo *");
}

TEST(Parser, builtin_wrappers_and_builtins_called_as_functions) {
  Checked c("BEGIN { @a = __builtin_cpu; @b = cpu(); @c = __builtin_elapsed; "
            "@d = config().max_strlen; @e = __builtin_config.stack_mode; }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.maps.at("@e").value.name(), "string[16]");
}

TEST(Parser, pointer_cast_to_a_macro_type_parameter) {
  // `(t*)x` is a cast only where t is the macro's parameter; `(a*b)` stays a product and
  // `(x*)` outside a macro stays a syntax error.
  Checked c("macro c(t) { (t *)8 } macro prod(a, b) { (a*b)-1 } "
            "BEGIN { @p = c(typeof(uint16)); @q = c(typeof(uint8*)); @n = prod(2, 3); }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.maps.at("@p").value.name(), "uint16 *");
  EXPECT_EQ(c.info.maps.at("@q").value.name(), "uint8 * *");
  EXPECT_EQ(c.info.maps.at("@n").value.name(), "int64");
  EXPECT_FALSE(Checked("macro c(t) { 1 } BEGIN { $x = 2; @y = (x*)$x; }").ok);
}
