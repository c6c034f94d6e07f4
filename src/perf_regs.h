#pragma once
// x86-64 `struct pt_regs`: where each register lives in the context of kprobes, uprobes and
// perf events, by the names reg() accepts.

#include <string_view>

namespace rbt {

// Byte offset of register `name` in pt_regs, or -1 for an unknown name.
inline int pt_regs_offset(std::string_view name) {
  static const struct {
    const char *name;
    int offset;
  } kRegs[] = {{"r15", 0},  {"r14", 8},  {"r13", 16},  {"r12", 24},  {"bp", 32},
               {"bx", 40},  {"r11", 48}, {"r10", 56},  {"r9", 64},   {"r8", 72},
               {"ax", 80},  {"cx", 88},  {"dx", 96},   {"si", 104},  {"di", 112},
               {"orig_ax", 120}, {"ip", 128}, {"cs", 136}, {"flags", 144}, {"sp", 152},
               {"ss", 160}};
  for (auto &r : kRegs)
    if (name == r.name)
      return r.offset;
  return -1;
}

}  // namespace rbt
