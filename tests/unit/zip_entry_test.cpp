// Zip entries found in hand-built archives (and the in-tree usdt_demo read from one): one stored and one "deflated" entry (the bytes are
// never inflated, so any bytes will do), an archive comment, and files that are not zips.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "symbols/elf_file.h"
#include "symbols/zip_entry.h"

using namespace rbt::runtime;

namespace {

void put16(std::string &s, uint16_t v) {
  s += static_cast<char>(v & 0xff);
  s += static_cast<char>(v >> 8);
}
void put32(std::string &s, uint32_t v) {
  put16(s, static_cast<uint16_t>(v & 0xffff));
  put16(s, static_cast<uint16_t>(v >> 16));
}

struct Member {
  std::string name, data, local_extra;
  uint16_t method = 0;
};

// A minimal zip (no CRCs: nothing here checks them). The local header's extra field differs
// from the central directory's (empty), as zipalign's padding does.
std::string make_zip(const std::vector<Member> &members, const std::string &comment = {}) {
  std::string out, dir;
  for (auto &m : members) {
    uint32_t local = static_cast<uint32_t>(out.size());
    put32(out, 0x04034b50);
    put16(out, 20); put16(out, 0); put16(out, m.method); put32(out, 0); put32(out, 0);
    put32(out, static_cast<uint32_t>(m.data.size())); put32(out, static_cast<uint32_t>(m.data.size()));
    put16(out, static_cast<uint16_t>(m.name.size()));
    put16(out, static_cast<uint16_t>(m.local_extra.size()));
    out += m.name + m.local_extra + m.data;
    put32(dir, 0x02014b50);
    put16(dir, 20); put16(dir, 20); put16(dir, 0); put16(dir, m.method); put32(dir, 0); put32(dir, 0);
    put32(dir, static_cast<uint32_t>(m.data.size())); put32(dir, static_cast<uint32_t>(m.data.size()));
    put16(dir, static_cast<uint16_t>(m.name.size())); put16(dir, 0); put16(dir, 0);
    put16(dir, 0); put16(dir, 0); put32(dir, 0); put32(dir, local);
    dir += m.name;
  }
  uint32_t dir_offset = static_cast<uint32_t>(out.size());
  out += dir;
  put32(out, 0x06054b50);
  put16(out, 0); put16(out, 0);
  put16(out, static_cast<uint16_t>(members.size())); put16(out, static_cast<uint16_t>(members.size()));
  put32(out, static_cast<uint32_t>(dir.size())); put32(out, dir_offset);
  put16(out, static_cast<uint16_t>(comment.size()));
  return out + comment;
}

class TempFile {
public:
  explicit TempFile(const std::string &contents) {
    char name[] = "/tmp/rbt-zip-test-XXXXXX";
    int fd = mkstemp(name);
    close(fd);
    path_ = name;
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

}  // namespace

TEST(ZipEntry, splits_archive_and_entry_at_the_first_bang_slash) {
  auto p = split_archive_path("./a.zip!/lib/x86/libx.so");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->archive, "./a.zip");
  EXPECT_EQ(p->entry, "lib/x86/libx.so");
  EXPECT_FALSE(split_archive_path("/usr/bin/true"));
  EXPECT_FALSE(split_archive_path("!/x"));
}

TEST(ZipEntry, finds_a_stored_entry_past_the_local_headers_own_extra_field) {
  std::string zip = make_zip({{"readme", "hello", ""}, {"lib/libx.so", "ELFBYTES", "padpad"}},
                             "an archive comment");
  TempFile f(zip);
  auto e = find_zip_entry(f.path(), "lib/libx.so");
  ASSERT_TRUE(e) << e.error().why;
  EXPECT_EQ(e->size, 8u);
  EXPECT_EQ(zip.substr(e->data_offset, e->size), "ELFBYTES");
  auto first = find_zip_entry(f.path(), "readme");
  ASSERT_TRUE(first);
  EXPECT_EQ(zip.substr(first->data_offset, first->size), "hello");
}

TEST(ZipEntry, a_missing_entry_is_named) {
  TempFile f(make_zip({{"a", "x", ""}}));
  auto e = find_zip_entry(f.path(), "b");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().why.find("no entry 'b'"), std::string::npos) << e.error().why;
}

TEST(ZipEntry, a_compressed_entry_is_refused_with_its_method) {
  Member m{"libz.so", "deflated?", ""};
  m.method = 8;
  TempFile f(make_zip({m}));
  auto e = find_zip_entry(f.path(), "libz.so");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().why.find("'libz.so' is compressed (deflate)"), std::string::npos)
      << e.error().why;
}

TEST(ZipEntry, a_file_that_is_not_a_zip_says_so) {
  TempFile elf(std::string("\x7f" "ELF", 4) + std::string(100, '\0'));
  auto e = find_zip_entry(elf.path(), "x");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().why.find("not a zip archive"), std::string::npos) << e.error().why;
  TempFile tiny("PK");
  EXPECT_FALSE(find_zip_entry(tiny.path(), "x"));
  // A damaged directory offset must not read past the file.
  std::string zip = make_zip({{"a", "x", ""}});
  zip[zip.size() - 6] = '\x7f';
  TempFile bad(zip);
  EXPECT_FALSE(find_zip_entry(bad.path(), "a"));
}

// An ELF read from inside an archive has the plain file's symbols, and its offsets are offsets
// in the archive: where the kernel's uprobe on the archive must go.
TEST(ZipEntry, an_elf_in_an_archive_has_offsets_in_the_archive) {
  std::ifstream in(RBT_USDT_DEMO, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  TempFile zip(make_zip({{"notes.txt", "x", ""}, {"bin/usdt_demo", bytes.str(), "pad"}}));
  auto entry = find_zip_entry(zip.path(), "bin/usdt_demo");
  ASSERT_TRUE(entry);
  auto plain = ElfFile::open(RBT_USDT_DEMO);
  auto inner = ElfFile::open(zip.path() + "!/bin/usdt_demo");
  ASSERT_TRUE(plain);
  ASSERT_TRUE(inner) << inner.error().what << ": " << inner.error().why;
  EXPECT_EQ(inner->path(), zip.path() + "!/bin/usdt_demo");
  EXPECT_EQ(inner->file_path(), zip.path());
  const ElfSymbol *sym = inner->find("rbt_work");
  ASSERT_NE(sym, nullptr);
  EXPECT_EQ(sym->value, plain->find("rbt_work")->value);
  auto off = inner->vaddr_to_offset(sym->value);
  ASSERT_TRUE(off);
  EXPECT_EQ(*off, entry->data_offset + *plain->vaddr_to_offset(sym->value));
  EXPECT_EQ(inner->offset_to_vaddr(*off), sym->value);
  EXPECT_FALSE(ElfFile::open(zip.path() + "!/notes.txt"));  // not ELF
  EXPECT_FALSE(ElfFile::open(zip.path() + "!/missing"));
}
