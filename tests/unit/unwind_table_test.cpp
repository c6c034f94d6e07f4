// The unwind table builder against binutils: every row readelf --debug-dump=frames-interp
// prints for Debian's libz, libc and libruby (built without frame pointers) must be the row
// build_unwind_table finds for that pc, and every pc past an FDE's range without another FDE
// must stop the walk. Plus the functions the mixed stack walks through, by name.

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <set>
#include <sstream>

#include "symbols/elf_file.h"
#include "unwind/unwind_table.h"

using namespace rbt::runtime;

namespace {

const char *kLibz = "/lib/x86_64-linux-gnu/libz.so.1";
const char *kLibc = "/lib/x86_64-linux-gnu/libc.so.6";
const char *kLibruby = "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1";

struct ReadelfRow {
  uint64_t pc;
  std::string expected;  // describe_row's spelling of readelf's row
};

struct Readelf {
  std::vector<ReadelfRow> rows;
  std::vector<std::pair<uint64_t, uint64_t>> fdes;  // [start, end)
};

std::string run(const std::string &cmd) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE *)> p(popen(cmd.c_str(), "r"), pclose);
  if (!p)
    return out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p.get())) > 0)
    out.append(buf, n);
  return out;
}

// readelf's columns, translated: CFA "rsp+8" stays, "exp" is the PLT rule or a stop, ra "u"
// is the outermost frame, rbp "u"/"s" (no rule / same value) unchanged, "c-16" saved.
std::string expected_row(const std::string &cfa, const std::string &rbp, const std::string &ra) {
  if (ra == "u")
    return "end";
  if (ra != "c-8")
    return "stop";
  if (cfa == "exp")
    return "exp";
  if (cfa.rfind("rsp", 0) != 0 && cfa.rfind("rbp", 0) != 0)
    return "stop";
  std::string r = rbp == "u" || rbp == "s" ? "u" : rbp[0] == 'c' ? rbp : "lost";
  return cfa + " rbp=" + r;
}

Readelf readelf(const std::string &path) {
  Readelf out;
  std::istringstream in(run("readelf --wide --debug-dump=frames-interp " + path + " 2>/dev/null"));
  std::string line;
  std::vector<std::string> columns;
  bool in_fde = false;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string s; words >> s;)
      w.push_back(s);
    if (w.size() >= 4 && w[3] == "FDE") {
      auto range = line.substr(line.find("pc=") + 3);
      auto dots = range.find("..");
      out.fdes.emplace_back(std::stoull(range.substr(0, dots), nullptr, 16),
                            std::stoull(range.substr(dots + 2), nullptr, 16));
      in_fde = true;
      columns.clear();
    } else if (w.size() >= 4 && w[3] == "CIE") {
      in_fde = false;
    } else if (in_fde && !w.empty() && w[0] == "LOC") {
      columns = w;
    } else if (in_fde && !columns.empty() && w.size() == columns.size()) {
      std::string cfa, rbp = "u", ra = "u";
      for (size_t i = 1; i < w.size(); i++) {
        if (columns[i] == "CFA") cfa = w[i];
        if (columns[i] == "rbp") rbp = w[i];
        if (columns[i] == "ra") ra = w[i];
      }
      out.rows.push_back({std::stoull(w[0], nullptr, 16), expected_row(cfa, rbp, ra)});
    }
  }
  return out;
}

UnwindTable table_or_die(const std::string &path) {
  auto t = build_unwind_table(path);
  if (!t) {
    ADD_FAILURE() << t.error().what << ": " << t.error().why;
    return {};
  }
  return std::move(t.value());
}

void agrees_with_readelf(const std::string &path) {
  UnwindTable table = table_or_die(path);
  Readelf re = readelf(path);
  ASSERT_GT(re.rows.size(), 100u) << "readelf printed no frames for " << path;
  size_t plt = 0, mismatches = 0;
  for (const auto &row : re.rows) {
    const rbt_unwind_row *mine = table.find(row.pc);
    ASSERT_NE(mine, nullptr) << std::hex << row.pc;
    std::string got = describe_row(*mine);
    if (row.expected == "exp") {
      plt += mine->cfa_kind == RBT_UNWIND_CFA_PLT;
      if (mine->cfa_kind != RBT_UNWIND_CFA_PLT && mine->cfa_kind != RBT_UNWIND_STOP)
        ADD_FAILURE() << path << " 0x" << std::hex << row.pc << ": expression, got " << got;
      continue;
    }
    if (got != row.expected && ++mismatches <= 10)
      ADD_FAILURE() << path << " 0x" << std::hex << row.pc << ": readelf " << row.expected
                    << ", rbt " << got;
  }
  EXPECT_EQ(mismatches, 0u);
  std::set<uint64_t> starts;
  for (auto &[s, e] : re.fdes)
    starts.insert(s);
  for (auto &[s, e] : re.fdes)
    if (!starts.count(e)) {
      const rbt_unwind_row *after = table.find(e);
      ASSERT_NE(after, nullptr);
      EXPECT_EQ(after->cfa_kind, RBT_UNWIND_STOP) << path << " past FDE 0x" << std::hex << s;
    }
  // Every one of these has a .plt whose CFA is the stub expression.
  EXPECT_GT(plt, 0u) << path;
}

// The row at `offset` bytes into the named function.
std::string row_in(const UnwindTable &table, const std::string &path, const std::string &func,
                   uint64_t offset) {
  auto elf = ElfFile::open(path);
  if (!elf)
    return "no elf";
  const ElfSymbol *sym = elf->find(func);
  if (!sym)
    return "no symbol " + func;
  const rbt_unwind_row *row = table.find(sym->value + offset);
  return row ? describe_row(*row) : "none";
}

}  // namespace

TEST(UnwindTable, agrees_with_readelf_on_libz) { agrees_with_readelf(kLibz); }
TEST(UnwindTable, agrees_with_readelf_on_libc) { agrees_with_readelf(kLibc); }
TEST(UnwindTable, agrees_with_readelf_on_libruby) { agrees_with_readelf(kLibruby); }

// rb_ary_each's prologue is push %r12; push %rbp; push %rbx (no frame pointer): the CFA moves
// with rsp and rbp is saved at CFA-24 from its third instruction on.
TEST(UnwindTable, rb_ary_each_without_frame_pointer) {
  UnwindTable t = table_or_die(kLibruby);
  EXPECT_EQ(row_in(t, kLibruby, "rb_ary_each", 0), "rsp+8 rbp=u");
  EXPECT_EQ(row_in(t, kLibruby, "rb_ary_each", 2), "rsp+16 rbp=u");
  EXPECT_EQ(row_in(t, kLibruby, "rb_ary_each", 3), "rsp+24 rbp=c-24");
}

// At a function's first instruction the return address is on top of the stack: CFA = rsp+8.
TEST(UnwindTable, entry_of_libc_and_libz_functions) {
  UnwindTable libc = table_or_die(kLibc), libz = table_or_die(kLibz);
  for (const char *f : {"read", "write", "malloc"})
    EXPECT_EQ(row_in(libc, kLibc, f, 0), "rsp+8 rbp=u") << f;
  for (const char *f : {"deflate", "crc32"})
    EXPECT_EQ(row_in(libz, kLibz, f, 0), "rsp+8 rbp=u") << f;
}

TEST(UnwindTable, missing_file_is_an_error) {
  auto t = build_unwind_table("/nonexistent/libfoo.so");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().what.find("/nonexistent/libfoo.so"), std::string::npos);
}

// Every row inside a function names the function's start (what a mixed stack records), and
// only gap rows name none: the rows of rb_ary_each, deflate and read all say where they begin.
TEST(UnwindTable, rows_name_their_function_start) {
  for (auto [path, func] : {std::pair{kLibruby, "rb_ary_each"}, {kLibz, "deflate"},
                            {kLibc, "read"}}) {
    UnwindTable t = table_or_die(path);
    auto elf = ElfFile::open(path);
    ASSERT_TRUE(elf.ok());
    const ElfSymbol *sym = elf->find(func);
    ASSERT_NE(sym, nullptr) << func;
    for (uint64_t off : {0, 1, 4, 16}) {
      const rbt_unwind_row *row = t.find(sym->value + off);
      ASSERT_NE(row, nullptr) << func << "+" << off;
      EXPECT_EQ(row->func, sym->value) << func << "+" << off;
    }
  }
  std::vector<uint64_t> starts = cfi_function_starts(kLibz);
  std::set<uint64_t> known(starts.begin(), starts.end());
  for (const rbt_unwind_row &row : table_or_die(kLibz).rows) {
    if (row.cfa_kind == RBT_UNWIND_STOP)
      continue;
    EXPECT_TRUE(known.count(row.func)) << std::hex << row.pc;
    EXPECT_LE(row.func, row.pc) << std::hex << row.pc;
  }
}

// The bucket index BPF consults before searching rows: each bucket names the row covering its
// first byte, so the row for any pc lies between its bucket's row and the next bucket's.
TEST(UnwindTable, buckets_name_the_row_covering_their_start) {
  auto table = build_unwind_table(kLibruby);
  ASSERT_TRUE(table) << table.error().why;
  const auto &rows = table->rows;
  UnwindTable::Buckets b = table->buckets();
  ASSERT_EQ(b.base, rows.front().pc >> RBT_UNWIND_BUCKET_SHIFT);
  ASSERT_EQ(b.first_row.size(),
            (rows.back().pc >> RBT_UNWIND_BUCKET_SHIFT) - b.base + 1);
  for (size_t i = 0; i < b.first_row.size(); i++) {
    uint64_t start = (b.base + i) << RBT_UNWIND_BUCKET_SHIFT;
    const rbt_unwind_row *covering = table->find(start);
    uint32_t expected = covering ? static_cast<uint32_t>(covering - rows.data()) : 0;
    ASSERT_EQ(b.first_row[i], expected) << "bucket " << i;
  }
  // Every row's pc falls between its bucket's row and the next bucket's.
  for (size_t r = 0; r < rows.size(); r++) {
    size_t k = (rows[r].pc >> RBT_UNWIND_BUCKET_SHIFT) - b.base;
    ASSERT_LE(b.first_row[k], r);
    if (k + 1 < b.first_row.size()) {
      ASSERT_GE(b.first_row[k + 1], r);
    }
  }
}
