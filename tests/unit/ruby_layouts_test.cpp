// rstack's per-version layout records and version detection (src/runtime/ruby/).

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "ruby/ruby_elf.h"
#include "ruby/ruby_process.h"

using namespace rbt::runtime::ruby;

TEST(RubyLayouts, one_record_per_supported_version) {
  std::set<uint32_t> versions;
  for (size_t i = 0; i < RBT_RUBY_LAYOUT_COUNT; i++)
    versions.insert(rbt_ruby_layouts_table[i].version);
  EXPECT_EQ(versions, (std::set<uint32_t>{207, 300, 301, 302, 303, 304}));
  EXPECT_LE(RBT_RUBY_LAYOUT_COUNT, static_cast<size_t>(RBT_RUBY_MAX_LAYOUTS));
}

TEST(RubyLayouts, records_match_the_design_table) {
  const rbt_ruby_layout &r31 = rbt_ruby_layouts_table[layout_index(301)];
  EXPECT_EQ(r31.cfp_size, 64u);
  EXPECT_EQ(r31.insns_info_body, 120u);
  EXPECT_EQ(r31.insns_info_size, 136u);
  EXPECT_EQ(r31.insns_info_succ, 144u);
  EXPECT_EQ(r31.insn_info_entry_size, 12u);
  EXPECT_EQ(r31.rstring_embed, 16u);
  EXPECT_EQ(r31.thread_ec, 40u);
  const rbt_ruby_layout &r33 = rbt_ruby_layouts_table[layout_index(303)];
  EXPECT_EQ(r33.cfp_size, 56u);
  EXPECT_EQ(r33.insns_info_succ, 136u);
  EXPECT_EQ(r33.rstring_embed, 24u);
  EXPECT_EQ(r33.rstring_embed_len_in_flags, 0u);
  for (size_t i = 0; i < RBT_RUBY_LAYOUT_COUNT; i++) {
    const rbt_ruby_layout &l = rbt_ruby_layouts_table[i];
    EXPECT_TRUE(l.cfp_size == 56 || l.cfp_size == 64) << l.version;
    // The walker reads ec's first three words in one go.
    EXPECT_EQ(l.ec_vm_stack_size, 8u);
    EXPECT_EQ(l.ec_cfp, 16u);
    // The walker reads 160 bytes of the iseq body.
    EXPECT_LT(l.insns_info_succ + 8, 160u);
    EXPECT_LT(l.body_location + l.loc_first_lineno + 8, 160u);
  }
}

// The threads list lookup (Ruby 2.7, or RBT_RUBY_THREAD_LOOKUP=list): offsets from each version's
// vm_core.h / ractor_core.h / thread_pthread.h on x86_64 glibc.
TEST(RubyLayouts, threads_list_offsets) {
  const rbt_ruby_layout &r27 = rbt_ruby_layouts_table[layout_index(207)];
  EXPECT_EQ(r27.vm_main_ractor, 0u);  // vm->living_threads: no ractors yet
  EXPECT_EQ(r27.threads_head, 312u);
  EXPECT_EQ(r27.thread_nt, 0u);
  EXPECT_EQ(r27.thread_native_id, 72u);
  EXPECT_EQ(r27.thread_ec, 32u);
  const rbt_ruby_layout &r31 = rbt_ruby_layouts_table[layout_index(301)];
  EXPECT_EQ(r31.vm_main_ractor, 32u);  // vm->ractor.main_ractor->threads.set
  EXPECT_EQ(r31.threads_head, 304u);
  EXPECT_EQ(r31.thread_native_id, 80u);
  const rbt_ruby_layout &r33 = rbt_ruby_layouts_table[layout_index(303)];
  EXPECT_EQ(r33.threads_head, 256u);
  EXPECT_EQ(r33.thread_nt, 40u);  // th->nt->thread_id from 3.2 on
  EXPECT_EQ(r33.thread_native_id, 16u);
  for (size_t i = 0; i < RBT_RUBY_LAYOUT_COUNT; i++) {
    const rbt_ruby_layout &l = rbt_ruby_layouts_table[i];
    EXPECT_NE(l.threads_head, 0u) << l.version;
    // The walker reads a thread's list node, ec and pthread_t (or nt) in one read.
    EXPECT_LE(l.thread_node + 8, static_cast<uint32_t>(RBT_RUBY_THREAD_READ)) << l.version;
    EXPECT_LE(l.thread_ec + 8, static_cast<uint32_t>(RBT_RUBY_THREAD_READ)) << l.version;
    uint32_t in_thread = l.thread_nt ? l.thread_nt : l.thread_native_id;
    EXPECT_LE(in_thread + 8, static_cast<uint32_t>(RBT_RUBY_THREAD_READ)) << l.version;
  }
}

TEST(RubyLayouts, thread_lookup_override) {
  unsetenv("RBT_RUBY_THREAD_LOOKUP");
  EXPECT_EQ(*thread_lookup_override(), ThreadLookup::Auto);
  setenv("RBT_RUBY_THREAD_LOOKUP", "list", 1);
  EXPECT_EQ(*thread_lookup_override(), ThreadLookup::List);
  setenv("RBT_RUBY_THREAD_LOOKUP", "tls", 1);
  EXPECT_EQ(*thread_lookup_override(), ThreadLookup::Tls);
  setenv("RBT_RUBY_THREAD_LOOKUP", "gvl", 1);
  EXPECT_FALSE(thread_lookup_override().ok());
  unsetenv("RBT_RUBY_THREAD_LOOKUP");
}

TEST(RubyLayouts, version_codes) {
  EXPECT_EQ(ruby_version_code("3.1.2"), 301u);
  EXPECT_EQ(ruby_version_code("2.7.8"), 207u);
  EXPECT_EQ(ruby_version_code("3.4.0"), 304u);
  EXPECT_FALSE(ruby_version_code("x"));
  EXPECT_EQ(layout_index(209), -1);
  EXPECT_GE(layout_index(302), 0);
}

TEST(RubyLayouts, debian_libruby_uses_general_dynamic_tls) {
  const char *path = "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1";
  auto elf = rbt::runtime::ElfFile::open(path);
  if (!elf)
    GTEST_SKIP() << "no Debian libruby 3.1";
  auto facts = read_ruby_elf_facts(*elf);
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->version.substr(0, 4), "3.1.");
  EXPECT_TRUE(facts->has_tls_ec);
  EXPECT_NE(facts->vm_ptr_value, 0u);  // for the threads list lookup
  EXPECT_EQ(facts->access, TlsAccess::DtvModule);
  EXPECT_NE(facts->got_vaddr, 0u);
  EXPECT_EQ(facts->ec_value, 8u);
}
