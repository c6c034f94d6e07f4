// Compiling in parts (codegen/partition.h): a script with enough code is lowered once per
// thread, each thread keeps its share of the programs, and libbpf's linker joins the objects.
// The joined object must hold exactly what the one-module object holds: every program once,
// every map once with the same definition, the same manifest. libbpf reads both without the
// kernel; the runtime suite runs split objects for real (language.test).

#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>

#include "compiled.h"

namespace {

using rbt::test::Compiled;

rbt::codegen::CodegenOptions on_threads(unsigned threads, bool keep_asm = false) {
  rbt::codegen::CodegenOptions options;
  options.threads = threads;
  options.keep_asm = keep_asm;
  return options;
}

// What libbpf sees in an object: program name → section, map name → definition.
struct Contents {
  std::map<std::string, std::string> programs;
  std::map<std::string, std::tuple<int, unsigned, unsigned, unsigned>> maps;
  size_t program_count = 0, map_count = 0;
  std::string error;
};

Contents contents(const std::vector<char> &elf) {
  Contents c;
  bpf_object *obj = bpf_object__open_mem(elf.data(), elf.size(), nullptr);
  if (!obj) {
    c.error = "libbpf cannot open the object";
    return c;
  }
  bpf_program *p;
  bpf_object__for_each_program(p, obj) {
    c.programs[bpf_program__name(p)] = bpf_program__section_name(p);
    c.program_count++;
  }
  bpf_map *m;
  bpf_object__for_each_map(m, obj) {
    std::string name = bpf_map__name(m);
    if (bpf_map__is_internal(m))  // "<object>.bss": its size grows with the parts' copies
      name = ".bss";
    c.maps[name] = {bpf_map__type(m), bpf_map__key_size(m),
                    name == ".bss" ? 0u : bpf_map__value_size(m), bpf_map__max_entries(m)};
    c.map_count++;
  }
  bpf_object__close(obj);
  return c;
}

// Probes on distinct attach points, each with aggregations, a string predicate and `printfs`
// printf calls: about 150 IR instructions apiece with one, so a dozen split into parts.
std::string many_probes(int n, int printfs = 1, bool begin_end = true) {
  std::string s = begin_end ? "BEGIN { @start = nsecs; printf(\"begin\\n\"); }\n" : "";
  const std::string start = begin_end ? "@start" : "0";
  for (int i = 0; i < n; i++) {
    std::string t = std::to_string(i);
    s += "interval:ms:" + std::to_string(100 + i) + " /pid > " + t + " && comm != \"x" + t +
         "\"/ { @c" + t + "[comm, pid] = count(); @h" + t + " = hist(nsecs - " + start +
         "); $x = (pid * " +
         t + " + tid) % 1000; if ($x > " + t + ") {";
    for (int j = 0; j < printfs; j++)
      s += " printf(\"" + t + " %d %s %d\\n\", $x + " + std::to_string(j) + ", comm, cpu);";
    s += " } @l" + t + " = lhist($x, 0, 1000, 100); }\n";
  }
  return begin_end ? s + "END { printf(\"end %d\\n\", nsecs - @start); }\n" : s;
}

}  // namespace

TEST(Partition, split_object_holds_every_program_and_map_once) {
  const std::string script = many_probes(12);
  Compiled one(script, on_threads(1)), split(script, on_threads(3));
  ASSERT_EQ(one.error, "");
  ASSERT_EQ(split.error, "");
  EXPECT_EQ(one.object.parts, 1u);
  EXPECT_EQ(split.object.parts, 3u);

  Contents a = contents(one.object.elf), b = contents(split.object.elf);
  ASSERT_EQ(a.error, "");
  ASSERT_EQ(b.error, "");
  EXPECT_EQ(a.program_count, 14u);
  EXPECT_EQ(b.program_count, a.program_count);
  EXPECT_EQ(b.programs, a.programs);
  EXPECT_EQ(b.map_count, a.map_count);  // maps every part defines are linked into one
  EXPECT_EQ(b.maps, a.maps);

  // The runtime works from the manifest: the same probes, maps and events either way.
  const auto &ma = one.object.manifest, &mb = split.object.manifest;
  ASSERT_EQ(mb.probes.size(), ma.probes.size());
  for (size_t i = 0; i < ma.probes.size(); i++)
    EXPECT_EQ(mb.probes[i].program, ma.probes[i].program);
  ASSERT_EQ(mb.maps.size(), ma.maps.size());
  for (size_t i = 0; i < ma.maps.size(); i++)
    EXPECT_EQ(mb.maps[i].bpf_name, ma.maps[i].bpf_name);
  EXPECT_EQ(mb.actions.size(), ma.actions.size());
  EXPECT_EQ(mb.lost_events_name, ma.lost_events_name);
}

TEST(Partition, split_compile_is_deterministic) {
  const std::string script = many_probes(8);
  Compiled a(script, on_threads(2)), b(script, on_threads(2));
  ASSERT_EQ(a.error, "");
  EXPECT_EQ(a.object.parts, 2u);
  EXPECT_EQ(a.object.elf, b.object.elf);
}

TEST(Partition, small_scripts_stay_one_module) {
  Compiled c("BEGIN { @x = count(); } END { printf(\"%d\\n\", 1); }", on_threads(8));
  ASSERT_EQ(c.error, "");
  EXPECT_EQ(c.object.parts, 1u);
}

TEST(Partition, no_more_parts_than_programs_or_the_cap) {
  Compiled two(many_probes(2, 20, false), on_threads(64));  // two programs with plenty of code each
  ASSERT_EQ(two.error, "");
  EXPECT_EQ(two.object.parts, 2u);
  Compiled many(many_probes(40), on_threads(64));
  ASSERT_EQ(many.error, "");
  EXPECT_EQ(many.object.parts, 8u);  // kMaxPartitions
  EXPECT_EQ(contents(many.object.elf).program_count, 42u);
}

TEST(Partition, assembly_dumps_compile_one_module) {
  Compiled c(many_probes(12), on_threads(4, /*keep_asm=*/true));
  ASSERT_EQ(c.error, "");
  EXPECT_EQ(c.object.parts, 1u);
  EXPECT_NE(c.object.asm_text.find("probe_13"), std::string::npos);
}

TEST(Partition, shared_library_code_and_long_strings_link) {
  // usdt's spec maps come from stdlib bitcode into every part; the scratch map for long
  // strings is sized by all probes; both must link to one definition.
  std::string script = "config = { max_strlen = 1024 }\n";
  for (int i = 0; i < 6; i++)
    script += "usdt:/bin/true:p:e" + std::to_string(i) + " { $s = str(arg0); @s" +
              std::to_string(i) + "[$s] = count(); printf(\"%s %d %d\\n\", $s, arg1, arg2); }\n";
  Compiled one(script, on_threads(1)), split(script, on_threads(3));
  ASSERT_EQ(one.error, "");
  ASSERT_EQ(split.error, "");
  EXPECT_GT(split.object.parts, 1u);
  Contents a = contents(one.object.elf), b = contents(split.object.elf);
  ASSERT_EQ(b.error, "");
  EXPECT_EQ(b.programs, a.programs);
  EXPECT_EQ(b.maps, a.maps);
}
