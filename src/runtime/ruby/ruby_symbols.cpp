#include "ruby/ruby_symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "ruby/ruby_process.h"
#include "symbols/regular_file.h"

namespace rbt::runtime::ruby {

namespace {

constexpr uint64_t kTypeMask = 0x1f, kArray = 0x07, kHash = 0x08, kString = 0x05;

// Section `name`'s (vaddr, size), or (0, 0).
std::pair<uint64_t, uint64_t> section(const ElfFile &elf, const char *name) {
  Elf *e = elf.handle();
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(e, &shstrndx) != 0)
    return {0, 0};
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(e, scn)) != nullptr) {
    GElf_Shdr sh;
    const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : nullptr;
    if (n && strcmp(n, name) == 0)
      return {sh.sh_addr, sh.sh_size};
  }
  return {0, 0};
}

struct Reader {
  pid_t pid;
  uint64_t u64(uint64_t addr) const {
    uint64_t v = 0;
    if (addr == 0 || (addr & 7) || !read_process_memory(pid, addr, &v, 8))
      return 0;
    return v;
  }
  uint64_t type(uint64_t obj) const { return u64(obj) & kTypeMask; }
  // Element storage of an Array (embedded or on the heap); layouts agree from 2.7 to 3.4.
  uint64_t elements(uint64_t ary) const {
    return (u64(ary) & (1ULL << 13)) ? ary + 16 : u64(ary + 32);
  }
};

bool looks_like_table(const Reader &r, const uint64_t *w) {
  uint64_t last_id = w[0] & 0xffffffffULL;
  if (last_id <= 169 || last_id > (1u << 24) || w[1] == 0 || (w[1] & 7) || w[2] == 0 ||
      (w[2] & 7) || w[3] == 0 || (w[3] & 7))
    return false;
  if (r.type(w[2]) != kArray || r.type(w[3]) != kHash)
    return false;
  // The first chunk's [String, Symbol] pairs: most serials of the first chunk are names
  // (the lowest ones, operator tokens, may be empty).
  uint64_t chunk = r.u64(r.elements(w[2]));
  if (r.type(chunk) != kArray)
    return false;
  std::vector<uint64_t> pairs(2 * 512);
  if (!read_process_memory(r.pid, r.elements(chunk), pairs.data(), pairs.size() * 8))
    return false;
  int strings = 0;
  for (size_t serial = 1; serial < 512 && serial <= last_id; serial++)
    strings += pairs[serial * 2] && r.type(pairs[serial * 2]) == kString;
  return strings >= 64;
}

}  // namespace

uint64_t find_global_symbols(pid_t pid, const ElfFile &elf, uint64_t load_bias, uint32_t) {
  auto [vaddr, size] = section(elf, ".data");
  if (!vaddr || !size || size > (64u << 20))
    return 0;
  std::vector<uint64_t> words(size / 8);
  if (!read_process_memory(pid, load_bias + vaddr, words.data(), words.size() * 8))
    return 0;
  Reader r{pid};
  for (size_t i = 0; i + 4 <= words.size(); i++)
    if (looks_like_table(r, &words[i]))
      return load_bias + vaddr + i * 8;
  return 0;
}

uint64_t global_symbols_vaddr(const ElfFile &elf) {
  const ElfSymbol *fn = elf.find("rb_sym_immortal_count");
  auto off = fn ? elf.vaddr_to_offset(fn->value) : std::nullopt;
  if (!off)
    return 0;
  uint8_t code[8] = {};
  int fd = open_regular_file(elf.path());
  if (fd < 0)
    return 0;
  ssize_t got = pread(fd, code, sizeof(code), static_cast<off_t>(*off));
  close(fd);
  if (got != sizeof(code))
    return 0;
  // mov disp32(%rip),%eax (8b 05) or %rax (48 8b 05): the address is the next instruction's
  // plus disp32. Anything else is another compiler's code: unknown.
  size_t at = code[0] == 0x48 ? 1 : 0;
  if (code[at] != 0x8b || code[at + 1] != 0x05)
    return 0;
  int32_t disp;
  memcpy(&disp, code + at + 2, 4);
  uint64_t vaddr = fn->value + at + 6 + static_cast<int64_t>(disp);
  // It must land in the file's writable data: .data (an initialised table) or .bss.
  auto data = section(elf, ".data"), bss = section(elf, ".bss");
  bool in_data = vaddr >= data.first && vaddr + 32 <= data.first + data.second;
  bool in_bss = vaddr >= bss.first && vaddr + 32 <= bss.first + bss.second;
  return in_data || in_bss ? vaddr : 0;
}

}  // namespace rbt::runtime::ruby
