// The pc → line decoder shared with the BPF walker (stdlib/bpf/ruby_layouts.h), checked against
// tables built the way Ruby's iseq.c builds them (succ_index_table_create) and a naive rank.

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "ruby_layouts.h"

namespace {

// The bytes of a succ_index_table with bits set at `positions` (Ruby: the instruction
// positions where a new insns_info entry starts), for positions below `max_pos`.
std::vector<uint8_t> build_table(const std::vector<bool> &bits) {
  size_t max_pos = bits.size();
  size_t blocks = max_pos > RBT_RUBY_SUCC_IMM_ENTRIES
                      ? (max_pos - RBT_RUBY_SUCC_IMM_ENTRIES + 511) / 512
                      : 0;
  std::vector<uint8_t> t(RBT_RUBY_SUCC_IMM_BYTES + blocks * RBT_RUBY_SUCC_BLOCK_BYTES, 0);
  uint32_t rank = 0;
  for (size_t i = 0; i < std::min<size_t>(max_pos, RBT_RUBY_SUCC_IMM_ENTRIES); i++) {
    rank += bits[i];
    uint64_t word;
    memcpy(&word, &t[(i / 9) * 8], 8);
    word |= uint64_t(rank) << ((i % 9) * 7);
    memcpy(&t[(i / 9) * 8], &word, 8);
  }
  for (size_t b = 0; b < blocks; b++) {
    uint8_t *block = &t[RBT_RUBY_SUCC_IMM_BYTES + b * RBT_RUBY_SUCC_BLOCK_BYTES];
    memcpy(block, &rank, 4);
    uint64_t small_ranks = 0, words[8] = {};
    uint32_t in_block = 0;
    for (size_t sb = 0; sb < 8; sb++) {
      if (sb)
        small_ranks |= uint64_t(in_block) << ((sb - 1) * 9);
      for (size_t k = 0; k < 64; k++) {
        size_t pos = RBT_RUBY_SUCC_IMM_ENTRIES + b * 512 + sb * 64 + k;
        if (pos < max_pos && bits[pos]) {
          words[sb] |= uint64_t(1) << k;
          in_block++;
        }
      }
    }
    rank += in_block;
    memcpy(block + 8, &small_ranks, 8);
    memcpy(block + 16, words, sizeof(words));
  }
  return t;
}

// What the BPF side does: read 8 bytes (immediate) or a block at the offset, then decode.
uint32_t lookup(const std::vector<uint8_t> &table, uint64_t pos) {
  __u64 data[10] = {};
  uint64_t off = rbt_ruby_succ_read_offset(pos);
  size_t n = pos < RBT_RUBY_SUCC_IMM_ENTRIES ? 8 : RBT_RUBY_SUCC_BLOCK_BYTES;
  memcpy(data, &table[off], n);
  return rbt_ruby_succ_index(pos, data);
}

}  // namespace

TEST(RubyLine, popcount_matches_the_builtin) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 1000; i++) {
    uint64_t x = rng();
    EXPECT_EQ(rbt_ruby_popcount64(x), static_cast<uint32_t>(__builtin_popcountll(x)));
  }
  EXPECT_EQ(rbt_ruby_popcount64(0), 0u);
  EXPECT_EQ(rbt_ruby_popcount64(~0ULL), 64u);
}

TEST(RubyLine, pc_points_after_its_instruction) {
  EXPECT_EQ(rbt_ruby_insn_pos(0x1000, 0x1000), 0u);
  EXPECT_EQ(rbt_ruby_insn_pos(0x1008, 0x1000), 0u);
  EXPECT_EQ(rbt_ruby_insn_pos(0x1010, 0x1000), 1u);
  EXPECT_EQ(rbt_ruby_insn_pos(0x1000 + 8 * 100, 0x1000), 99u);
}

TEST(RubyLine, succinct_index_equals_rank_in_immediate_part_and_blocks) {
  std::mt19937 rng(42);
  for (double density : {0.05, 0.3, 0.9}) {
    std::bernoulli_distribution bit(density);
    std::vector<bool> bits(3000);
    bits[0] = true;  // Ruby's first entry always starts at position 0
    for (size_t i = 1; i < bits.size(); i++)
      bits[i] = bit(rng);
    auto table = build_table(bits);
    uint32_t rank = 0;
    for (size_t pos = 0; pos < bits.size(); pos++) {
      rank += bits[pos];
      ASSERT_EQ(lookup(table, pos), rank) << "pos " << pos << " density " << density;
    }
  }
}

// A hand-computed case: the table Ruby 3.1 builds for a method whose 60 instructions start 6 insns_info
// entries at positions 0, 3, 10, 53, 54 and 59 (the last two live in the first block).
TEST(RubyLine, hand_computed_table_for_a_long_method) {
  const uint64_t imm[6] = {
      // pos 0..8: ranks 1 1 1 2 2 2 2 2 2
      0x0000000000000001ULL | (1ULL << 7) | (1ULL << 14) | (2ULL << 21) | (2ULL << 28) |
          (2ULL << 35) | (2ULL << 42) | (2ULL << 49) | (2ULL << 56),
      // pos 9: 2, pos 10..17: 3
      2ULL | (3ULL << 7) | (3ULL << 14) | (3ULL << 21) | (3ULL << 28) | (3ULL << 35) |
          (3ULL << 42) | (3ULL << 49) | (3ULL << 56),
      0, 0, 0};
  std::vector<bool> bits(60);
  for (int p : {0, 3, 10, 53, 54, 59})
    bits[p] = true;
  auto table = build_table(bits);
  uint64_t first_two[2];
  memcpy(first_two, table.data(), 16);
  EXPECT_EQ(first_two[0], imm[0]);
  EXPECT_EQ(first_two[1], imm[1]);
  EXPECT_EQ(lookup(table, 52), 3u);
  EXPECT_EQ(lookup(table, 53), 4u);
  EXPECT_EQ(lookup(table, 54), 5u);
  EXPECT_EQ(lookup(table, 58), 5u);
  EXPECT_EQ(lookup(table, 59), 6u);
}
