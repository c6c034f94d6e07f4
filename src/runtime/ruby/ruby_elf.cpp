#include "ruby/ruby_elf.h"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstring>

#include "symbols/regular_file.h"

namespace rbt::runtime::ruby {

namespace {

// Bytes of the file at a virtual address (through its PT_LOAD segment).
std::string file_bytes(const ElfFile &elf, uint64_t vaddr, size_t n) {
  auto off = elf.vaddr_to_offset(vaddr);
  if (!off)
    return {};
  int fd = open_regular_file(elf.path());
  if (fd < 0)
    return {};
  std::string buf(n, '\0');
  ssize_t got = pread(fd, buf.data(), n, static_cast<off_t>(*off));
  close(fd);
  buf.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return buf;
}

struct TlsSymbol {
  uint64_t value = 0;
  size_t dynsym_index = 0;  // 0: only in .symtab (a static executable's own TLS)
  bool found = false;
};

// ElfFile keeps functions and objects only; TLS symbols are looked up here.
TlsSymbol find_tls_symbol(Elf *elf, const char *want) {
  TlsSymbol out;
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
        sh.sh_entsize == 0)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    size_t count = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; data && i < count; i++) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || GELF_ST_TYPE(sym.st_info) != STT_TLS ||
          sym.st_shndx == SHN_UNDEF)
        continue;
      const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (!name || strcmp(name, want) != 0)
        continue;
      out.value = sym.st_value;
      out.found = true;
      if (sh.sh_type == SHT_DYNSYM)
        out.dynsym_index = i;
    }
  }
  return out;
}

// The relocation through which code reaches the symbol `index` of .dynsym, if any.
bool find_tls_relocation(Elf *elf, size_t index, RubyElfFacts &facts) {
  Elf_Scn *scn = nullptr;
  bool found = false;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    size_t count = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; data && i < count; i++) {
      GElf_Rela r;
      if (!gelf_getrela(data, static_cast<int>(i), &r) || GELF_R_SYM(r.r_info) != index)
        continue;
      switch (GELF_R_TYPE(r.r_info)) {
      case R_X86_64_DTPMOD64:  // general dynamic: preferred, it is what Ruby's code uses
        facts.access = TlsAccess::DtvModule;
        facts.got_vaddr = r.r_offset;
        return true;
      case R_X86_64_TPOFF64:
        facts.access = TlsAccess::GotTpOffset;
        facts.got_vaddr = r.r_offset;
        found = true;
        break;
      case R_X86_64_TLSDESC:
        if (!found) {
          facts.access = TlsAccess::GotTlsDesc;
          facts.got_vaddr = r.r_offset;
          found = true;
        }
        break;
      }
    }
  }
  return found;
}

}  // namespace

std::optional<uint32_t> ruby_version_code(const std::string &version) {
  unsigned major = 0, minor = 0;
  if (sscanf(version.c_str(), "%u.%u", &major, &minor) != 2 || major > 9 || minor > 99)
    return std::nullopt;
  return major * 100 + minor;
}

Result<RubyElfFacts> read_ruby_elf_facts(const ElfFile &elf) {
  RubyElfFacts facts;
  const ElfSymbol *ver = elf.find("ruby_version");
  if (!ver)
    return make_error("reading " + elf.path(), "no ruby_version symbol: not a Ruby interpreter");
  std::string bytes = file_bytes(elf, ver->value, ver->size ? ver->size : 16);
  facts.version = bytes.substr(0, bytes.find('\0'));

  Elf *e = elf.handle();
  GElf_Ehdr eh;
  facts.is_executable = gelf_getehdr(e, &eh) && eh.e_type == ET_EXEC;
  size_t nphdr = 0;
  elf_getphdrnum(e, &nphdr);
  for (size_t i = 0; i < nphdr; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(e, static_cast<int>(i), &ph) && ph.p_type == PT_TLS) {
      facts.tls_memsz = ph.p_memsz;
      facts.tls_align = ph.p_align ? ph.p_align : 1;
    }
    if (gelf_getphdr(e, static_cast<int>(i), &ph) && ph.p_type == PT_INTERP)
      facts.is_executable = true;  // a PIE main program, not a library
  }

  if (const ElfSymbol *vm = elf.find("ruby_current_vm_ptr"))
    facts.vm_ptr_value = vm->value;
  TlsSymbol ec = find_tls_symbol(e, "ruby_current_ec");
  if (!ec.found)
    return facts;  // Ruby 2.7: the threads list stands in for the TLS ec
  facts.has_tls_ec = true;
  facts.ec_value = ec.value;
  if (ec.dynsym_index && find_tls_relocation(e, ec.dynsym_index, facts))
    return facts;
  if (facts.is_executable && facts.tls_memsz) {
    facts.access = TlsAccess::LocalExec;
    return facts;
  }
  return make_error("reading " + elf.path(),
                    "no TLS relocation for ruby_current_ec that rstack understands");
}

// Whether processes of the executable `elf` may run Ruby: it is one (ruby_version), or it links
// a libruby. (A libruby loaded with dlopen is met by its early uprobe when rbt knows the file.)
bool may_run_ruby(const ElfFile &elf) {
  if (elf.find("ruby_version"))
    return true;
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf.handle(), scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || sh.sh_entsize == 0)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(data, static_cast<int>(i), &dyn) || dyn.d_tag != DT_NEEDED)
        continue;
      const char *name = elf_strptr(elf.handle(), sh.sh_link, dyn.d_un.d_val);
      if (name && strncmp(name, "libruby", 7) == 0)
        return true;
    }
  }
  return false;
}

}  // namespace rbt::runtime::ruby
