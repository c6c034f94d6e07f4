#include "uprobe_site.h"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>

#include "elf_file.h"
#include "probe_expansion.h"
#include "regular_file.h"

namespace rbt::runtime {

namespace {

// x86's longest instruction is 15 bytes: a function of unknown size is read that far past the
// probe, enough to decode the instruction that holds it.
constexpr uint64_t kMaxInstruction = 15;
constexpr uint64_t kMaxFunctionBytes = 16 << 20;

// The sized function symbol whose bytes cover vaddr, or null.
const ElfSymbol *function_covering(const ElfFile &elf, uint64_t vaddr) {
  const ElfSymbol *best = nullptr;
  for (auto &s : elf.symbols())
    if ((s.type == SymbolType::Func || s.type == SymbolType::Ifunc) && s.size &&
        s.value <= vaddr && vaddr < s.value + s.size)
      best = &s;
  return best;
}

bool read_code(const std::string &path, uint64_t offset, uint64_t size, std::vector<uint8_t> &out) {
  int fd = open_regular_file(path);
  if (fd < 0)
    return false;
  out.resize(size);
  ssize_t n = pread(fd, out.data(), size, static_cast<off_t>(offset));
  close(fd);
  if (n < 0)
    return false;
  out.resize(static_cast<size_t>(n));
  return true;
}

}  // namespace

std::optional<UprobeSite> uprobe_site(const ProbeDesc &probe, pid_t pid) {
  if (probe.kind != ProbeKind::Uprobe && probe.kind != ProbeKind::Uretprobe)
    return std::nullopt;
  if (!probe.func.empty() && probe.offset == 0)
    return std::nullopt;  // a function's entry
  if (probe.func.empty() && is_flat_binary(probe_file(probe, pid)))
    return UprobeSite{};  // no symbols say where instructions start: --unsafe decides
  auto elf = ElfFile::open(probe_file(probe, pid));
  if (!elf)
    return std::nullopt;
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(elf->handle(), &ehdr))
    return std::nullopt;
  UprobeSite site;
  site.machine = ehdr.e_machine;
  const ElfSymbol *sym = nullptr;
  uint64_t vaddr = 0;
  if (!probe.func.empty()) {
    sym = elf->find(probe.func);
    if (!sym)
      return std::nullopt;
    if (sym->size && probe.offset >= sym->size)
      return std::nullopt;  // past the function's end: attaching says so
    vaddr = sym->value + probe.offset;
  } else {
    vaddr = probe.offset;
    sym = function_covering(*elf, vaddr);
    if (sym && sym->value == vaddr)
      return std::nullopt;
  }
  if (!sym)
    return site;  // no function to decode from: the caller cannot prove a boundary
  site.function = sym->name;
  site.offset = vaddr - sym->value;
  uint64_t size = sym->size ? sym->size : site.offset + kMaxInstruction;
  size = std::min(std::max(size, site.offset + 1), kMaxFunctionBytes);
  auto file_offset = elf->vaddr_to_offset(sym->value);
  if (!file_offset || !read_code(elf->file_path(), *file_offset, size, site.code))
    return std::nullopt;
  return site;
}

}  // namespace rbt::runtime
