#pragma once
// The directory the object cache lives in, opened only when no other user could have put
// anything in it: it and every directory above it belong to root and nobody else can write
// there (a world-writable parent must be sticky, as /tmp is). Entries are read and written
// through the directory's descriptor, never through a path a link could redirect, and written
// to a temporary file renamed into place, so a reader sees a whole entry or none.

#include <cstdint>
#include <optional>
#include <string>

#include "result.h"

namespace rbt::cache {

class CacheDir {
public:
  // Opens `path`, creating it (and missing parents) mode 0700. An error says why it is unsafe.
  static Result<CacheDir> open(const std::string &path);

  CacheDir(CacheDir &&other) noexcept;
  CacheDir &operator=(CacheDir &&) = delete;
  ~CacheDir();

  const std::string &path() const { return path_; }
  // The bytes of entry `name`; nothing when there is none. An error when it exists but is not
  // a regular file of root's, or cannot be read.
  Result<std::optional<std::string>> read(const std::string &name) const;
  Status write(const std::string &name, const std::string &bytes) const;
  void remove(const std::string &name) const;
  // Marks `name` as just used, so eviction takes older entries first.
  void touch(const std::string &name) const;
  // Deletes the least recently used entries until they take at most `max_bytes` (never
  // `keep`), and temporary files a crashed writer left.
  void evict(uint64_t max_bytes, const std::string &keep) const;

private:
  CacheDir(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  int fd_ = -1;
  std::string path_;
};

// Entries are files named after their key with this suffix.
constexpr const char *kEntrySuffix = ".rbtc";

}  // namespace rbt::cache
