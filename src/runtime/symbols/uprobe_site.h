#pragma once
// The machine code around a uprobe placed at `sym+offset` or at a raw address: the bytes of the
// function that holds it, from its first instruction, so that a decoder outside the runtime (it
// needs LLVM, see src/disasm) can tell whether the probe lands on an instruction boundary.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "manifest.h"
#include "result.h"

namespace rbt::runtime {

struct UprobeSite {
  std::string function;       // the function holding the probe; empty when no symbol covers it
  uint64_t offset = 0;        // the probe's offset into that function
  std::vector<uint8_t> code;  // the function's bytes from its start (at least up to offset)
  uint16_t machine = 0;       // the ELF header's e_machine
};

// For an expanded uprobe/uretprobe (target a path, func a symbol with an offset, or an address
// in `offset` with no func): the site to check, or nullopt when there is nothing to check (the
// probe is at a function's first byte, or the binary or symbol cannot be read; attaching then
// reports that). pid: the -p process whose root holds the binary (see probe_file).
std::optional<UprobeSite> uprobe_site(const ProbeDesc &probe, pid_t pid);

}  // namespace rbt::runtime
