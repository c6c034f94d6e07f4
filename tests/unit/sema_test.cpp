#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "test_helpers.h"

using rbt::test::Checked;

namespace {
std::string first_error(const Checked &c) {
  if (c.diags.diagnostics().empty())
    return "";
  return c.diags.diagnostics()[0].message;
}
}  // namespace

TEST(Sema, map_types_come_from_assignments) {
  Checked c("BEGIN { @c[comm] = count(); @s = \"x\"; @t[1, \"a\"] = (1, comm); }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.maps.at("@c").key.name(), "string[16]");
  EXPECT_EQ(c.info.maps.at("@c").value.name(), "count_t");
  EXPECT_EQ(c.info.maps.at("@s").value.name(), "string[2]");
  EXPECT_EQ(c.info.maps.at("@t").key.name(), "(int64, string[2])");
  EXPECT_EQ(c.info.maps.at("@t").value.name(), "(int64, string[16])");
}

TEST(Sema, map_read_before_the_probe_that_assigns_it) {
  Checked c("interval:s:1 { @y = @x + 1; } BEGIN { @x = 5; }");
  EXPECT_TRUE(c.ok) << c.errors();
}

TEST(Sema, string_map_grows_to_the_longest_value) {
  Checked c("BEGIN { @s = \"ab\"; @s = \"abcdef\"; }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.maps.at("@s").value.name(), "string[7]");
}

TEST(Sema, type_errors_have_their_own_messages) {
  EXPECT_EQ(first_error(Checked("BEGIN { @x = 1; @x = \"s\"; }")),
            "type mismatch for @x: assigning string[2] to a map that holds int64");
  EXPECT_EQ(first_error(Checked("BEGIN { $x = comm + 1; }")),
            "type mismatch for '+': string[16] + int64");
  EXPECT_EQ(first_error(Checked("BEGIN { @x = count(); @x = sum(1); }")),
            "type mismatch for @x: assigning sum_t to a map that holds count_t");
  EXPECT_EQ(first_error(Checked("BEGIN { @x[1] = 1; @x = 2; }")),
            "@x is used with no key here but a key of type int64 elsewhere");
}

TEST(Sema, aggregation_outside_a_map_assignment) {
  EXPECT_EQ(first_error(Checked("BEGIN { $x = hist(1); }")),
            "hist() is an aggregation: it can only be assigned to a map, as in @x = hist(...)");
  EXPECT_EQ(first_error(Checked("BEGIN { @c = hist(1); $x = @c + 1; }")),
            "the value of @c (hist_t) cannot be read in an expression; it is only printed");
}

TEST(Sema, count_sum_min_max_avg_read_as_integers) {
  Checked c("BEGIN { @c = count(); @s = sum(-1); @a = avg(2); $x = @c + 1; $y = @s; "
            "@k[@c, @a] = 1; }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.maps.at("@k").key.name(), "(uint64, int64)");
  EXPECT_EQ(first_error(Checked("BEGIN { @s = stats(1); $x = @s; }")),
            "the value of @s (stats_t) cannot be read in an expression; it is only printed");
}

TEST(Sema, wrong_context_builtins) {
  EXPECT_EQ(first_error(Checked("BEGIN { @ = retval; }")),
            "retval is only available in uretprobe and kretprobe probes, not in BEGIN");
  EXPECT_EQ(first_error(Checked("tracepoint:a:b { @ = arg0; }")),
            "arg0 is not available in tracepoint probes (only in kprobe, uprobe, usdt and "
            "rawtracepoint)");
  EXPECT_TRUE(Checked("uretprobe:/bin/sh:main { @ = retval; }").ok);
  EXPECT_TRUE(Checked("rawtracepoint:sys_enter { @ = arg1; }").ok);
}

TEST(Sema, printf_arguments_match_the_format) {
  EXPECT_EQ(first_error(Checked("BEGIN { printf(\"%d %d\\n\", 1); }")),
            "printf: the format has 2 conversions but 1 argument was given");
  EXPECT_EQ(first_error(Checked("BEGIN { printf(\"%d\\n\", comm); }")),
            "printf: %d expects an integer, not string[16]");
  EXPECT_EQ(first_error(Checked("BEGIN { printf(\"%q\\n\", 1); }")),
            "invalid printf format: unknown conversion '%q'");
  EXPECT_TRUE(Checked("BEGIN { printf(\"%s %5d %-3x %%\\n\", comm, pid, 1); }").ok);
}

TEST(Sema, variables_are_block_scoped) {
  EXPECT_EQ(first_error(Checked("BEGIN { if (1) { let $x = 1; } @ = $x; }")),
            "variable $x is used before it is assigned");
  EXPECT_TRUE(Checked("BEGIN { $x = 1; if (1) { $x = 2; } @ = $x; }").ok);
}

// bpftrace 0.17's scoping, kept for its tools: a variable read after the block that assigned
// it ended is one variable for the whole probe (with a warning), unless a `let` declared it.
TEST(Sema, variable_read_after_its_block_is_probe_scoped) {
  Checked c("BEGIN { if (1) { $x = 1; } else { $x = 2; } @ = $x; }");
  EXPECT_TRUE(c.ok);
  std::set<const rbt::sema::VarInfo *> vars;
  for (auto &[node, var] : c.info.vars)  // the variable each $x (a Var node) reads or writes
    if (node->kind == rbt::ast::NodeKind::Var && var->name == "$x")
      vars.insert(var);
  ASSERT_EQ(vars.size(), 1u);
  EXPECT_TRUE((*vars.begin())->probe_scoped);
}

TEST(Sema, unknown_identifiers_and_arity) {
  EXPECT_EQ(first_error(Checked("BEGIN { @ = foo; }")), "unknown identifier 'foo'");
  EXPECT_EQ(first_error(Checked("BEGIN { @ = lhist(1, 0, 10); }")),
            "lhist() takes 4 arguments, got 3");
  EXPECT_EQ(first_error(Checked("BEGIN { @ = lhist(1, 0, $x, 1); }")),
            "variable $x is used before it is assigned");
  EXPECT_EQ(first_error(Checked("BEGIN { break; }")), "'break' outside of a loop");
}

TEST(Sema, byte_valued_builtins) {
  Checked c("config = { max_strlen = 20 } BEGIN { @b = buf(\"abcdef\", 3); @c = buf(0, 100); "
            "@t = strftime(\"%H\", nsecs); @i = ntop(1); @p = pton(\"::1\"); @q = pton(\"1.2.3.4\"); }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.maps.at("@b").value.name(), "buffer[3]");
  EXPECT_EQ(c.info.maps.at("@c").value.name(), "buffer[16]");  // max_strlen - 4
  EXPECT_EQ(c.info.maps.at("@t").value.name(), "timestamp");
  EXPECT_EQ(c.info.maps.at("@i").value.name(), "inet");
  EXPECT_EQ(c.info.maps.at("@p").value.name(), "uint8[16]");
  EXPECT_EQ(c.info.maps.at("@q").value.name(), "uint8[4]");
  EXPECT_EQ(first_error(Checked("BEGIN { @ = pton(\"1.2.3\"); }")),
            "pton() expects a valid IPv4/IPv6 address, got 1.2.3");
  EXPECT_EQ(first_error(Checked("BEGIN { printf(\"%rh\", 1); }")),
            "printf: %rh expects a buffer (buf()), not int64");
  EXPECT_EQ(first_error(Checked("BEGIN { join(1, comm); }")),
            "join()'s separator must be a string literal");
}

// C struct definitions are laid out as C does (x86-64 / BPF ABI), checked against gcc:
// sizeof 56, name 4, in 16, big 32, tags 40, next 48.
TEST(Sema, c_struct_definitions_lay_out_as_c) {
  Checked c("struct inner { short s; long v; };\n"
            "struct node { int id; char name[12]; struct inner in; unsigned long long big;\n"
            "  unsigned short tags[3]; struct node *next; };\n"
            "BEGIN { @[0] = sizeof(struct node); @[1] = offsetof(struct node, name);\n"
            "  @[2] = offsetof(struct node, in); @[3] = offsetof(struct node, big);\n"
            "  @[4] = offsetof(struct node, tags); @[5] = offsetof(struct node, next);\n"
            "  @[6] = sizeof(uint16); @[7] = sizeof(comm); }");
  ASSERT_TRUE(c.ok) << c.errors();
  const auto &node = *c.info.script_structs.at("node");
  EXPECT_EQ(node.size, 56u);
  EXPECT_EQ(node.find("in")->offset, 16u);
  EXPECT_EQ(node.find("next")->pointee->size, 56u);  // a pointer to the struct being defined
  std::vector<uint64_t> values;
  for (auto &[node_ptr, v] : c.info.constants)
    values.push_back(v);
  std::sort(values.begin(), values.end());
  EXPECT_EQ(values, (std::vector<uint64_t>{2, 4, 16, 16, 32, 40, 48, 56}));
}

TEST(Sema, c_struct_errors_name_the_field) {
  EXPECT_EQ(first_error(Checked("struct a { int x; struct nope y; };\nBEGIN { }")),
            "unknown type 'struct nope' of field 'y' in struct a");
  EXPECT_EQ(first_error(Checked("struct a { int x[n]; };\nBEGIN { }")),
            "an array in struct a needs a constant size");
  EXPECT_EQ(first_error(Checked("BEGIN { @ = offsetof(struct nope, x); }")), "unknown struct 'nope'");
}

// Bit fields are packed as gcc packs them on x86-64 (System V): a field does not straddle a
// boundary of its type, `short a:4, b:8, c:3, d:1; int e:9, f:15, ...` puts f at bit 32.
TEST(Sema, c_bit_fields_lay_out_as_c) {
  Checked c("struct Foo { unsigned int a:4, b:8, c:3, d:1, e:16; }\n"
            "struct Bar { short a:4, b:8, c:3, d:1; int e:9, f:15, g:1, h:2, i:5 }\n"
            "BEGIN { }");
  ASSERT_TRUE(c.ok) << c.errors();
  const auto &foo = *c.info.script_structs.at("Foo");
  EXPECT_EQ(foo.size, 4u);
  auto bit = [](const rbt::RecordLayout &r, const char *f) {
    const rbt::FieldLayout *field = r.find(f);
    return field ? field->offset * 8 + field->bit_offset : 9999u;
  };
  EXPECT_EQ(bit(foo, "b"), 4u);
  EXPECT_EQ(bit(foo, "d"), 15u);
  EXPECT_EQ(bit(foo, "e"), 16u);
  EXPECT_EQ(foo.find("e")->bit_size, 16u);
  const auto &bar = *c.info.script_structs.at("Bar");
  EXPECT_EQ(bar.size, 8u);
  EXPECT_EQ(bit(bar, "e"), 16u);
  EXPECT_EQ(bit(bar, "f"), 32u);  // 25 + 15 would cross bit 32
  EXPECT_EQ(bit(bar, "i"), 50u);
  EXPECT_TRUE(bar.find("a")->is_signed);
}

// Unions, nested and anonymous definitions, arrays, attributes and a last field without ';'
// (all as bpftrace's runtime tests write them), checked against gcc's sizeof/offsetof.
TEST(Sema, c_unions_nested_definitions_and_packed) {
  Checked c("union N { int i; char c[6]; long l; };\n"
            "struct Foo { int m; struct { int x; int y; } bar; union N n; int k }\n"
            "struct Out { char c; struct In { short s; long v; } in; int y[2][3]; };\n"
            "struct P { int x; char y; int z; } __attribute__((packed))\n"
            "struct A { int x; struct { char a; long b; }; char tail[0]; }\n"
            "BEGIN { }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.script_structs.at("N")->size, 8u);
  const auto &foo = *c.info.script_structs.at("Foo");
  EXPECT_EQ(foo.find("bar")->offset, 4u);
  EXPECT_EQ(foo.find("n")->offset, 16u);
  EXPECT_EQ(foo.find("k")->offset, 24u);
  EXPECT_EQ(foo.size, 32u);
  ASSERT_TRUE(c.info.script_structs.count(foo.find("bar")->type_name));
  EXPECT_EQ(c.info.script_structs.at(foo.find("bar")->type_name)->find("y")->offset, 4u);
  const auto &out = *c.info.script_structs.at("Out");
  EXPECT_EQ(c.info.script_structs.at("In")->size, 16u);
  EXPECT_EQ(out.find("in")->offset, 8u);
  EXPECT_EQ(out.find("y")->offset, 24u);
  EXPECT_EQ(out.size, 48u);
  EXPECT_EQ(c.info.script_structs.at("P")->size, 9u);
  const auto &a = *c.info.script_structs.at("A");
  EXPECT_EQ(a.find("b")->offset, 16u);  // an anonymous member's fields are the struct's own
  EXPECT_EQ(a.size, 24u);
}

// Enumerators are constants; their values count up from the last one given, which may be an
// expression of earlier ones.
TEST(Sema, c_enums_define_constants) {
  Checked c("enum Foo { A, B = 5, C, D = B << 2 | 1, E = -1 };\n"
            "enum { ONE = 1, TWO };\n"
            "BEGIN { @a = A; @c = C; @d = D; @e = E; @two = TWO; @x = (enum Foo)3; @y = C + 1; }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.script_enumerators.at("C"), std::make_pair(std::string("Foo"), int64_t{6}));
  EXPECT_EQ(c.info.script_enumerators.at("D").second, 21);
  EXPECT_EQ(c.info.script_enumerators.at("E").second, -1);
  EXPECT_EQ(c.info.script_enumerators.at("TWO").first, "enum#1");
  EXPECT_EQ(c.info.maps.at("@c").value.enum_name, "Foo");
  EXPECT_EQ(c.info.maps.at("@x").value.enum_name, "Foo");
  EXPECT_EQ(c.info.maps.at("@y").value.enum_name, "");  // arithmetic: a plain number
  EXPECT_EQ(first_error(Checked("enum Foo { A };\nBEGIN { @ = (enum Bar)1; }")),
            "unknown enum 'Bar' (only enums the script defines)");
  EXPECT_EQ(first_error(Checked("enum Foo { A = X };\nBEGIN { }")),
            "unknown name 'X' in an enumerator's value");
}

TEST(Sema, ruby_frames_are_strings_and_ints_from_a_literal_index) {
  Checked c("uprobe:libc:getpid { $s = rstack; @k[rlabel(0), rpath($s, -1)] = count(); "
            "@l = rline(-9); @b = strcontains($s, \"index\"); }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.maps.at("@k").key.name(), "(string[64], string[128])");
  EXPECT_EQ(c.info.maps.at("@l").value.name(), "uint64");
  EXPECT_EQ(first_error(Checked("uprobe:libc:getpid { @x = rlabel(1024); }")),
            "rlabel()'s frame index must be an integer literal from -1024 (root first) to 1023 "
            "(leaf first)");
  EXPECT_EQ(first_error(Checked("uprobe:libc:getpid { @x = rline(ustack, 0); }")),
            "rline()'s stack must be an rstack value, not ustack[127]");
}

TEST(Sema, timeline_builtins_take_stacks_and_integer_fields) {
  Checked ok("profile:hz:99 { sample(rstack, ustack(perf, 127), kstack); "
             "marker(\"x\", nsecs, nsecs, pid, tid, 1, 2, kstack, rstack); }");
  EXPECT_TRUE(ok.ok) << ok.errors();
  Checked not_stack("BEGIN { sample(1); }");
  EXPECT_NE(not_stack.errors().find("sample()'s arguments must be stacks"), std::string::npos);
  Checked twice("BEGIN { sample(kstack, kstack); }");
  EXPECT_NE(twice.errors().find("sample() takes one kstack"), std::string::npos);
  Checked name("BEGIN { $n = \"x\"; marker($n, 1, 2, 3, 4); }");
  EXPECT_NE(name.errors().find("marker()'s name must be a string literal"), std::string::npos);
  Checked order("BEGIN { marker(\"x\", 1, 2, 3, 4, kstack, 5); }");
  EXPECT_NE(order.errors().find("integer fields come before its stacks"), std::string::npos);
  Checked many("BEGIN { marker(\"x\", 1, 2, 3, 4, 1, 2, 3, 4, 5); }");
  EXPECT_NE(many.errors().find("at most four integer fields"), std::string::npos);
  Checked str("BEGIN { marker(\"x\", 1, 2, 3, \"t\"); }");
  EXPECT_NE(str.errors().find("marker()'s tid must be an integer"), std::string::npos);
  // A string right after tid is the thread's name (taken in BPF); anywhere else an error.
  Checked named("profile:hz:99 { marker(\"x\", 1, 2, 3, 4, comm, 5, kstack); "
                "marker(\"y\", 1, 2, 3, 4, \"worker\"); }");
  EXPECT_TRUE(named.ok) << named.errors();
  Checked late_name("BEGIN { marker(\"x\", 1, 2, 3, 4, 5, comm); }");
  EXPECT_NE(late_name.errors().find("marker()'s thread name is the argument right after tid"),
            std::string::npos)
      << late_name.errors();
  // nstack is the native stack in place of ustack: one of the two, and the mixed stack is
  // the recorder's own merge, so not an argument.
  Checked exact("profile:hz:99 { sample(rstack, nstack, kstack); "
                "marker(\"x\", nsecs, nsecs, pid, tid, 1, nstack, rstack); }");
  EXPECT_TRUE(exact.ok) << exact.errors();
  Checked both("profile:hz:99 { sample(nstack, ustack); }");
  EXPECT_NE(both.errors().find("sample() takes one native stack (nstack or ustack)"),
            std::string::npos);
  // rstack(native) is the Ruby, native and kernel stacks at once: alone, or an error.
  Checked mixed("profile:hz:99 { marker(\"x\", 1, 2, 3, 4, rstack(native)); "
                "sample(rstack(native)); }");
  EXPECT_TRUE(mixed.ok) << mixed.errors();
  Checked mixed_and_kernel("profile:hz:99 { sample(rstack(native), kstack); }");
  EXPECT_NE(mixed_and_kernel.errors().find("sample() takes one kstack"), std::string::npos)
      << mixed_and_kernel.errors();
  Checked kernel_and_mixed("profile:hz:99 { sample(kstack, rstack(native)); }");
  EXPECT_NE(kernel_and_mixed.errors().find(
                "sample() takes one Ruby, native and kernel stack: rstack(native) is all three"),
            std::string::npos)
      << kernel_and_mixed.errors();
}

// getopt(): the type is the default's; the command line's --name[=value] gives the value, and
// its mistakes are usage errors, not script errors.
TEST(Sema, GetoptTypesFollowTheDefault) {
  Checked c("BEGIN { @n = getopt(\"n\", 5); @s = getopt(\"s\", \"abc\"); "
            "@f = getopt(\"f\"); @t = getopt(\"t\", true); }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.named_params.at("n").type.name(), "int64");
  EXPECT_EQ(c.info.named_params.at("n").value, "5");
  EXPECT_TRUE(c.info.named_params.at("s").type.is_string());
  EXPECT_EQ(c.info.named_params.at("s").value, "abc");
  EXPECT_EQ(c.info.named_params.at("f").type.kind, rbt::TypeKind::Bool);
  EXPECT_EQ(c.info.named_params.at("f").value, "0");
  EXPECT_EQ(c.info.named_params.at("t").value, "1");
}

TEST(Sema, GetoptTakesTheCommandLinesValues) {
  rbt::sema::Environment env;
  env.named = {{"n", "-20"}, {"s", "a longer text"}, {"f", std::nullopt}, {"t", "off"},
               {"ms", "10ms"}, {"h", "0x1_0"}, {"min", "-9223372036854775808"}};
  Checked c("BEGIN { @n = getopt(\"n\", 5); @s = getopt(\"s\", \"abc\"); "
            "@f = getopt(\"f\"); @t = getopt(\"t\", true); @ms = getopt(\"ms\", 0); "
            "@h = getopt(\"h\", 0); @min = getopt(\"min\", 0); }",
            env);
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.named_params.at("n").value, "-20");
  EXPECT_EQ(c.info.named_params.at("ms").value, "10000000");  // as the literal 10ms
  EXPECT_EQ(c.info.named_params.at("h").value, "16");
  EXPECT_EQ(c.info.named_params.at("min").value, "-9223372036854775808");
  EXPECT_EQ(c.info.named_params.at("s").value, "a longer text");
  EXPECT_EQ(c.info.named_params.at("s").type.size, 14u);  // sized by the value given
  EXPECT_EQ(c.info.named_params.at("f").value, "1");
  EXPECT_EQ(c.info.named_params.at("t").value, "0");
}

TEST(Sema, GetoptMistakesOnTheCommandLineAreUsageErrors) {
  rbt::sema::Environment env;
  env.named = {{"n", "ten"}, {"zz", "1"}, {"s", std::nullopt}, {"big", "18446744073709551616"}};
  Checked c("BEGIN { @n = getopt(\"n\", 5, \"how many\"); @s = getopt(\"s\", \"x\"); "
            "@b = getopt(\"big\", 1); }",
            env);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.errors(), "");  // the script itself is fine
  ASSERT_EQ(c.info.usage_errors.size(), 4u);
  EXPECT_EQ(c.info.usage_errors[0],
            "named parameter --big: '18446744073709551616' does not fit in 64 bits");
  EXPECT_EQ(c.info.usage_errors[1], "named parameter --n: 'ten' is not a number");
  EXPECT_EQ(c.info.usage_errors[2], "named parameter --s: needs a value (--NAME=text)");
  EXPECT_EQ(c.info.usage_errors[3],
            "the script has no named parameter --zz (it reads --big, --n (how many), --s)");
}

TEST(Sema, GetoptNeedsLiteralsAndOneDefault) {
  EXPECT_NE(first_error(Checked("BEGIN { $x = \"n\"; @n = getopt($x, 1); }"))
                .find("getopt's first argument must be a parameter name in quotes"),
            std::string::npos);
  EXPECT_NE(first_error(Checked("BEGIN { @n = getopt(\"n\", pid); }"))
                .find("getopt's default must be a number, a string or a boolean literal"),
            std::string::npos);
  EXPECT_NE(first_error(Checked("BEGIN { @a = getopt(\"n\", 1); @b = getopt(\"n\", 2); }"))
                .find("getopt(\"n\") has the default 1 elsewhere"),
            std::string::npos);
}

// bpftrace's func is a kernel symbol (ksym_t) in kprobes: it shares a map with ksym() values
// (its xfsdist.bt does). In uprobes and USDT probes it stays the function's name.
TEST(Sema, func_in_kprobes_is_a_kernel_symbol_as_in_bpftrace) {
  Checked c("BEGIN { @name[0] = ksym(0); } kprobe:vfs_read, kretprobe:vfs_write "
            "{ @name[tid] = func; } uprobe:/bin/sh:main { @u = func; }");
  ASSERT_TRUE(c.ok) << c.errors();
  EXPECT_EQ(c.info.maps.at("@name").value.kind, rbt::TypeKind::Symbol);
  EXPECT_EQ(c.info.maps.at("@u").value.kind, rbt::TypeKind::String);
}

namespace {
rbt::sema::Environment with_args(std::vector<std::string> args) {
  rbt::sema::Environment env;
  env.positional = std::move(args);
  return env;
}
}  // namespace

TEST(Sema, positional_numbers_in_any_base_are_constants_as_in_bpftrace) {
  Checked c("BEGIN { @a = $1; @b = $2; @c = $3; @d = $4; @h = lhist(1, $5, $2, 1); "
            "@s = strncmp(\"ab\", \"ac\", $1); }",
            with_args({"1", "0x10", "0775", "0xffffffffffffffff", "-3"}));
  ASSERT_EQ(c.errors(), "");
  EXPECT_EQ(c.info.maps.at("@b").value.name(), "int64");
  EXPECT_EQ(c.info.maps.at("@d").value.name(), "uint64");  // only uint64 holds it
  Checked words("BEGIN { printf(\"%s\", $1); }", with_args({"10ms"}));
  EXPECT_EQ(words.errors(), "");  // a duration is no number on the command line: a string
}

TEST(Sema, str_of_a_positional_is_its_text_and_may_skip_a_prefix) {
  Checked c("BEGIN { @a = str($1); @b = str($2 + 2); @c = str($2, $1); }",
            with_args({"7", "hello"}));
  ASSERT_EQ(c.errors(), "");
  EXPECT_EQ(c.info.maps.at("@a").value.name(), "string[2]");
  EXPECT_EQ(c.info.maps.at("@b").value.name(), "string[4]");
  EXPECT_EQ(first_error(Checked("BEGIN { @b = str($1 + 9); }", with_args({"hello"}))),
            "only a constant from 0 to the argument's length (5) may be added to $1");
}

TEST(Sema, str_length_counts_the_terminator_and_may_be_computed) {
  Checked c("kprobe:vfs_read { $n = 3; @a = str(arg0, 5); @b = str(arg0, $n + 1); }");
  ASSERT_EQ(c.errors(), "");
  EXPECT_EQ(c.info.maps.at("@a").value.name(), "string[5]");
  EXPECT_EQ(first_error(Checked("kprobe:vfs_read { @a = str(arg0, \"x\"); }")),
            "str()'s length must be an integer, not string[2]");
}

TEST(Sema, tuples_index_with_constant_expressions) {
  Checked c("BEGIN { $t = (1, \"two\"); @a = $t[1 - 1]; @b = $t[1]; }");
  ASSERT_EQ(c.errors(), "");
  EXPECT_EQ(c.info.maps.at("@b").value.name(), "string[4]");
  EXPECT_EQ(first_error(Checked("BEGIN { $t = (1, 2); $i = 0; @a = $t[$i]; }")),
            "a tuple's index must be a constant");
}

TEST(Sema, arrays_and_buffers_compare_with_eq_and_ne) {
  EXPECT_EQ(Checked("BEGIN { $a = (int32[2])1; $b = (int32[2])2; @x = $a == $b; "
                    "@y = buf(\"hi\", 2) != buf(\"bye\", 3); }")
                .errors(),
            "");
  EXPECT_EQ(first_error(Checked("BEGIN { $a = (int32[2])1; $b = (int8[8])2; @x = $a == $b; }")),
            "type mismatch for '==': int32[2] == int8[8]");
}

TEST(Sema, address_of_string_tuple_and_array_variables) {
  Checked c("BEGIN { $s = \"hi\"; $t = (1, 2); $p = &$s; $q = &$t; @t = *$q; }");
  EXPECT_EQ(c.errors(), "");
}

TEST(Sema, words_of_bpftrace_accepted) {
  EXPECT_EQ(Checked("config = { missing_probes = \"warn\"; license = \"Dual BSD/GPL\" } "
                    "BEGIN { @u = usermode; } profile:hz:99 { @l = len(ustack()); @k = kstack(); } "
                    "END { @e = usermode; }")
                .errors(),
            "");
  EXPECT_NE(first_error(Checked("config = { license = \"Potato\" } BEGIN { }")).find(
                "Invalid value for license. Found: Potato"),
            std::string::npos);
  EXPECT_EQ(Checked("BEGIN { @ = { let $a = 100; avg($a) }; }").errors(), "");
}
