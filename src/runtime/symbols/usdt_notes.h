#pragma once
// USDT probes as <sys/sdt.h> records them: one SystemTap note (owner "stapsdt", type 3) in
// .note.stapsdt per call site. Listing, wildcard expansion and `-lv` read them here; attaching
// is libbpf's (bpf_program__attach_usdt reads the same notes itself).

#include <cstdint>
#include <string>
#include <vector>

#include "elf_file.h"
#include "result.h"

namespace rbt::runtime {

struct UsdtNote {
  std::string provider;
  std::string name;
  uint64_t pc = 0;         // call site, a virtual address (already prelink-adjusted)
  uint64_t base = 0;       // the note's idea of .stapsdt.base
  uint64_t semaphore = 0;  // virtual address of the semaphore (0: none), prelink-adjusted
  std::string args;        // argument spec, e.g. "-4@%edx 8@%rax"
  int arg_count = 0;       // number of space-separated arguments in `args`

  std::string full_name() const { return provider + ":" + name; }
};

// Every call site's note, in file order. A file without notes gives an empty list.
Result<std::vector<UsdtNote>> read_usdt_notes(const ElfFile &elf);

// One note per provider:name (the first call site), sorted by provider then name.
std::vector<UsdtNote> unique_usdt_probes(const std::vector<UsdtNote> &notes);

}  // namespace rbt::runtime
