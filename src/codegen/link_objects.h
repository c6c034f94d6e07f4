#pragma once
// Joins BPF objects compiled separately (one per codegen partition, see partition.h) into one
// ELF, as `bpftool gen object` does: libbpf's static linker merges their sections, BTF and
// .BTF.ext, and resolves the maps every part defines (weak, identical) to one definition.
// A file-format operation only: nothing here talks to the kernel.

#include <vector>

#include "result.h"

namespace rbt::codegen {

Result<std::vector<char>> link_objects(const std::vector<std::vector<char>> &objects);

}  // namespace rbt::codegen
