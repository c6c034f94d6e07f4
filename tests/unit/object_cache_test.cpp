// The object cache's pieces: SHA-256, the manifest codec (real compiled manifests survive the
// trip), entries that are truncated, corrupt or foreign, and the directory's safety checks.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "byte_codec.h"
#include "cache_dir.h"
#include "cache_entry.h"
#include "compiled.h"
#include "manifest_codec.h"
#include "sha256.h"

using namespace rbt;
using namespace rbt::cache;

namespace {

std::string manifest_bytes(const Manifest &m) {
  ByteWriter w;
  write_manifest(w, m);
  return w.take();
}

// A root-owned 0700 directory under /tmp, removed at the end.
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/rbt-cache-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
};

CacheEntry sample_entry() {
  test::Compiled c("BEGIN { @h = hist(1); @t[1, \"a\"] = count(); printf(\"%d\\n\", 1); exit(); }");
  EXPECT_EQ(c.error, "");
  CacheEntry e;
  e.inputs.push_back(identify_file("/bin/sh"));
  e.inputs.push_back(identify_file("/bin/sh", true, getpid()));  // as a -p process names it
  e.resolutions["libc"] = {"root:/usr/lib/x86_64-linux-gnu/libc.so.6"};
  e.resolutions["/opt/*"] = {"root:/opt/a", "/opt/b"};
  e.warnings = "rbt: warning: something\n";
  e.parts = 1;
  e.manifest = c.object.manifest;
  e.elf = c.object.elf;
  return e;
}

const Digest kKey = sha256("key", 3);

}  // namespace

TEST(ObjectCache, sha256_matches_the_standard_vectors) {
  EXPECT_EQ(hex(sha256("", 0)), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256("abc", 3)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(hex(sha256(two_blocks.data(), two_blocks.size())),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 pieces;  // fed in uneven pieces, the digest is the same
  for (char ch : two_blocks)
    pieces.update(&ch, 1);
  EXPECT_EQ(pieces.finish(), sha256(two_blocks.data(), two_blocks.size()));
}

TEST(ObjectCache, compiled_manifests_survive_encoding) {
  const char *scripts[] = {
      "tracepoint:syscalls:sys_enter_openat { @[comm, pid] = count(); @l = lhist(pid, 0, 100, 10); }",
      "profile:hz:99 { @s[kstack, ustack(5)] = sum(1); @m = max(cpu); } interval:s:1 { print(@s, 3); clear(@m); exit(); }",
      "BEGIN { @a[1] = (1, \"x\"); time(\"%H\\n\"); printf(\"%s %d\\n\", strftime(\"%Y\", nsecs), 2); } END { zero(@a); }",
  };
  for (const char *script : scripts) {
    test::Compiled c(script);
    ASSERT_EQ(c.error, "") << script;
    std::string bytes = manifest_bytes(c.object.manifest);
    ByteReader r(bytes.data(), bytes.size());
    auto back = read_manifest(r);
    ASSERT_TRUE(back) << script;
    EXPECT_EQ(r.left(), 0u);
    EXPECT_EQ(manifest_bytes(*back), bytes) << script;
    ASSERT_EQ(back->maps.size(), c.object.manifest.maps.size());
    for (size_t i = 0; i < back->maps.size(); i++) {
      EXPECT_EQ(back->maps[i].key, c.object.manifest.maps[i].key);
      EXPECT_EQ(back->maps[i].value, c.object.manifest.maps[i].value);
      EXPECT_EQ(back->maps[i].bpf_name, c.object.manifest.maps[i].bpf_name);
    }
    ASSERT_EQ(back->probes.size(), c.object.manifest.probes.size());
    for (size_t i = 0; i < back->probes.size(); i++)
      EXPECT_EQ(back->probes[i].program, c.object.manifest.probes[i].program);
    ASSERT_EQ(back->actions.size(), c.object.manifest.actions.size());
    for (size_t i = 0; i < back->actions.size(); i++) {
      EXPECT_EQ(back->actions[i].text, c.object.manifest.actions[i].text);
      EXPECT_EQ(back->actions[i].args, c.object.manifest.actions[i].args);
    }
  }
}

TEST(ObjectCache, entry_round_trips) {
  CacheEntry e = sample_entry();
  auto back = decode_entry(encode_entry(kKey, "0.1.0", e), kKey, "0.1.0");
  ASSERT_TRUE(back) << back.error().why;
  EXPECT_EQ(back->elf, e.elf);
  EXPECT_EQ(back->warnings, e.warnings);
  EXPECT_EQ(back->inputs, e.inputs);
  EXPECT_TRUE(back->inputs[1].in_process_root);
  EXPECT_EQ(back->inputs[1].path, "/bin/sh");
  EXPECT_EQ(back->inputs[1].ino, back->inputs[0].ino);  // the same file, through /proc/PID/root
  EXPECT_EQ(back->resolutions, e.resolutions);
  EXPECT_EQ(manifest_bytes(back->manifest), manifest_bytes(e.manifest));
}

TEST(ObjectCache, truncated_entries_are_refused) {
  std::string bytes = encode_entry(kKey, "0.1.0", sample_entry());
  for (size_t len : {size_t(0), size_t(10), kHeaderSize - 1, kHeaderSize, kHeaderSize + 7,
                     bytes.size() / 2, bytes.size() - 1}) {
    auto r = decode_entry(bytes.substr(0, len), kKey, "0.1.0");
    ASSERT_FALSE(r) << len;
    EXPECT_NE(r.error().why.find("truncated"), std::string::npos) << r.error().why;
  }
}

TEST(ObjectCache, a_changed_byte_fails_the_checksum) {
  std::string bytes = encode_entry(kKey, "0.1.0", sample_entry());
  for (size_t at : {kHeaderSize, kHeaderSize + 100, bytes.size() - 1}) {
    std::string bad = bytes;
    bad[at] ^= 0x20;
    auto r = decode_entry(bad, kKey, "0.1.0");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().why, "checksum mismatch (corrupt)");
  }
}

TEST(ObjectCache, foreign_entries_are_refused) {
  std::string bytes = encode_entry(kKey, "0.1.0", sample_entry());
  auto other_version = decode_entry(bytes, kKey, "0.2.0");
  ASSERT_FALSE(other_version);
  EXPECT_NE(other_version.error().why.find("written by another rbt (version 0.1.0"),
            std::string::npos);
  auto other_key = decode_entry(bytes, sha256("other", 5), "0.1.0");
  ASSERT_FALSE(other_key);
  EXPECT_NE(other_key.error().why.find("foreign"), std::string::npos);
  std::string not_ours = bytes;
  not_ours[0] = 'X';
  auto bad_magic = decode_entry(not_ours, kKey, "0.1.0");
  ASSERT_FALSE(bad_magic);
  EXPECT_NE(bad_magic.error().why.find("bad magic"), std::string::npos);
}

TEST(ObjectCache, a_corrupt_manifest_with_a_valid_checksum_does_not_decode) {
  // Nested counts far beyond the bytes present: the reader must stop, not allocate or recurse.
  ByteWriter w;
  w.u32(0);           // inputs
  w.u32(0);           // resolutions
  w.str("");          // warnings
  w.u32(1);           // parts
  w.u32(0xffffffff);  // probes
  std::string payload = w.take();
  CacheEntry e;
  std::string bytes = encode_entry(kKey, "0.1.0", e);
  bytes.resize(kHeaderSize);
  // Rebuild the header around the bad payload with a matching checksum.
  ByteWriter h;
  h.raw(bytes.data(), 8 + 4 + 16 + 32);
  h.u64(payload.size());
  Digest sum = sha256(payload.data(), payload.size());
  h.raw(sum.data(), sum.size());
  h.raw(payload.data(), payload.size());
  auto r = decode_entry(h.take(), kKey, "0.1.0");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().why, "its contents do not decode");
}

TEST(ObjectCache, directory_is_created_private_and_entries_round_trip) {
  if (geteuid() != 0)
    GTEST_SKIP() << "the cache is root's";
  TempDir tmp;
  std::string path = tmp.path + "/a/b";
  auto dir = CacheDir::open(path);
  ASSERT_TRUE(dir) << dir.error().why;
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_TRUE(dir->write("x.rbtc", "hello"));
  auto read = dir->read("x.rbtc");
  ASSERT_TRUE(read && *read);
  EXPECT_EQ(**read, "hello");
  auto missing = dir->read("y.rbtc");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
}

TEST(ObjectCache, directories_others_can_write_or_own_are_refused) {
  if (geteuid() != 0)
    GTEST_SKIP() << "the cache is root's";
  TempDir tmp;
  std::string open_to_all = tmp.path + "/open";
  ASSERT_EQ(mkdir(open_to_all.c_str(), 0777), 0);
  ASSERT_EQ(chmod(open_to_all.c_str(), 0777), 0);
  auto r = CacheDir::open(open_to_all);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().why.find("can be written by other users"), std::string::npos) << r.error().why;

  std::string theirs = tmp.path + "/theirs";
  ASSERT_EQ(mkdir(theirs.c_str(), 0700), 0);
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  auto owned = CacheDir::open(theirs);
  ASSERT_FALSE(owned);
  EXPECT_NE(owned.error().why.find("belongs to uid 65534"), std::string::npos)
      << owned.error().why;
  // Nor anything below a directory another user owns.
  EXPECT_FALSE(CacheDir::open(theirs + "/below"));

  std::string link = tmp.path + "/link";
  std::string target = tmp.path + "/target";
  ASSERT_EQ(mkdir(target.c_str(), 0700), 0);
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  auto linked = CacheDir::open(link);
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().why.find("symbolic link"), std::string::npos);
}

TEST(ObjectCache, entries_of_another_user_are_not_read) {
  if (geteuid() != 0)
    GTEST_SKIP() << "the cache is root's";
  TempDir tmp;
  auto dir = CacheDir::open(tmp.path);
  ASSERT_TRUE(dir);
  ASSERT_TRUE(dir->write("x.rbtc", "hello"));
  ASSERT_EQ(chown((tmp.path + "/x.rbtc").c_str(), 65534, 65534), 0);
  EXPECT_FALSE(dir->read("x.rbtc"));
}

TEST(ObjectCache, eviction_removes_the_least_recently_used_entries) {
  if (geteuid() != 0)
    GTEST_SKIP() << "the cache is root's";
  TempDir tmp;
  auto dir = CacheDir::open(tmp.path);
  ASSERT_TRUE(dir);
  std::string kib(1024, 'x');
  for (const char *name : {"old.rbtc", "mid.rbtc", "new.rbtc"}) {
    ASSERT_TRUE(dir->write(name, kib));
    usleep(20000);  // distinct mtimes
  }
  dir->touch("old.rbtc");  // used again: now the most recent
  dir->evict(2048, "new.rbtc");
  EXPECT_TRUE(std::filesystem::exists(tmp.path + "/old.rbtc"));
  EXPECT_FALSE(std::filesystem::exists(tmp.path + "/mid.rbtc"));
  EXPECT_TRUE(std::filesystem::exists(tmp.path + "/new.rbtc"));
}
