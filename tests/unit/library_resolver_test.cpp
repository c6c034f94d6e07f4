// Library and program resolution as the dynamic loader and the shell would do it, on this
// machine's ld.so.cache and PATH, plus a synthetic cache to pin down the file format.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>

#include "symbols/library_resolver.h"

using namespace rbt::runtime;

namespace {

bool ends_with(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A glibc-ld.so.cache1.1 file: header, entries {flags, key, value, osversion, hwcap}, strings.
std::string synthetic_cache(const std::vector<std::tuple<uint32_t, std::string, std::string>> &es) {
  std::string header = "glibc-ld.so.cache1.1";
  std::string strings;
  size_t strings_at = 48 + es.size() * 24;
  std::string entries;
  auto put32 = [](std::string &b, uint32_t v) { b.append(reinterpret_cast<char *>(&v), 4); };
  for (auto &[flags, key, value] : es) {
    uint32_t k = strings_at + strings.size();
    strings += key + '\0';
    uint32_t v = strings_at + strings.size();
    strings += value + '\0';
    put32(entries, flags);
    put32(entries, k);
    put32(entries, v);
    put32(entries, 0);
    entries.append(8, '\0');
  }
  put32(header, es.size());
  put32(header, strings.size());
  header.append(20, '\0');  // flags, padding, extension offset, unused
  return header + entries + strings;
}

std::string write_temp(const std::string &bytes) {
  char path[] = "/tmp/rbt_ldcache_XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
  return path;
}

}  // namespace

TEST(LdSoCache, parses_the_new_format_and_keeps_native_entries_only) {
  std::string path = write_temp(synthetic_cache({
      {0x0303, "libfoo.so.1", "/opt/x86_64/libfoo.so.1"},  // libc6, x86-64
      {0x0003, "libfoo.so.1", "/opt/i386/libfoo.so.1"},    // libc6, 32-bit
      {0x0303, "libbar-2.0.so.0", "/opt/x86_64/libbar-2.0.so.0"},
  }));
  auto entries = read_ld_so_cache(path);
  unlink(path.c_str());
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].soname, "libfoo.so.1");
  EXPECT_EQ(entries[0].path, "/opt/x86_64/libfoo.so.1");
  EXPECT_EQ(entries[1].soname, "libbar-2.0.so.0");
}

TEST(LdSoCache, an_unknown_file_gives_no_entries) {
  std::string path = write_temp("not a cache at all, just some bytes........................");
  EXPECT_TRUE(read_ld_so_cache(path).empty());
  unlink(path.c_str());
  EXPECT_TRUE(read_ld_so_cache("/no/such/cache").empty());
}

TEST(LdSoCache, this_machines_cache_knows_libc) {
  auto entries = read_ld_so_cache();
  ASSERT_FALSE(entries.empty());
  bool libc = false;
  for (auto &e : entries)
    libc = libc || (e.soname == "libc.so.6" && ends_with(e.path, "/libc.so.6"));
  EXPECT_TRUE(libc);
}

TEST(LibraryNames, match_as_the_loader_names_them) {
  EXPECT_TRUE(library_name_matches("libc", "libc.so.6"));
  EXPECT_TRUE(library_name_matches("libc", "libc.so"));
  EXPECT_TRUE(library_name_matches("libruby", "libruby-3.1.so.3.1"));
  EXPECT_TRUE(library_name_matches("libruby", "libruby-3.1.so.3.1.2"));
  EXPECT_TRUE(library_name_matches("libc.so.6", "libc.so.6"));
  EXPECT_FALSE(library_name_matches("libc", "libcrypt.so.1"));
  EXPECT_FALSE(library_name_matches("libc", "libc_malloc_debug.so.0"));
  EXPECT_FALSE(library_name_matches("libc.so", "libc.so.6"));
  EXPECT_TRUE(looks_like_library("libc"));
  EXPECT_TRUE(looks_like_library("foo.so.1"));
  EXPECT_FALSE(looks_like_library("ruby"));
}

TEST(FindLibrary, resolves_short_names_and_sonames) {
  auto libc = find_library("libc");
  ASSERT_TRUE(libc.has_value());
  EXPECT_TRUE(ends_with(*libc, "/x86_64-linux-gnu/libc.so.6")) << *libc;
  EXPECT_EQ(find_library("libc.so.6"), libc);
  auto ruby = find_library("libruby");
  ASSERT_TRUE(ruby.has_value());
  EXPECT_TRUE(*ruby == "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1" ||
              *ruby == "/lib/x86_64-linux-gnu/libruby-3.1.so.3.1")
      << *ruby;
  EXPECT_EQ(find_library("libno_such_library_rbt"), std::nullopt);
}

TEST(FindProgram, searches_path) {
  auto sh = find_program("sh");
  ASSERT_TRUE(sh.has_value());
  EXPECT_TRUE(ends_with(*sh, "/sh"));
  EXPECT_EQ(access(sh->c_str(), X_OK), 0);
  EXPECT_EQ(find_program("no_such_program_rbt"), std::nullopt);
}

TEST(ResolveBinary, paths_programs_and_libraries) {
  auto ruby = resolve_binary("ruby");
  ASSERT_TRUE(ruby) << ruby.error().why;
  EXPECT_TRUE(ends_with(*ruby, "/ruby"));
  auto libruby = resolve_binary("libruby");
  ASSERT_TRUE(libruby);
  EXPECT_TRUE(ends_with(*libruby, "/libruby-3.1.so.3.1"));
  EXPECT_EQ(*resolve_binary("/bin/sh"), "/bin/sh");

  auto missing = resolve_binary("/no/such/binary");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().why, "/no/such/binary: no such file");
  auto unknown = resolve_binary("libno_such_library_rbt");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().why, "no library or program named 'libno_such_library_rbt'");
  EXPECT_FALSE(unknown.error().hint.empty());
}

TEST(ResolveBinary, a_pid_resolves_through_its_maps_and_root) {
  pid_t self = getpid();
  std::string root = "/proc/" + std::to_string(self) + "/root";
  auto libc = resolve_binary("libc", self);
  ASSERT_TRUE(libc) << libc.error().why;
  EXPECT_EQ(libc->rfind(root + "/", 0), 0u) << *libc;
  EXPECT_NE(libc->find("libc.so.6"), std::string::npos) << *libc;
  EXPECT_EQ(access(libc->c_str(), R_OK), 0);

  auto files = mapped_files(self);
  ASSERT_TRUE(files);
  char exe[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
  EXPECT_NE(std::find(files->begin(), files->end(), root + exe), files->end());

  auto with_path = resolve_binary("/bin/sh", self);
  ASSERT_TRUE(with_path);
  EXPECT_EQ(*with_path, root + "/bin/sh");

  EXPECT_FALSE(mapped_files(999999999));
}

TEST(ResolveBinaries, a_wildcard_needs_a_pid) {
  auto none = resolve_binaries("*", -1);
  ASSERT_FALSE(none);
  auto mine = resolve_binaries("*libc.so*", getpid());
  ASSERT_TRUE(mine);
  ASSERT_EQ(mine->size(), 1u);
  EXPECT_NE(mine->front().find("libc.so.6"), std::string::npos);
}
