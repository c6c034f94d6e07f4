// uprobe:binary:symbol[+offset], uprobe:binary:address and the uretprobe forms. The symbol is
// turned into a file offset here, from the ELF's own tables, so that `sym+off` and addresses
// work the same way and libbpf never has to look the name up again.

#include <cerrno>

#include "attach.h"
#include "probe_expansion.h"
#include "symbols/elf_file.h"
#include "symbols/library_resolver.h"
#include "symbols/usdt_notes.h"

namespace rbt::runtime {

namespace {

// Probe expansion normally resolved the target to a path already (one inside the -p process's
// root: probe_file); a bare name (`libc`) is still resolved here so that attaching does not
// depend on it.
Result<std::string> binary_path(const ProbeDesc &probe, pid_t pid) {
  if (probe.target.find('/') != std::string::npos)
    return resolve_binary(probe_file(probe, pid), -1);
  return resolve_binary(probe.target, pid);
}

std::string hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The file offset the kernel's uprobe goes to: the symbol's (or the given) virtual address
// plus the probe's offset, through the PT_LOAD segment that holds it.
Result<uint64_t> uprobe_file_offset(const ProbeDesc &probe, const ElfFile &elf) {
  uint64_t vaddr = probe.offset;
  // Expanded probes carry an address in `offset` with no func; unexpanded ones still say
  // "0x4a0" in func.
  auto address = probe.offset == 0 ? parse_uprobe_address(probe.func) : std::nullopt;
  if (address) {
    vaddr = *address;
  } else if (!probe.func.empty()) {
    const ElfSymbol *sym = elf.find(probe.func);
    if (!sym)
      return make_error("", "no symbol '" + probe.func + "' in " + elf.path(),
                        "list its functions with: rbt -l 'uprobe:" + elf.path() + ":*'", ENOENT);
    if (sym->size && probe.offset >= sym->size)
      return make_error("", "Offset outside the function bounds ('" + probe.func + "' size is " +
                                std::to_string(sym->size) + ")",  // bpftrace's words
                        "the offset " + std::to_string(probe.offset) + " must be below " +
                            std::to_string(sym->size));
    vaddr = sym->value + probe.offset;
  }
  const LoadSegment *seg = elf.segment_of(vaddr);
  auto offset = elf.vaddr_to_offset(vaddr);
  if (!seg || !seg->executable || !offset)
    return make_error("", "address " + hex(vaddr) + " is not in an executable segment of " +
                              elf.path());
  return *offset;
}

Status check_usdt(const ProbeDesc &probe, const ElfFile &elf) {
  auto notes = read_usdt_notes(elf);
  if (!notes)
    return notes.error();
  for (auto &n : *notes)
    if (n.full_name() == probe.func || (probe.func.find(':') == std::string::npos &&
                                        n.name == probe.func))
      return Ok{};
  return make_error("", "no USDT probe '" + probe.func + "' in " + elf.path(),
                    "list its probes with: rbt -l 'usdt:" + elf.path() + ":*'", ENOENT);
}

}  // namespace

Status check_uprobe(const ProbeDesc &probe, const AttachTarget &target) {
  auto path = probe.in_process_root ? binary_path(probe, target.pid) : binary_path(probe, -1);
  if (!path)
    return path.error();
  if (probe.kind != ProbeKind::Usdt && probe.func.empty() && is_flat_binary(*path))
    return Ok{};  // a flat binary's address is its file offset
  auto elf = ElfFile::open(*path);
  if (!elf)
    return elf.error();
  // libbpf's USDT attach opens the path itself, and libbpf 1.1 reads no zip archives.
  if (probe.kind == ProbeKind::Usdt && elf->file_path() != elf->path())
    return make_error("", "USDT probes inside a zip archive are not supported",
                      "probe its functions instead: uprobe:\"" + elf->path() + "\":FUNCTION");
  if (probe.kind == ProbeKind::Usdt)
    return check_usdt(probe, *elf);
  if (auto off = uprobe_file_offset(probe, *elf); !off)
    return off.error();
  return Ok{};
}

Result<std::pair<std::string, uint64_t>> uprobe_place(const ProbeDesc &probe,
                                                      const AttachTarget &target) {
  auto path = binary_path(probe, target.pid);
  if (!path)
    return path.error();
  if (probe.func.empty() && is_flat_binary(*path))
    return std::pair{*path, probe.offset};  // a flat binary's address is its file offset
  auto elf = ElfFile::open(*path);
  if (!elf)
    return elf.error();
  auto offset = uprobe_file_offset(probe, *elf);
  if (!offset)
    return offset.error();
  return std::pair{elf->file_path(), *offset};  // an archive entry's goes on the archive itself
}

Result<std::vector<Link>> attach_uprobe(const ProbeDesc &probe, bpf_program *prog,
                                        const AttachTarget &target) {
  auto place = uprobe_place(probe, target);
  if (!place)
    return place.error();
  const auto &[file, offset] = *place;
  LIBBPF_OPTS(bpf_uprobe_opts, opts);
  opts.retprobe = probe.kind == ProbeKind::Uretprobe;
  opts.func_name = nullptr;  // the offset is already the file offset
  return one_link(
      [&] { return bpf_program__attach_uprobe_opts(prog, target.pid, file.c_str(), offset, &opts); },
      file + " disappeared while attaching");
}

}  // namespace rbt::runtime
