#pragma once
// One cached compilation: the BPF object and its Manifest, the files whose identity the object
// depends on (checked before it is used), and the warnings compiling printed (printed again
// when it is reused, so a cache hit looks like a compile).
//
// On disk: a 100-byte header, then the payload.
//   magic "RBTCACHE" | u32 format | rbt version (16 bytes, NUL padded) | key (32 bytes)
//   | u64 payload size | SHA-256 of the payload (32 bytes)
// An entry whose header does not match this build and the key it was looked up by, or whose
// payload is short or fails its checksum, is never decoded.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "manifest.h"
#include "result.h"
#include "sha256.h"

namespace rbt::cache {

constexpr uint32_t kFormatVersion = 7;
constexpr size_t kHeaderSize = 100;

// What stat says about a file: a different value means different contents may be there now.
struct FileIdentity {
  std::string path;
  // With -p: `path` is the process's name for a file inside its root (/proc/PID/root + path),
  // so that the entry serves another process that sees the same file.
  bool in_process_root = false;
  bool exists = false;
  uint64_t dev = 0, ino = 0, size = 0, mtime_ns = 0, ctime_ns = 0;

  bool operator==(const FileIdentity &) const = default;
};

FileIdentity identify_file(const std::string &path);
// With `in_process_root`, the file the process `pid` names `path` (/proc/PID/root + path); the
// identity keeps the process's name for it.
FileIdentity identify_file(const std::string &path, bool in_process_root, int pid);

struct CacheEntry {
  std::vector<FileIdentity> inputs;  // binaries probed (their symbols, USDT notes, code)
  // With -p: what each probe's binary resolved to through the process (MachineTypes::
  // resolutions), which another process of the same root must resolve the same way.
  std::map<std::string, std::vector<std::string>> resolutions;
  std::string warnings;              // stderr of the compile
  uint32_t parts = 1;
  Manifest manifest;
  std::vector<char> elf;
};

std::string encode_entry(const Digest &key, const std::string &version, const CacheEntry &entry);
// The entry in `bytes`, or why it cannot be used ("truncated", "checksum mismatch", ...).
Result<CacheEntry> decode_entry(const std::string &bytes, const Digest &key,
                                const std::string &version);

}  // namespace rbt::cache
