// Codegen: every program compiles to a module that verifies and an ELF object libbpf accepts.
// No golden IR: behaviour is checked end to end by the runtime suite.

#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

#include "compiled.h"

namespace {

using rbt::test::Compiled;

// libbpf parses the ELF (sections, BTF, map definitions) without touching the kernel.
int programs_in(const std::vector<char> &elf, int &maps) {
  bpf_object *obj = bpf_object__open_mem(elf.data(), elf.size(), nullptr);
  if (!obj)
    return -1;
  int n = 0;
  bpf_program *p;
  bpf_object__for_each_program(p, obj) n++;
  maps = 0;
  bpf_map *m;
  bpf_object__for_each_map(m, obj) maps++;
  bpf_object__close(obj);
  return n;
}

}  // namespace

TEST(Codegen, one_program_per_attach_point_and_btf_maps) {
  Compiled c("BEGIN { @x = 1; } tracepoint:syscalls:sys_enter_openat, profile:hz:99 "
             "{ @[comm] = count(); @h = hist(2); }");
  ASSERT_EQ(c.error, "");
  int maps = 0;
  EXPECT_EQ(programs_in(c.object.elf, maps), 3);
  // @, @h, @x, the event ring buffer, and the .bss of the counters of updates a full map
  // refused (@ and @x are hashes; @h, a keyless histogram, is an array that cannot be full).
  EXPECT_EQ(maps, 5);
  ASSERT_EQ(c.object.manifest.probes.size(), 3u);
  EXPECT_EQ(c.object.manifest.probes[1].name, "tracepoint:syscalls:sys_enter_openat");
  ASSERT_EQ(c.object.manifest.maps.size(), 3u);
  for (const auto &map : c.object.manifest.maps) {
    EXPECT_EQ(map.full_counter.empty(), map.is_array()) << map.name;
    if (!map.is_array()) {
      EXPECT_EQ(map.max_keys, 4096u) << map.name;
    }
  }
}

TEST(Codegen, every_language_feature_of_the_first_slice_compiles) {
  Compiled c(R"(
    BEGIN { $i = 0; while ($i < 5) { $i++; if ($i == 3) { continue; } } }
    interval:ms:10 /pid > 0 && comm != "x"/ {
      @a = avg(nsecs); @s = stats(cpu); @mn = min(-1); @mx = max(tid);
      @l = lhist(rand % 100, 0, 100, 10); @t[pid, comm] = (1, "two");
      $s = comm == "rbt" ? "yes" : "no";
      printf("%s %d %x %c\n", $s, -1, uid, 65);
      if (@t[1, "a"].0 == 0) { exit(2); } else { return; }
    })");
  ASSERT_EQ(c.error, "");
  int maps = 0;
  EXPECT_EQ(programs_in(c.object.elf, maps), 2);
  EXPECT_EQ(c.object.manifest.actions.size(), 1u);
}

TEST(Codegen, output_is_deterministic) {
  Compiled a("BEGIN { @[comm] = count(); printf(\"%d\\n\", pid); }");
  Compiled b("BEGIN { @[comm] = count(); printf(\"%d\\n\", pid); }");
  EXPECT_EQ(a.object.elf, b.object.elf);
}

TEST(Codegen, long_strings_use_one_scratch_map_and_short_ones_none) {
  Compiled small("BEGIN { printf(\"%s\\n\", str(0)); @[comm] = count(); }");
  ASSERT_EQ(small.error, "");
  int maps = 0;
  programs_in(small.object.elf, maps);
  EXPECT_EQ(maps, 3);  // @, the ring buffer and its lost-events counter: nothing moved off the stack
  Compiled big("config = { max_strlen = 1024 } BEGIN { $s = str(0); @[$s] = $s; printf(\"%s\", $s); } "
               "interval:s:1 { @[str(1)] = str(2); join(0); }");
  ASSERT_EQ(big.error, "");
  EXPECT_EQ(programs_in(big.object.elf, maps), 2);
  EXPECT_EQ(maps, 4);  // @, the ring buffer, its lost-events counter and the scratch pages
}

TEST(Codegen, byte_valued_builtins_compile) {
  Compiled c(R"(BEGIN { printf("%r %rx %rh %s %s\n", buf(0, 8), buf(0, $#), buf("ab", 2),
                        strftime("%H:%M:%S.%f", nsecs), ntop(pton("::1")));
                        @[ntop(2, 0x0100007f)] = (strftime("%s", nsecs), buf(0, 4), pton("1.2.3.4")); })");
  ASSERT_EQ(c.error, "");
  EXPECT_EQ(c.object.manifest.strftime_formats,
            (std::vector<std::string>{"%H:%M:%S.%f", "%s"}));
}

// nstack and rstack(native) link stdlib/bpf/native_stack.bpf.c (and ruby_stack for the mixed
// stack): the unwinder's maps are in the object, the mixed value is 32 bytes and takes a kernel
// stack map.
TEST(Codegen, native_and_mixed_stacks_link_the_unwinder) {
  Compiled c("profile:hz:99 { @m[rstack(native)] = count(); @n[nstack(5)] = count(); "
             "@t[pid, rstack(native, 3)] = count(); print(nstack); }");
  ASSERT_EQ(c.error, "");
  std::string elf(c.object.elf.begin(), c.object.elf.end());
  for (const char *map : {"rbt_unwind_rows", "rbt_unwind_procs", "rbt_native_stacks",
                          "rbt_ruby_stacks"})
    EXPECT_NE(elf.find(map), std::string::npos) << map;
  bool kernel_stacks = false;
  for (auto &s : c.object.manifest.stack_maps)
    kernel_stacks |= !s.user && s.depth == 127;
  EXPECT_TRUE(kernel_stacks);
  bool found = false;
  for (auto &m : c.object.manifest.maps) {
    if (m.name == "@m") {
      found = true;
      EXPECT_EQ(m.key.size, 32u);
    }
  }
  EXPECT_TRUE(found);
}

// rstack's walker is a BPF object built with rbt (codegen/link_walker.h): the script's IR only
// declares its entry points, LLVM compiles none of it, and the linked object defines each
// once, with the discovery programs; the maps the walker and the frame accessors (rlabel, from
// bitcode) both define are one map.
TEST(Codegen, rstack_links_the_prebuilt_walker_object) {
  rbt::codegen::CodegenOptions options;
  for (unsigned threads : {1u, 2u}) {
    options.keep_ir = threads == 1;
    options.threads = threads;
    Compiled c("profile:hz:99 { @[rstack] = count(); @l[rlabel(0)] = count(); } "
               "uprobe:/bin/sh:main { print(rstack(3)); @p[rpath(-1)] = count(); }",
               options);
    ASSERT_EQ(c.error, "");
    if (threads == 1) {
      EXPECT_NE(c.object.ir_opt.find("i64 @rbt_rstack(i64)\n"), std::string::npos);  // declare
      EXPECT_EQ(c.object.ir_opt.find("define i64 @rbt_rstack("), std::string::npos);
      EXPECT_EQ(c.object.ir_opt.find("define i64 @rbt_rstack_exact("), std::string::npos);
    }
    bpf_object *obj = bpf_object__open_mem(c.object.elf.data(), c.object.elf.size(), nullptr);
    ASSERT_NE(obj, nullptr);
    std::map<std::string, int> maps;
    bpf_map *m;
    bpf_object__for_each_map(m, obj) maps[bpf_map__name(m)]++;
    for (const char *name : {"rbt_ruby_stacks", "rbt_ruby_stacks_more", "rbt_ruby_frames", "rbt_ruby_scratch",
                             "rbt_ruby_procs"})
      EXPECT_EQ(maps[name], 1) << name;
    std::set<std::string> programs;
    bpf_program *p;
    bpf_object__for_each_program(p, obj) programs.insert(bpf_program__name(p));
    for (const char *name : {"rbt_ruby_discover", "rbt_ruby_fork", "rbt_ruby_exec"})
      EXPECT_TRUE(programs.count(name)) << name;
    bpf_object__close(obj);
  }
}

namespace {

// Instructions in the blocks named scratch_ready* (where scratch pages are looked up) of the
// module as lowered (-d ir).
size_t scratch_setup_instructions(const std::string &ir) {
  size_t n = 0;
  bool in_setup = false;
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '}') {
      in_setup = false;
    } else if (line[0] != ' ' && line.find(':') != std::string::npos) {  // a block's label
      in_setup = line.rfind("scratch_ready", 0) == 0;
    } else if (in_setup && line.rfind("  ", 0) == 0) {
      n++;
    }
  }
  return n;
}

std::string statements(int n) {
  std::string s = "tracepoint:syscalls:sys_enter_getppid { $x = 0; ";
  for (int i = 0; i < n; i++)
    s += "@a = 1; $x = $x + 1; printf(\"%d\\n\", $x); ";
  return s + "}";
}

}  // namespace

// Issue 15: compile time linear in the script's size. Slots past the stack budget are in a
// scratch page; their addresses used to be computed all together where the page is looked up,
// and LLVM's MachineSinking then moved each down to its use one block at a time, quadratic in
// the probe's length (10,000 statements: 30 s). Each is now computed where it is used, so the
// setup is the same whatever the length.
TEST(Codegen, scratch_setup_does_not_grow_with_the_probe) {
  rbt::codegen::CodegenOptions options;
  options.keep_ir = true;
  Compiled small(statements(100), options), large(statements(400), options);
  ASSERT_EQ(small.error, "");
  ASSERT_EQ(large.error, "");
  size_t setup = scratch_setup_instructions(small.object.ir);
  EXPECT_GT(setup, 0u);  // the probe does use a scratch page
  EXPECT_EQ(scratch_setup_instructions(large.object.ir), setup);
}

namespace {

// The most compares (`icmp`) in the optimized module that take one value as an operand.
size_t most_compares_of_one_value(const std::string &ir) {
  std::map<std::string, size_t> uses;
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.find(" = icmp ");
    if (at == std::string::npos)
      continue;
    std::istringstream words(line.substr(at + 8));  // "ugt i64 %1, 5, !dbg !56"
    std::string pred, type, a, b;
    words >> pred >> type >> a >> b;
    for (std::string op : {a, b}) {
      if (!op.empty() && op.back() == ',')
        op.pop_back();
      if (!op.empty() && op[0] == '%')
        uses[op]++;
    }
  }
  size_t most = 0;
  for (auto &[name, n] : uses)
    most = std::max(most, n);
  return most;
}

}  // namespace

// Issue 15: compile time linear in the script's size. LLVM's CodeGenPrepare walks every user of
// an unsigned compare's operand (looking for a subtraction to fuse), so 8,000 `if ($x > K)` in
// one probe spent 1.4 s there (0.06 s at 2,000). Each compare of a widely used value now has a
// copy of its own (no instruction in the object).
TEST(Codegen, no_value_is_the_operand_of_many_compares) {
  std::string script = "tracepoint:syscalls:sys_enter_getppid { $x = pid; ";
  for (int i = 0; i < 200; i++)
    script += "if ($x > " + std::to_string(i) + ") { @a = " + std::to_string(i) + "; } ";
  rbt::codegen::CodegenOptions options;
  options.keep_ir = true;
  Compiled ifs(script + "}", options);
  ASSERT_EQ(ifs.error, "");
  // Without the copies: 200 (early-cse makes every load of $x one value).
  EXPECT_LE(most_compares_of_one_value(ifs.object.ir_opt), 1u);
}
