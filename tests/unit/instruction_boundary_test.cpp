// The decoder that keeps uprobes off the middle of instructions.

#include <elf.h>
#include <gtest/gtest.h>

#include "instruction_boundary.h"

using rbt::disasm::Boundary;
using rbt::disasm::instruction_boundary;

namespace {

// mov %rdi,%rax (48 89 f8); movabs $0x1122334455667788,%rax (10 bytes); ret
const uint8_t kCode[] = {0x48, 0x89, 0xf8, 0x48, 0xb8, 0x88, 0x77, 0x66,
                         0x55, 0x44, 0x33, 0x22, 0x11, 0xc3};

TEST(InstructionBoundary, x86_starts_of_instructions_are_boundaries) {
  for (uint64_t off : {0, 3, 13})
    EXPECT_EQ(instruction_boundary(EM_X86_64, kCode, sizeof kCode, off), Boundary::Yes) << off;
}

TEST(InstructionBoundary, x86_bytes_inside_instructions_are_not) {
  for (uint64_t off : {1, 2, 4, 8, 12})
    EXPECT_EQ(instruction_boundary(EM_X86_64, kCode, sizeof kCode, off), Boundary::No) << off;
}

TEST(InstructionBoundary, code_that_ends_before_the_offset_is_unknown) {
  EXPECT_EQ(instruction_boundary(EM_X86_64, kCode, 3, 5), Boundary::Unknown);
}

TEST(InstructionBoundary, undecodable_bytes_are_unknown) {
  const uint8_t bad[] = {0x0f, 0xff, 0xff, 0xff};  // 0f ff: no such opcode (UD0 needs a ModRM)
  EXPECT_EQ(instruction_boundary(EM_X86_64, bad, sizeof bad, 2), Boundary::Unknown);
}

TEST(InstructionBoundary, aarch64_instructions_are_four_bytes) {
  const uint8_t code[8] = {};
  EXPECT_EQ(instruction_boundary(EM_AARCH64, code, sizeof code, 4), Boundary::Yes);
  EXPECT_EQ(instruction_boundary(EM_AARCH64, code, sizeof code, 2), Boundary::No);
}

TEST(InstructionBoundary, unknown_machines_cannot_be_decoded) {
  const uint8_t code[8] = {};
  EXPECT_EQ(instruction_boundary(EM_S390, code, sizeof code, 4), Boundary::Unknown);
}

}  // namespace
