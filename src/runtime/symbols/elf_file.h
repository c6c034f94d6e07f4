#pragma once
// An ELF file's symbols and loadable segments, read once with libelf. Uprobes attach by file
// offset, user stacks arrive as addresses, and wildcards need every function name: all three
// come from here so attach and listing code never touch libelf directly.

#include <libelf.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "result.h"

namespace rbt::runtime {

enum class SymbolType : uint8_t { Func, Ifunc, Object };
enum class SymbolBinding : uint8_t { Local, Global, Weak };

struct ElfSymbol {
  std::string name;
  uint64_t value = 0;  // virtual address as linked (before any load bias)
  uint64_t size = 0;
  SymbolType type = SymbolType::Func;
  SymbolBinding binding = SymbolBinding::Global;
};

struct LoadSegment {
  uint64_t vaddr = 0, memsz = 0;
  uint64_t offset = 0, filesz = 0;
  bool executable = false;
};

// A readable regular file that is not ELF: a flat binary (code mapped and run as it is), where
// a uprobe's address is its offset in the file, as bpftrace takes it.
bool is_flat_binary(const std::string &path);

class ElfFile {
public:
  // Reads the symbol tables (.symtab and .dynsym, deduplicated) and the PT_LOAD segments.
  // `ARCHIVE!/ENTRY` (no file of that name existing) is a stored entry of a zip archive.
  static Result<ElfFile> open(const std::string &path);

  ElfFile(ElfFile &&other) noexcept;
  ElfFile &operator=(ElfFile &&other) noexcept;
  ElfFile(const ElfFile &) = delete;
  ElfFile &operator=(const ElfFile &) = delete;
  ~ElfFile();

  // The name it was opened by (for messages and probe names).
  const std::string &path() const { return path_; }
  // The file holding the ELF's bytes: path() itself, or the archive of an `ARCHIVE!/ENTRY`.
  // Segment offsets, and so vaddr_to_offset/offset_to_vaddr, are offsets in this file, which
  // is what a uprobe attaches to and what /proc/PID/maps shows for a library mapped from a zip.
  const std::string &file_path() const { return file_path_; }
  // The open libelf handle, for other readers in symbols/ (USDT notes); owned by this object.
  Elf *handle() const { return elf_; }
  bool is_64bit() const { return is64_; }
  // ET_DYN (a PIE or a library): loaded at a bias, so its symbols' run-time addresses are
  // their values plus that bias.
  bool position_independent() const { return position_independent_; }

  const std::vector<ElfSymbol> &symbols() const { return symbols_; }
  const std::vector<LoadSegment> &segments() const { return segments_; }
  // Hex of NT_GNU_BUILD_ID, or empty when the file has none.
  const std::string &build_id() const { return build_id_; }

  // The first function or object named `name` (functions preferred), or null.
  const ElfSymbol *find(const std::string &name) const;
  // Function symbols whose names match the fnmatch(3) glob, one per name, sorted by name.
  std::vector<const ElfSymbol *> match(const std::string &glob) const;
  // "sym+off" (decimal offset, as bpftrace prints frames) for a virtual address inside a
  // sized symbol, or nullopt when no symbol covers it.
  std::optional<std::string> symbolize(uint64_t vaddr) const;
  // The sized symbol covering vaddr (as symbolize finds it), or null.
  const ElfSymbol *symbol_at(uint64_t vaddr) const;

  // Virtual address ↔ file offset through the PT_LOAD segment containing it.
  std::optional<uint64_t> vaddr_to_offset(uint64_t vaddr) const;
  std::optional<uint64_t> offset_to_vaddr(uint64_t offset) const;
  // The loadable segment containing vaddr, or null.
  const LoadSegment *segment_of(uint64_t vaddr) const;

private:
  ElfFile() = default;
  Status load();
  static Result<ElfFile> open_in_archive(const std::string &path);

  std::string path_;
  std::string file_path_;
  uint64_t base_offset_ = 0;  // where the ELF starts in file_path_
  std::vector<char> image_;   // an archive entry's bytes, which elf_ reads from memory
  int fd_ = -1;
  Elf *elf_ = nullptr;
  bool is64_ = true;
  bool position_independent_ = false;
  std::vector<ElfSymbol> symbols_;        // sorted by (value, name)
  std::vector<LoadSegment> segments_;
  std::string build_id_;
};

// True when the file starts with the ELF magic (skips linker scripts such as libc.so).
bool is_elf_file(const std::string &path);

}  // namespace rbt::runtime
