#include <gtest/gtest.h>

#include "sema/probe_spec.h"

using rbt::ProbeKind;
using rbt::sema::parse_probe_spec;

TEST(ProbeSpec, aliases_expand_to_full_names) {
  auto r = parse_probe_spec("t:syscalls:sys_enter_openat");
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.probe.kind, ProbeKind::Tracepoint);
  EXPECT_EQ(r.probe.name, "tracepoint:syscalls:sys_enter_openat");
  EXPECT_EQ(r.probe.target, "syscalls");
  EXPECT_EQ(r.probe.func, "sys_enter_openat");
}

TEST(ProbeSpec, rates_and_units) {
  EXPECT_EQ(parse_probe_spec("profile:hz:99").probe.freq, 99u);
  EXPECT_EQ(parse_probe_spec("interval:s:2").probe.period, 2000000000u);
  EXPECT_EQ(parse_probe_spec("i:ms:100").probe.period, 100000000u);
  EXPECT_EQ(parse_probe_spec("p:us:500").probe.period, 500000u);
  EXPECT_EQ(parse_probe_spec("profile:hz:0").error, "invalid rate '0' (expected a positive integer)");
  EXPECT_EQ(parse_probe_spec("profile:days:1").error, "invalid unit 'days' (expected hz, s, ms or us)");
}

TEST(ProbeSpec, software_and_hardware_events) {
  auto sw = parse_probe_spec("software:faults:10");
  ASSERT_EQ(sw.error, "");
  EXPECT_EQ(sw.probe.target, "page-faults");
  EXPECT_EQ(sw.probe.period, 10u);
  EXPECT_EQ(parse_probe_spec("s:cpu-clock").probe.period, 1000000u);
  EXPECT_EQ(parse_probe_spec("hardware:cycles").probe.target, "cpu-cycles");
  EXPECT_EQ(parse_probe_spec("software:nope").error, "unknown software event 'nope'");
}

TEST(ProbeSpec, uprobe_offsets_and_usdt_provider) {
  auto u = parse_probe_spec("uprobe:/usr/bin/ruby:rb_str_new+0x10");
  ASSERT_EQ(u.error, "");
  EXPECT_EQ(u.probe.func, "rb_str_new");
  EXPECT_EQ(u.probe.offset, 16u);
  auto d = parse_probe_spec("usdt:libruby:ruby:cmethod__entry");
  EXPECT_EQ(d.probe.target, "libruby");
  EXPECT_EQ(d.probe.func, "ruby:cmethod__entry");
}

TEST(ProbeSpec, malformed_specs_say_what_is_expected) {
  EXPECT_EQ(parse_probe_spec("foo:bar").error, "unknown probe type 'foo'");
  EXPECT_EQ(parse_probe_spec("tracepoint:syscalls").error,
            "invalid tracepoint probe 'tracepoint:syscalls' (expected tracepoint:category:event)");
}

// bpftrace lets a uprobe's symbol be quoted, so that a C++ name's `::` or a `+` is part of it.
TEST(ProbeSpec, quoted_uprobe_symbols_lose_their_quotes) {
  auto q = parse_probe_spec("uprobe:/bin/bash:\"echo_builtin\"+8");
  ASSERT_EQ(q.error, "");
  EXPECT_EQ(q.probe.target, "/bin/bash");
  EXPECT_EQ(q.probe.func, "echo_builtin");
  EXPECT_EQ(q.probe.offset, 8u);
  auto cpp = parse_probe_spec("uprobe:/opt/app:\"ns::Klass::run\"");
  ASSERT_EQ(cpp.error, "");
  EXPECT_EQ(cpp.probe.func, "ns::Klass::run");
  EXPECT_EQ(parse_probe_spec("uprobe:/opt/app:\"a+b\"").probe.func, "a+b");
}

// A USDT probe whose name has quotes in it (libbpf's USDT() macro stringifies the name) is
// written quoted with \" inside, as bpftrace takes it.
TEST(ProbeSpec, quoted_usdt_names_keep_escaped_quotes) {
  auto q = parse_probe_spec(R"(usdt:./prog:test:"\"probe1\"")");
  ASSERT_EQ(q.error, "");
  EXPECT_EQ(q.probe.target, "./prog");
  EXPECT_EQ(q.probe.func, "test:\"probe1\"");
  EXPECT_EQ(parse_probe_spec(R"(usdt:"./a:b":p:"x")").probe.func, "p:x");
  EXPECT_EQ(parse_probe_spec(R"(usdt:"./a:b":p:"x")").probe.target, "./a:b");
}

TEST(ProbeSpec, iter_probes_name_an_iterator) {
  auto q = parse_probe_spec("it:task_file");
  ASSERT_EQ(q.error, "");
  EXPECT_EQ(q.probe.kind, ProbeKind::Iter);
  EXPECT_EQ(q.probe.target, "task_file");
  EXPECT_EQ(q.probe.name, "iter:task_file");
  EXPECT_EQ(parse_probe_spec("iter:task:pinned").probe.func, "pinned");
  EXPECT_NE(parse_probe_spec("iter:tasks").error, "");
  EXPECT_NE(parse_probe_spec("iter").error, "");
}
