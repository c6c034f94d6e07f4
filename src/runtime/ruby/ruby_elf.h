#pragma once
// What rstack needs from a Ruby binary's ELF file (libruby or a static ruby), independent of
// any process: the version string, how the thread-local ruby_current_ec is reached (which
// relocation the GOT carries for it, or the executable's own TLS segment), and the symbols
// of C functions. Process-specific facts (load bias, module id) are in ruby_process.h.

#include <cstdint>
#include <optional>
#include <string>

#include "result.h"
#include "symbols/elf_file.h"

namespace rbt::runtime::ruby {

enum class TlsAccess : uint8_t {
  DtvModule,  // R_X86_64_DTPMOD64 in the GOT: module id at run time, then the symbol's offset
  GotTpOffset,  // R_X86_64_TPOFF64: the GOT holds the offset from the thread pointer
  GotTlsDesc,   // R_X86_64_TLSDESC: the descriptor's second word holds it (static TLS)
  LocalExec,    // the executable defines it: tp - roundup(PT_TLS memsz, align) + st_value
};

struct RubyElfFacts {
  std::string version;       // bytes of the ruby_version symbol: "3.1.2"
  // Whether the thread-local ruby_current_ec exists (Ruby >= 3.0) and the fields below say how
  // to reach it. Without it (2.7) rstack finds threads through ruby_current_vm_ptr.
  bool has_tls_ec = false;
  uint64_t vm_ptr_value = 0; // st_value of ruby_current_vm_ptr, 0 when absent
  uint64_t ec_value = 0;     // st_value of ruby_current_ec (offset in the TLS block)
  TlsAccess access = TlsAccess::DtvModule;
  uint64_t got_vaddr = 0;    // where the relocation is applied (before load bias)
  uint64_t tls_memsz = 0, tls_align = 1;  // PT_TLS, for LocalExec
  bool is_executable = false;             // ET_EXEC or a PIE that is the main program
};

// Whether processes of the executable `elf` may run Ruby: it is one (ruby_version), or it
// links a libruby.
bool may_run_ruby(const ElfFile &elf);

// Reads the facts from `elf`. Errors say what is missing (no ruby_version; a TLS ec reached
// through no relocation rstack understands).
Result<RubyElfFacts> read_ruby_elf_facts(const ElfFile &elf);

// "3.1.2" → 301, or nullopt when the text is not a version.
std::optional<uint32_t> ruby_version_code(const std::string &version);

}  // namespace rbt::runtime::ruby
