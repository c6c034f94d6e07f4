#include "unwind_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>

#include "symbols/regular_file.h"

namespace rbt::runtime {

namespace {

// DWARF register numbers on x86_64 (System V psABI, figure 3.36).
constexpr unsigned kRegRbp = 6, kRegRsp = 7, kRegRa = 16;

// Closes what build_unwind_table opened, whichever way it returns.
struct OpenElf {
  int fd = -1;
  Elf *elf = nullptr;
  Dwarf_CFI *cfi = nullptr;
  ~OpenElf() {
    if (cfi)
      dwarf_cfi_end(cfi);
    if (elf)
      elf_end(elf);
    if (fd >= 0)
      close(fd);
  }
};

// One pointer of .eh_frame_hdr, in the encodings linkers use there (DW_EH_PE_*: absptr,
// udata4, sdata4, sdata8, pc- or datarel-relative). `here` is the field's own address,
// `base` the section's (datarel).
std::optional<uint64_t> read_encoded(const uint8_t *&p, const uint8_t *end, uint8_t enc,
                                     uint64_t here, uint64_t base) {
  int64_t v = 0;
  switch (enc & 0x0f) {
  case DW_EH_PE_absptr:
  case DW_EH_PE_udata8:
  case DW_EH_PE_sdata8: {
    if (end - p < 8)
      return std::nullopt;
    memcpy(&v, p, 8);
    p += 8;
    break;
  }
  case DW_EH_PE_udata4: {
    uint32_t u;
    if (end - p < 4)
      return std::nullopt;
    memcpy(&u, p, 4);
    v = u;
    p += 4;
    break;
  }
  case DW_EH_PE_sdata4: {
    int32_t s;
    if (end - p < 4)
      return std::nullopt;
    memcpy(&s, p, 4);
    v = s;
    p += 4;
    break;
  }
  default: return std::nullopt;
  }
  switch (enc & 0x70) {
  case 0: return uint64_t(v);
  case DW_EH_PE_pcrel: return here + uint64_t(v);
  case DW_EH_PE_datarel: return base + uint64_t(v);
  default: return std::nullopt;
  }
}

// The initial pcs of every FDE, from .eh_frame_hdr's sorted search table.
Result<std::vector<uint64_t>> fde_starts(Elf *elf) {
  size_t shstrndx;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0)
    return make_error("", "no section name table");
  for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      continue;
    const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name || strcmp(name, ".eh_frame_hdr") != 0)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data || data->d_size < 4)
      break;
    auto *start = static_cast<const uint8_t *>(data->d_buf);
    const uint8_t *p = start + 4, *end = start + data->d_size;
    uint8_t version = start[0], ptr_enc = start[1], count_enc = start[2], table_enc = start[3];
    if (version != 1 || table_enc == DW_EH_PE_omit)
      return make_error("", ".eh_frame_hdr has no search table");
    auto here = [&] { return sh.sh_addr + uint64_t(p - start); };
    if (!read_encoded(p, end, ptr_enc, here(), sh.sh_addr))
      return make_error("", "unsupported .eh_frame_hdr encoding");
    auto count = read_encoded(p, end, count_enc, here(), sh.sh_addr);
    if (!count)
      return make_error("", "unsupported .eh_frame_hdr encoding");
    std::vector<uint64_t> starts;
    for (uint64_t i = 0; i < *count; i++) {
      auto pc = read_encoded(p, end, table_enc, here(), sh.sh_addr);
      auto fde = read_encoded(p, end, table_enc, here(), sh.sh_addr);
      if (!pc || !fde)
        return make_error("", "truncated .eh_frame_hdr table");
      starts.push_back(*pc);
    }
    std::sort(starts.begin(), starts.end());
    return starts;
  }
  return make_error("", "no .eh_frame_hdr section (no unwind information)");
}

// The one CFA expression linkers emit for .plt stubs:
//   breg7(rsp) N; breg16(rip) 0; lit15; and; litK; ge; lit3; shl; plus
// i.e. rsp + N, plus 8 once (rip & 15) >= K.
bool plt_rule(const Dwarf_Op *ops, size_t n, rbt_unwind_row &row) {
  if (n != 9 || ops[0].atom != DW_OP_breg7 || ops[1].atom != DW_OP_breg16 ||
      ops[1].number != 0 || ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and ||
      ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15 || ops[5].atom != DW_OP_ge ||
      ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
    return false;
  row.cfa_kind = RBT_UNWIND_CFA_PLT;
  row.cfa_off = int32_t(int64_t(ops[0].number));
  row.rbp_off = int16_t(ops[4].atom - DW_OP_lit0);
  return true;
}

// CFA = register + offset; libdw spells it as one breg op.
bool cfa_rule(Dwarf_Frame *frame, rbt_unwind_row &row) {
  Dwarf_Op *ops = nullptr;
  size_t n = 0;
  if (dwarf_frame_cfa(frame, &ops, &n) != 0 || n == 0)
    return false;
  if (n > 1)
    return plt_rule(ops, n, row);
  unsigned reg;
  int64_t off;
  if (ops[0].atom == DW_OP_bregx) {
    reg = unsigned(ops[0].number);
    off = int64_t(ops[0].number2);
  } else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
    reg = ops[0].atom - DW_OP_breg0;
    off = int64_t(ops[0].number);
  } else {
    return false;
  }
  if (off < std::numeric_limits<int32_t>::min() || off > std::numeric_limits<int32_t>::max())
    return false;
  if (reg == kRegRsp)
    row.cfa_kind = RBT_UNWIND_CFA_RSP;
  else if (reg == kRegRbp)
    row.cfa_kind = RBT_UNWIND_CFA_RBP;
  else
    return false;
  row.cfa_off = int32_t(off);
  return true;
}

enum class SavedAt { Same, Undefined, Cfa, Other };

// Where the caller's `reg` is: unchanged, undefined, at CFA+offset (*off), or something else.
SavedAt register_rule(Dwarf_Frame *frame, int reg, int64_t *off) {
  Dwarf_Op mem[3], *ops = nullptr;
  size_t n = 0;
  if (dwarf_frame_register(frame, reg, mem, &ops, &n) != 0)
    return SavedAt::Other;
  if (n == 0)
    return ops == nullptr ? SavedAt::Same : SavedAt::Undefined;
  if (ops[0].atom != DW_OP_call_frame_cfa)
    return SavedAt::Other;
  if (n == 1) {
    *off = 0;
    return SavedAt::Cfa;
  }
  if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
    *off = int64_t(ops[1].number);
    return SavedAt::Cfa;
  }
  return SavedAt::Other;
}

rbt_unwind_row translate(Dwarf_Frame *frame, uint32_t pc) {
  rbt_unwind_row row{};
  row.pc = pc;
  int64_t off = 0;
  SavedAt ra = register_rule(frame, kRegRa, &off);
  if (ra == SavedAt::Undefined) {
    row.cfa_kind = RBT_UNWIND_END;
    return row;
  }
  if (ra != SavedAt::Cfa || off != -8 || !cfa_rule(frame, row)) {
    row = rbt_unwind_row{};
    row.pc = pc;  // RBT_UNWIND_STOP
    return row;
  }
  if (row.cfa_kind == RBT_UNWIND_CFA_PLT)
    return row;  // stubs save nothing; rbp_off holds the stub's threshold
  switch (register_rule(frame, int(kRegRbp), &off)) {
  case SavedAt::Same: row.rbp_kind = RBT_UNWIND_RBP_SAME; break;
  case SavedAt::Cfa:
    if (off >= std::numeric_limits<int16_t>::min() && off <= std::numeric_limits<int16_t>::max()) {
      row.rbp_kind = RBT_UNWIND_RBP_SAVED;
      row.rbp_off = int16_t(off);
    } else {
      row.rbp_kind = RBT_UNWIND_RBP_LOST;
    }
    break;
  default: row.rbp_kind = RBT_UNWIND_RBP_LOST; break;
  }
  return row;
}

// Rows merge only within one function: each row names its function's start.
bool same_rule(const rbt_unwind_row &a, const rbt_unwind_row &b) {
  return a.cfa_kind == b.cfa_kind && a.cfa_off == b.cfa_off && a.rbp_kind == b.rbp_kind &&
         a.rbp_off == b.rbp_off && a.func == b.func;
}

}  // namespace

const rbt_unwind_row *UnwindTable::find(uint64_t vaddr) const {
  auto it = std::upper_bound(rows.begin(), rows.end(), vaddr,
                             [](uint64_t pc, const rbt_unwind_row &r) { return pc < r.pc; });
  return it == rows.begin() ? nullptr : &*(it - 1);
}

UnwindTable::Buckets UnwindTable::buckets() const {
  Buckets b;
  if (rows.empty())
    return b;
  b.base = rows.front().pc >> RBT_UNWIND_BUCKET_SHIFT;
  uint32_t last = rows.back().pc >> RBT_UNWIND_BUCKET_SHIFT;
  b.first_row.reserve(last - b.base + 1);
  size_t row = 0;  // the last row whose pc <= the bucket's start, walking both in order
  for (uint64_t k = b.base; k <= last; k++) {
    uint64_t start = k << RBT_UNWIND_BUCKET_SHIFT;
    while (row + 1 < rows.size() && rows[row + 1].pc <= start)
      row++;
    b.first_row.push_back(static_cast<uint32_t>(row));
  }
  return b;
}

Result<UnwindTable> build_unwind_table(const std::string &path) {
  auto fail = [&](const std::string &why) {
    return make_error("reading unwind information of " + path, why);
  };
  if (elf_version(EV_CURRENT) == EV_NONE)
    return fail("libelf is unusable");
  OpenElf f;
  f.fd = open_regular_file(path);
  if (f.fd < 0)
    return make_error("reading unwind information of " + path, strerror(errno), {}, errno);
  f.elf = elf_begin(f.fd, ELF_C_READ_MMAP, nullptr);
  if (!f.elf || elf_kind(f.elf) != ELF_K_ELF)
    return fail("not an ELF file");
  auto starts = fde_starts(f.elf);
  if (!starts)
    return fail(starts.error().why);
  f.cfi = dwarf_getcfi_elf(f.elf);
  if (!f.cfi)
    return fail(std::string("no .eh_frame: ") + dwarf_errmsg(-1));

  UnwindTable table;
  auto push = [&](const rbt_unwind_row &row) {
    if (!table.rows.empty() && table.rows.back().pc == row.pc)
      table.rows.back() = row;
    else if (table.rows.empty() || !same_rule(table.rows.back(), row))
      table.rows.push_back(row);
  };
  const uint64_t limit = std::numeric_limits<uint32_t>::max();
  for (size_t i = 0; i < starts->size(); i++) {
    uint64_t pc = (*starts)[i];
    uint64_t next = i + 1 < starts->size() ? (*starts)[i + 1] : limit;
    if (pc >= limit)
      return fail("code above 4 GiB is not supported");
    while (pc < next) {
      Dwarf_Frame *frame = nullptr;
      if (dwarf_cfi_addrframe(f.cfi, pc, &frame) != 0)
        break;
      Dwarf_Addr start = 0, end = 0;
      bool signal = false;
      dwarf_frame_info(frame, &start, &end, &signal);
      rbt_unwind_row row = translate(frame, uint32_t(pc));
      row.func = uint32_t((*starts)[i]);  // the FDE's first pc: where its function begins
      push(row);
      free(frame);
      if (end <= pc)
        break;
      pc = std::min<uint64_t>(end, limit);
    }
    if (pc < next)
      push(rbt_unwind_row{uint32_t(pc), 0, 0, RBT_UNWIND_STOP, 0, 0});  // a gap without CFI
  }
  return table;
}

std::vector<uint64_t> cfi_function_starts(const std::string &path) {
  if (elf_version(EV_CURRENT) == EV_NONE)
    return {};
  OpenElf f;
  f.fd = open_regular_file(path);
  if (f.fd < 0)
    return {};
  f.elf = elf_begin(f.fd, ELF_C_READ_MMAP, nullptr);
  if (!f.elf || elf_kind(f.elf) != ELF_K_ELF)
    return {};
  auto starts = fde_starts(f.elf);
  return starts ? std::move(*starts) : std::vector<uint64_t>{};
}

std::string describe_row(const rbt_unwind_row &row) {
  auto off = [](int64_t v) { return (v < 0 ? "-" : "+") + std::to_string(v < 0 ? -v : v); };
  switch (row.cfa_kind) {
  case RBT_UNWIND_STOP: return "stop";
  case RBT_UNWIND_END: return "end";
  case RBT_UNWIND_CFA_PLT:
    return "plt rsp" + off(row.cfa_off) + " (+8 from pc&15>=" + std::to_string(row.rbp_off) + ")";
  default: break;
  }
  std::string s = (row.cfa_kind == RBT_UNWIND_CFA_RSP ? "rsp" : "rbp") + off(row.cfa_off);
  switch (row.rbp_kind) {
  case RBT_UNWIND_RBP_SAME: return s + " rbp=u";
  case RBT_UNWIND_RBP_SAVED: return s + " rbp=c" + off(row.rbp_off);
  default: return s + " rbp=lost";
  }
}

}  // namespace rbt::runtime
