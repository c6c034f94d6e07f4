// expand_probe on this machine: tracefs for tracepoints (needs root: skipped without), ELF
// symbols and USDT notes of usdt_demo and Debian's libruby for uprobes and USDT.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "probe_expansion.h"
#include "symbols/elf_file.h"
#include "tracepoint_catalog.h"

using rbt::ProbeDesc;
using rbt::ProbeKind;
using namespace rbt::runtime;

namespace {

ProbeDesc probe(ProbeKind kind, std::string target, std::string func, uint64_t offset = 0) {
  ProbeDesc p;
  p.kind = kind;
  p.target = std::move(target);
  p.func = std::move(func);
  p.offset = offset;
  p.name = std::string(rbt::probe_kind_name(kind)) + ":" + p.target + ":" + p.func;
  p.program = "probe_0";
  return p;
}

std::vector<std::string> names(const std::vector<ProbeDesc> &ps) {
  std::vector<std::string> out;
  for (auto &p : ps)
    out.push_back(p.name);
  return out;
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

#define REQUIRE_TRACEFS()                                                                   \
  do {                                                                                      \
    if (!tracepoint_events())                                                               \
      GTEST_SKIP() << "tracefs is not readable (run as root)";                              \
  } while (0)

}  // namespace

TEST(ExpandProbe, tracepoint_wildcards_come_from_tracefs) {
  REQUIRE_TRACEFS();
  auto r = expand_probe(probe(ProbeKind::Tracepoint, "syscalls", "sys_enter_open*"), -1);
  ASSERT_TRUE(r) << r.error().why;
  auto n = names(*r);
  EXPECT_TRUE(contains(n, "tracepoint:syscalls:sys_enter_openat")) << n.size();
  EXPECT_FALSE(contains(n, "tracepoint:syscalls:sys_exit_openat"));
  for (auto &p : *r) {
    EXPECT_EQ(p.target, "syscalls");
    EXPECT_EQ(p.func.rfind("sys_enter_open", 0), 0u);
    EXPECT_EQ(p.program, "probe_0");  // everything else is kept
  }
  auto cats = expand_probe(probe(ProbeKind::Tracepoint, "sch*", "sched_switch"), -1);
  ASSERT_TRUE(cats);
  EXPECT_EQ(names(*cats), std::vector<std::string>{"tracepoint:sched:sched_switch"});
}

TEST(ExpandProbe, a_tracepoint_pattern_matching_nothing_names_the_probe) {
  REQUIRE_TRACEFS();
  auto r = expand_probe(probe(ProbeKind::Tracepoint, "syscalls", "sys_enter_nope*"), -1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().what, "attaching tracepoint:syscalls:sys_enter_nope*");
  EXPECT_EQ(r.error().why, "no tracepoint matches");
  EXPECT_EQ(r.error().hint, "list what exists with: rbt -l 'tracepoint:syscalls:*'");
}

TEST(ExpandProbe, raw_tracepoint_wildcards_skip_per_syscall_events) {
  REQUIRE_TRACEFS();
  ProbeDesc p;
  p.kind = ProbeKind::RawTracepoint;
  p.func = "sys_e*";
  p.name = "rawtracepoint:sys_e*";
  auto r = expand_probe(p, -1);
  ASSERT_TRUE(r);
  auto n = names(*r);
  EXPECT_TRUE(contains(n, "rawtracepoint:sys_enter"));
  EXPECT_TRUE(contains(n, "rawtracepoint:sys_exit"));
  EXPECT_FALSE(contains(n, "rawtracepoint:sys_enter_openat"));
}

TEST(ExpandProbe, a_plain_probe_passes_through_with_its_library_resolved) {
  auto r = expand_probe(probe(ProbeKind::Uprobe, "libc", "malloc"), -1);
  ASSERT_TRUE(r) << r.error().why;
  ASSERT_EQ(r->size(), 1u);
  const ProbeDesc &p = r->front();
  EXPECT_NE(p.target.find("/libc.so.6"), std::string::npos);
  EXPECT_EQ(p.func, "malloc");
  EXPECT_EQ(p.name, "uprobe:" + p.target + ":malloc");

  auto off = expand_probe(probe(ProbeKind::Uretprobe, RBT_USDT_DEMO, "rbt_work", 4), -1);
  ASSERT_TRUE(off);
  EXPECT_EQ(off->front().name, std::string("uretprobe:") + RBT_USDT_DEMO + ":rbt_work+4");
  EXPECT_EQ(off->front().offset, 4u);

  // Kinds without targets to resolve are left alone.
  ProbeDesc sw;
  sw.kind = ProbeKind::Software;
  sw.target = "cpu-clock";
  sw.name = "software:cpu-clock:1000";
  auto same = expand_probe(sw, -1);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->front().name, "software:cpu-clock:1000");
}

TEST(ExpandProbe, uprobe_symbol_wildcards_in_a_library_named_like_the_loader) {
  auto r = expand_probe(probe(ProbeKind::Uprobe, "libruby", "rb_str_new*"), -1);
  ASSERT_TRUE(r) << r.error().why;
  auto n = names(*r);
  ASSERT_GE(n.size(), 3u);
  std::string lib = r->front().target;
  EXPECT_TRUE(lib == "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1" ||
              lib == "/lib/x86_64-linux-gnu/libruby-3.1.so.3.1")
      << lib;
  EXPECT_TRUE(contains(n, "uprobe:" + lib + ":rb_str_new"));
  EXPECT_TRUE(contains(n, "uprobe:" + lib + ":rb_str_new_cstr"));
  for (auto &p : *r)
    EXPECT_EQ(p.func.rfind("rb_str_new", 0), 0u) << p.func;
}

TEST(ExpandProbe, uprobe_errors_name_the_probe) {
  auto missing = expand_probe(probe(ProbeKind::Uprobe, "libno_such_rbt", "f"), -1);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().what, "attaching uprobe:libno_such_rbt:f");
  EXPECT_EQ(missing.error().why, "no library or program named 'libno_such_rbt'");
  EXPECT_FALSE(missing.error().hint.empty());

  auto none = expand_probe(probe(ProbeKind::Uprobe, RBT_USDT_DEMO, "zz_nothing*"), -1);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().why, "no function matches");

  auto wild_offset = expand_probe(probe(ProbeKind::Uprobe, RBT_USDT_DEMO, "rbt_*", 4), -1);
  EXPECT_FALSE(wild_offset);

  auto wild_binary = expand_probe(probe(ProbeKind::Uprobe, "*", "malloc"), -1);
  ASSERT_FALSE(wild_binary);
  EXPECT_EQ(wild_binary.error().hint, "add -p PID, or give a path (uprobe:/usr/lib/*/libruby*.so*:...)");
}

TEST(ExpandProbe, uprobe_addresses_move_to_offset_and_must_be_code) {
  auto elf = ElfFile::open(RBT_USDT_DEMO);
  ASSERT_TRUE(elf);
  const ElfSymbol *work = elf->find("rbt_work");
  ASSERT_NE(work, nullptr);
  char addr[32];
  snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(work->value));

  auto r = expand_probe(probe(ProbeKind::Uprobe, RBT_USDT_DEMO, addr), -1);
  ASSERT_TRUE(r) << r.error().why;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front().func, "");
  EXPECT_EQ(r->front().offset, work->value);
  EXPECT_EQ(r->front().name, std::string("uprobe:") + RBT_USDT_DEMO + ":" + addr);

  auto bad = expand_probe(probe(ProbeKind::Uprobe, RBT_USDT_DEMO, "0x10"), -1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().why,
            std::string("address 0x10 is not in an executable segment of ") + RBT_USDT_DEMO);

  EXPECT_EQ(parse_uprobe_address("0x4a0"), 0x4a0u);
  EXPECT_EQ(parse_uprobe_address("1184"), 1184u);
  EXPECT_EQ(parse_uprobe_address("rb_str_new"), std::nullopt);
  EXPECT_EQ(parse_uprobe_address("0x"), std::nullopt);
  EXPECT_EQ(parse_uprobe_address("12ab"), std::nullopt);
}

TEST(ExpandProbe, usdt_wildcards_in_libruby) {
  auto r = expand_probe(probe(ProbeKind::Usdt, "libruby", "ruby:cmethod__*"), -1);
  ASSERT_TRUE(r) << r.error().why;
  ASSERT_EQ(r->size(), 2u);
  std::string lib = r->front().target;
  EXPECT_EQ((*r)[0].func, "ruby:cmethod__entry");
  EXPECT_EQ((*r)[1].func, "ruby:cmethod__return");
  EXPECT_EQ((*r)[0].name, "usdt:" + lib + ":ruby:cmethod__entry");

  auto all = expand_probe(probe(ProbeKind::Usdt, "libruby", "*"), -1);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 22u);
}

TEST(ExpandProbe, usdt_provider_is_optional_but_always_filled_in) {
  auto r = expand_probe(probe(ProbeKind::Usdt, RBT_USDT_DEMO, "loop"), -1);
  ASSERT_TRUE(r) << r.error().why;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front().func, "rbt_test:loop");
  EXPECT_EQ(r->front().name, std::string("usdt:") + RBT_USDT_DEMO + ":rbt_test:loop");

  auto full = expand_probe(probe(ProbeKind::Usdt, RBT_USDT_DEMO, "rbt_test:guarded"), -1);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->front().func, "rbt_test:guarded");

  auto none = expand_probe(probe(ProbeKind::Usdt, RBT_USDT_DEMO, "other:loop"), -1);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().why, "no USDT probe matches");
}

TEST(ExpandProbe, with_a_pid_wildcard_binaries_are_the_mapped_files) {
  auto r = expand_probe(probe(ProbeKind::Uprobe, "*libc.so*", "malloc"), getpid());
  ASSERT_TRUE(r) << r.error().why;
  ASSERT_EQ(r->size(), 1u);
  // The process's own name for the file, inside its root: no pid in the target or the name.
  const ProbeDesc &p = r->front();
  EXPECT_TRUE(p.in_process_root);
  EXPECT_EQ(p.target.find("/proc/"), std::string::npos) << p.target;
  EXPECT_NE(p.target.find("libc.so"), std::string::npos) << p.target;
  EXPECT_EQ(p.name, "uprobe:" + p.target + ":malloc");
  EXPECT_EQ(probe_file(p, getpid()), "/proc/" + std::to_string(getpid()) + "/root" + p.target);
  EXPECT_EQ(p.func, "malloc");
}

TEST(ExpandProbe, without_a_pid_targets_are_host_paths) {
  auto r = expand_probe(probe(ProbeKind::Uprobe, "libc", "malloc"), -1);
  ASSERT_TRUE(r) << r.error().why;
  EXPECT_FALSE(r->front().in_process_root);
  EXPECT_EQ(probe_file(r->front(), getpid()), r->front().target);
}
