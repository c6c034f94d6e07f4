#pragma once
// Finding ruby_global_symbols (Ruby's ID → name table) in a live process, so the BPF walker can
// name C method frames `each` rather than by their C function. Debian's libruby does not export
// the symbol, so it is recognised by shape in libruby's .data: {u32 last_id; st_table *str_sym;
// VALUE ids (an Array of Arrays of [String, Symbol] pairs); VALUE dsymbol_fstr_hash (a Hash)}.

#include <sys/types.h>

#include <cstdint>

#include "symbols/elf_file.h"

namespace rbt::runtime::ruby {

// The table's address, or 0 when it cannot be found (frames are then named by ELF symbol).
uint64_t find_global_symbols(pid_t pid, const ElfFile &elf, uint64_t load_bias,
                             uint32_t version_code);

// The table's link-time address read from the file alone, 0 when it cannot be: the exported
// rb_sym_immortal_count returns the table's first field (last_id), so its first instruction
// is a RIP-relative load from the table (`mov disp32(%rip),%eax`). Lets BPF name C methods of
// processes user space has never looked at (docs/rstack-discovery.md).
uint64_t global_symbols_vaddr(const ElfFile &elf);

}  // namespace rbt::runtime::ruby
