#pragma once
// Whether an offset into a function's machine code starts an instruction. A uprobe placed
// inside an instruction overwrites part of it with a breakpoint: the traced process then runs
// a different instruction (wrong results) or faults. Decoding needs LLVM's disassembler, which
// the runtime must not link, so this small library stands apart and the driver joins the two.

#include <cstddef>
#include <cstdint>

namespace rbt::disasm {

enum class Boundary {
  Yes,      // an instruction starts at the offset
  No,       // the offset is inside an instruction
  Unknown,  // the code could not be decoded up to the offset (data in .text, unknown machine)
};

// `code` is the function's bytes from its first instruction; `e_machine` is the ELF header's
// (EM_X86_64, EM_AARCH64, ...).
Boundary instruction_boundary(uint16_t e_machine, const uint8_t *code, size_t size,
                              uint64_t offset);

}  // namespace rbt::disasm
