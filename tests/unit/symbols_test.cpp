// ElfFile and USDT notes against binaries whose contents are known: the in-tree usdt_demo
// (rbt_work, probes rbt_test:loop without and rbt_test:guarded with a semaphore), libc and
// Debian's libruby (22 USDT probes).

#include <gtest/gtest.h>

#include <algorithm>

#include "symbols/elf_file.h"
#include "symbols/library_resolver.h"
#include "symbols/usdt_notes.h"

using namespace rbt::runtime;

namespace {

ElfFile open_or_die(const std::string &path) {
  auto elf = ElfFile::open(path);
  if (!elf)
    ADD_FAILURE() << elf.error().what << ": " << elf.error().why;
  return std::move(elf.value());
}

bool has_name(const std::vector<const ElfSymbol *> &syms, const std::string &name) {
  return std::any_of(syms.begin(), syms.end(), [&](auto *s) { return s->name == name; });
}

}  // namespace

TEST(ElfFile, finds_a_function_with_its_size_in_an_executable_segment) {
  ElfFile elf = open_or_die(RBT_USDT_DEMO);
  const ElfSymbol *sym = elf.find("rbt_work");
  ASSERT_NE(sym, nullptr);
  EXPECT_EQ(sym->type, SymbolType::Func);
  EXPECT_EQ(sym->binding, SymbolBinding::Global);
  EXPECT_GT(sym->value, 0u);
  EXPECT_GT(sym->size, 0u);
  const LoadSegment *seg = elf.segment_of(sym->value);
  ASSERT_NE(seg, nullptr);
  EXPECT_TRUE(seg->executable);
  EXPECT_EQ(elf.find("no_such_symbol_anywhere"), nullptr);
}

TEST(ElfFile, finds_objects_too) {
  ElfFile elf = open_or_die(RBT_USDT_DEMO);
  const ElfSymbol *sem = elf.find("rbt_test_guarded_semaphore");
  ASSERT_NE(sem, nullptr);
  EXPECT_EQ(sem->type, SymbolType::Object);
  EXPECT_EQ(sem->size, 2u);
}

TEST(ElfFile, match_is_a_glob_over_function_names_only) {
  ElfFile elf = open_or_die(RBT_USDT_DEMO);
  auto all = elf.match("*");
  EXPECT_TRUE(has_name(all, "rbt_work"));
  EXPECT_TRUE(has_name(all, "main"));
  EXPECT_FALSE(has_name(all, "rbt_test_guarded_semaphore"));  // an object
  auto some = elf.match("rbt_*");
  ASSERT_EQ(some.size(), 1u);
  EXPECT_EQ(some[0]->name, "rbt_work");
  EXPECT_TRUE(elf.match("zz*").empty());
  // Sorted by name, one entry per name.
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(),
                             [](auto *a, auto *b) { return a->name < b->name; }));
}

TEST(ElfFile, symbolizes_addresses_inside_a_function) {
  ElfFile elf = open_or_die(RBT_USDT_DEMO);
  const ElfSymbol *sym = elf.find("rbt_work");
  ASSERT_NE(sym, nullptr);
  EXPECT_EQ(elf.symbolize(sym->value), "rbt_work+0");
  EXPECT_EQ(elf.symbolize(sym->value + sym->size - 1),
            "rbt_work+" + std::to_string(sym->size - 1));
  EXPECT_EQ(elf.symbolize(0x10), std::nullopt);
}

TEST(ElfFile, converts_between_virtual_addresses_and_file_offsets) {
  ElfFile elf = open_or_die(RBT_USDT_DEMO);
  const ElfSymbol *sym = elf.find("rbt_work");
  ASSERT_NE(sym, nullptr);
  auto off = elf.vaddr_to_offset(sym->value);
  ASSERT_TRUE(off.has_value());
  const LoadSegment *seg = elf.segment_of(sym->value);
  EXPECT_EQ(*off, sym->value - seg->vaddr + seg->offset);
  EXPECT_EQ(elf.offset_to_vaddr(*off), sym->value);
  EXPECT_EQ(elf.vaddr_to_offset(0xffffffffff), std::nullopt);
}

TEST(ElfFile, reads_dynsym_of_a_stripped_library) {
  auto libc = find_library("libc");
  ASSERT_TRUE(libc.has_value());
  ElfFile elf = open_or_die(*libc);
  const ElfSymbol *malloc_sym = elf.find("malloc");
  ASSERT_NE(malloc_sym, nullptr);
  EXPECT_EQ(malloc_sym->type, SymbolType::Func);
  EXPECT_TRUE(has_name(elf.match("mallo*"), "malloc"));
  EXPECT_EQ(elf.build_id().size(), 40u);  // Debian builds carry a SHA-1 build-id
}

TEST(ElfFile, errors_for_missing_and_non_elf_files) {
  auto missing = ElfFile::open("/no/such/file");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().what, "reading /no/such/file");
  EXPECT_EQ(missing.error().err, ENOENT);
  auto text = ElfFile::open("/etc/passwd");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().why, "not an ELF file");
  EXPECT_FALSE(is_elf_file("/etc/passwd"));
  EXPECT_TRUE(is_elf_file(RBT_USDT_DEMO));
}

TEST(UsdtNotes, reads_providers_names_arguments_and_semaphores) {
  ElfFile elf = open_or_die(RBT_USDT_DEMO);
  auto notes = read_usdt_notes(elf);
  ASSERT_TRUE(notes) << notes.error().why;
  auto probes = unique_usdt_probes(*notes);
  ASSERT_EQ(probes.size(), 2u);
  // Sorted: guarded before loop.
  const UsdtNote &guarded = probes[0], &loop = probes[1];
  EXPECT_EQ(guarded.full_name(), "rbt_test:guarded");
  EXPECT_EQ(guarded.arg_count, 1);
  const ElfSymbol *sem = elf.find("rbt_test_guarded_semaphore");
  ASSERT_NE(sem, nullptr);
  EXPECT_EQ(guarded.semaphore, sem->value);
  EXPECT_EQ(loop.full_name(), "rbt_test:loop");
  EXPECT_EQ(loop.semaphore, 0u);
  EXPECT_EQ(loop.arg_count, 2);
  EXPECT_NE(loop.args.find('@'), std::string::npos) << loop.args;
  // Call sites are code: inside an executable segment.
  const LoadSegment *seg = elf.segment_of(loop.pc);
  ASSERT_NE(seg, nullptr);
  EXPECT_TRUE(seg->executable);
}

TEST(UsdtNotes, debian_libruby_has_22_probes) {
  auto path = find_library("libruby");
  ASSERT_TRUE(path.has_value());
  ElfFile elf = open_or_die(*path);
  auto notes = read_usdt_notes(elf);
  ASSERT_TRUE(notes);
  auto probes = unique_usdt_probes(*notes);
  EXPECT_EQ(probes.size(), 22u);
  auto it = std::find_if(probes.begin(), probes.end(),
                         [](auto &n) { return n.full_name() == "ruby:cmethod__entry"; });
  ASSERT_NE(it, probes.end());
  EXPECT_EQ(it->arg_count, 4);
  EXPECT_NE(it->semaphore, 0u);
}

TEST(UsdtNotes, a_binary_without_notes_has_none) {
  ElfFile elf = open_or_die("/usr/bin/true");
  auto notes = read_usdt_notes(elf);
  ASSERT_TRUE(notes);
  EXPECT_TRUE(notes->empty());
}
