#include "elf_file.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include "regular_file.h"
#include "zip_entry.h"

namespace rbt::runtime {

namespace {

// libelf refuses to work until the caller states the ELF version it was written for.
bool init_libelf() {
  static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
  return ok;
}

std::optional<SymbolType> symbol_type(unsigned char info) {
  switch (GELF_ST_TYPE(info)) {
  case STT_FUNC: return SymbolType::Func;
  case STT_GNU_IFUNC: return SymbolType::Ifunc;
  case STT_OBJECT: return SymbolType::Object;
  default: return std::nullopt;
  }
}

SymbolBinding symbol_binding(unsigned char info) {
  switch (GELF_ST_BIND(info)) {
  case STB_LOCAL: return SymbolBinding::Local;
  case STB_WEAK: return SymbolBinding::Weak;
  default: return SymbolBinding::Global;
  }
}

std::string hex(const unsigned char *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; i++) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 0xf];
  }
  return s;
}

}  // namespace

bool is_elf_file(const std::string &path) {
  int fd = open_regular_file(path);
  if (fd < 0)
    return false;
  char magic[SELFMAG];
  bool elf = read(fd, magic, SELFMAG) == SELFMAG && memcmp(magic, ELFMAG, SELFMAG) == 0;
  close(fd);
  return elf;
}

bool is_flat_binary(const std::string &path) {
  int fd = open_regular_file(path);
  if (fd < 0)
    return false;
  char magic[4] = {};
  ssize_t n = read(fd, magic, sizeof(magic));
  close(fd);
  return n >= 0 && !(n == 4 && memcmp(magic, "\x7f" "ELF", 4) == 0);
}

Result<ElfFile> ElfFile::open(const std::string &path) {
  if (!init_libelf())
    return make_error("reading " + path, elf_errmsg(-1));
  ElfFile f;
  f.path_ = f.file_path_ = path;
  f.fd_ = open_regular_file(path);
  if (f.fd_ < 0) {
    int err = errno;
    if (err == ENOENT && split_archive_path(path))
      return open_in_archive(path);
    return make_error("reading " + path,
                      err == EINVAL ? "not a regular file (a FIFO, device or socket)"
                                    : strerror(err),
                      {}, err);
  }
  f.elf_ = elf_begin(f.fd_, ELF_C_READ_MMAP, nullptr);
  if (!f.elf_ || elf_kind(f.elf_) != ELF_K_ELF)
    return make_error("reading " + path, "not an ELF file", "give a binary or a shared library");
  if (auto s = f.load(); !s)
    return s.error();
  return f;
}

Result<ElfFile> ElfFile::open_in_archive(const std::string &path) {
  auto name = split_archive_path(path);
  auto entry = find_zip_entry(name->archive, name->entry);
  if (!entry)
    return entry.error();
  ElfFile f;
  f.path_ = path;
  f.file_path_ = name->archive;
  f.base_offset_ = entry->data_offset;
  int fd = open_regular_file(name->archive);
  if (fd < 0)
    return make_error("reading " + name->archive, strerror(errno), {}, errno);
  f.image_.resize(entry->size);
  ssize_t n = pread(fd, f.image_.data(), entry->size, static_cast<off_t>(entry->data_offset));
  close(fd);
  if (n != static_cast<ssize_t>(entry->size))
    return make_error("reading " + path, "short read from the archive");
  f.elf_ = elf_memory(f.image_.data(), f.image_.size());
  if (!f.elf_ || elf_kind(f.elf_) != ELF_K_ELF)
    return make_error("reading " + path, "not an ELF file",
                      "the archive entry must be a binary or a shared library");
  if (auto s = f.load(); !s)
    return s.error();
  return f;
}

ElfFile::ElfFile(ElfFile &&o) noexcept { *this = std::move(o); }

ElfFile &ElfFile::operator=(ElfFile &&o) noexcept {
  if (this != &o) {
    this->~ElfFile();
    path_ = std::move(o.path_);
    file_path_ = std::move(o.file_path_);
    base_offset_ = o.base_offset_;
    image_ = std::move(o.image_);
    fd_ = std::exchange(o.fd_, -1);
    elf_ = std::exchange(o.elf_, nullptr);
    is64_ = o.is64_;
    position_independent_ = o.position_independent_;
    symbols_ = std::move(o.symbols_);
    segments_ = std::move(o.segments_);
    build_id_ = std::move(o.build_id_);
  }
  return *this;
}

ElfFile::~ElfFile() {
  if (elf_)
    elf_end(elf_);
  if (fd_ >= 0)
    close(fd_);
  elf_ = nullptr;
  fd_ = -1;
}

Status ElfFile::load() {
  is64_ = gelf_getclass(elf_) == ELFCLASS64;
  GElf_Ehdr ehdr;
  position_independent_ = gelf_getehdr(elf_, &ehdr) && ehdr.e_type == ET_DYN;

  size_t nphdr = 0;
  if (elf_getphdrnum(elf_, &nphdr) != 0)
    return make_error("reading " + path_, elf_errmsg(-1));
  for (size_t i = 0; i < nphdr; i++) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf_, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD)
      continue;
    segments_.push_back({ph.p_vaddr, ph.p_memsz, base_offset_ + ph.p_offset, ph.p_filesz,
                         (ph.p_flags & PF_X) != 0});
  }

  // .symtab is a superset of .dynsym when present, but stripped libraries have only .dynsym;
  // reading both and deduplicating on (name, value) serves either case.
  std::set<std::pair<std::string, uint64_t>> seen;
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf_, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      continue;
    if (sh.sh_type == SHT_NOTE && build_id_.empty()) {
      Elf_Data *data = elf_getdata(scn, nullptr);
      size_t off = 0, name_off, desc_off;
      GElf_Nhdr nh;
      while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        auto *base = static_cast<const char *>(data->d_buf);
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp(base + name_off, "GNU", 4) == 0)
          build_id_ = hex(reinterpret_cast<const unsigned char *>(base + desc_off), nh.n_descsz);
      }
      continue;
    }
    if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data || sh.sh_entsize == 0)
      continue;
    size_t count = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < count; i++) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF ||
          sym.st_value == 0)
        continue;
      auto type = symbol_type(sym.st_info);
      const char *name = elf_strptr(elf_, sh.sh_link, sym.st_name);
      if (!type || !name || !*name)
        continue;
      if (!seen.emplace(name, sym.st_value).second)
        continue;
      symbols_.push_back({name, sym.st_value, sym.st_size, *type, symbol_binding(sym.st_info)});
    }
  }
  std::sort(symbols_.begin(), symbols_.end(), [](const ElfSymbol &a, const ElfSymbol &b) {
    return a.value != b.value ? a.value < b.value : a.name < b.name;
  });
  return Ok{};
}

const ElfSymbol *ElfFile::find(const std::string &name) const {
  const ElfSymbol *other = nullptr;
  for (auto &s : symbols_) {
    if (s.name != name)
      continue;
    if (s.type == SymbolType::Func)
      return &s;
    if (!other)
      other = &s;
  }
  return other;
}

std::vector<const ElfSymbol *> ElfFile::match(const std::string &glob) const {
  std::vector<const ElfSymbol *> out;
  std::set<std::string_view> names;
  for (auto &s : symbols_)
    if (s.type == SymbolType::Func && fnmatch(glob.c_str(), s.name.c_str(), 0) == 0 &&
        names.insert(s.name).second)
      out.push_back(&s);
  std::sort(out.begin(), out.end(),
            [](const ElfSymbol *a, const ElfSymbol *b) { return a->name < b->name; });
  return out;
}

std::optional<std::string> ElfFile::symbolize(uint64_t vaddr) const {
  const ElfSymbol *s = symbol_at(vaddr);
  if (!s)
    return std::nullopt;
  return s->name + "+" + std::to_string(vaddr - s->value);
}

const ElfSymbol *ElfFile::symbol_at(uint64_t vaddr) const {
  // Walk back from the last symbol starting at or before vaddr: a small symbol (a local label)
  // may start between a function's start and vaddr. Give up 1 MiB back; no function is larger.
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](uint64_t v, const ElfSymbol &s) { return v < s.value; });
  while (it != symbols_.begin()) {
    --it;
    if (vaddr < it->value + std::max<uint64_t>(it->size, 1))
      return &*it;
    if (vaddr - it->value > (1u << 20))
      break;
  }
  return nullptr;
}

const LoadSegment *ElfFile::segment_of(uint64_t vaddr) const {
  for (auto &seg : segments_)
    if (vaddr >= seg.vaddr && vaddr < seg.vaddr + seg.memsz)
      return &seg;
  return nullptr;
}

std::optional<uint64_t> ElfFile::vaddr_to_offset(uint64_t vaddr) const {
  const LoadSegment *seg = segment_of(vaddr);
  if (!seg || vaddr - seg->vaddr >= seg->filesz)
    return std::nullopt;  // in .bss: no file bytes to probe
  return vaddr - seg->vaddr + seg->offset;
}

std::optional<uint64_t> ElfFile::offset_to_vaddr(uint64_t offset) const {
  for (auto &seg : segments_)
    if (offset >= seg.offset && offset < seg.offset + seg.filesz)
      return offset - seg.offset + seg.vaddr;
  return std::nullopt;
}

}  // namespace rbt::runtime
