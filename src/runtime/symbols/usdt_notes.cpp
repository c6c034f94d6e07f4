#include "usdt_notes.h"

#include <gelf.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

namespace rbt::runtime {

namespace {

constexpr uint32_t kNtStapsdt = 3;

uint64_t read_addr(const char *p, bool is64) {
  if (is64) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
  }
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

int count_args(const std::string &spec) {
  std::istringstream ss(spec);
  std::string arg;
  int n = 0;
  while (ss >> arg)
    n++;
  return n;
}

}  // namespace

Result<std::vector<UsdtNote>> read_usdt_notes(const ElfFile &elf) {
  std::vector<UsdtNote> notes;
  Elf *e = elf.handle();
  size_t shstrndx;
  if (elf_getshdrstrndx(e, &shstrndx) != 0)
    return make_error("reading " + elf.path(), elf_errmsg(-1));

  // sdt.h records the link-time address of .stapsdt.base in every note; if the file was
  // prelinked since, the difference to the section's current address shifts pc and semaphore.
  Elf_Scn *note_scn = nullptr;
  uint64_t base_addr = 0;
  bool have_base = false;
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(e, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      continue;
    const char *name = elf_strptr(e, shstrndx, sh.sh_name);
    if (!name)
      continue;
    if (sh.sh_type == SHT_NOTE && strcmp(name, ".note.stapsdt") == 0)
      note_scn = scn;
    else if (strcmp(name, ".stapsdt.base") == 0) {
      base_addr = sh.sh_addr;
      have_base = true;
    }
  }
  if (!note_scn)
    return notes;

  Elf_Data *data = elf_getdata(note_scn, nullptr);
  const size_t addr_size = elf.is_64bit() ? 8 : 4;
  size_t off = 0, name_off, desc_off;
  GElf_Nhdr nh;
  while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
    const char *buf = static_cast<const char *>(data->d_buf);
    if (nh.n_type != kNtStapsdt || nh.n_namesz != 8 || memcmp(buf + name_off, "stapsdt", 8) != 0 ||
        nh.n_descsz < 3 * addr_size)
      continue;
    const char *desc = buf + desc_off;
    const char *end = desc + nh.n_descsz;
    UsdtNote n;
    n.pc = read_addr(desc, elf.is_64bit());
    n.base = read_addr(desc + addr_size, elf.is_64bit());
    n.semaphore = read_addr(desc + 2 * addr_size, elf.is_64bit());
    // Three NUL-terminated strings follow: provider, name, arguments.
    const char *p = desc + 3 * addr_size;
    std::string *fields[] = {&n.provider, &n.name, &n.args};
    for (std::string *f : fields) {
      const char *nul = static_cast<const char *>(memchr(p, '\0', end - p));
      if (!nul)
        break;
      f->assign(p, nul);
      p = nul + 1;
    }
    if (n.provider.empty() || n.name.empty())
      continue;
    if (have_base && n.base != 0) {
      uint64_t delta = base_addr - n.base;
      n.pc += delta;
      if (n.semaphore)
        n.semaphore += delta;
    }
    n.arg_count = count_args(n.args);
    notes.push_back(std::move(n));
  }
  return notes;
}

std::vector<UsdtNote> unique_usdt_probes(const std::vector<UsdtNote> &notes) {
  std::vector<UsdtNote> out;
  std::set<std::string> seen;
  for (auto &n : notes)
    if (seen.insert(n.full_name()).second)
      out.push_back(n);
  std::sort(out.begin(), out.end(), [](const UsdtNote &a, const UsdtNote &b) {
    return a.provider != b.provider ? a.provider < b.provider : a.name < b.name;
  });
  return out;
}

}  // namespace rbt::runtime
