#include "cache_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace rbt::cache {

namespace {

constexpr const char *kTempPrefix = ".tmp-";
// Far larger than any object rbt writes; a bigger file is not read into memory.
constexpr off_t kMaxEntryBytes = 256 << 20;

// A directory only root can change: another user could otherwise swap in an entry, or the
// directory itself, between the checks and the use.
std::optional<std::string> unsafe_because(const struct stat &st, const std::string &what,
                                          bool may_be_sticky) {
  if (!S_ISDIR(st.st_mode))
    return what + " is not a directory";
  if (st.st_uid != 0)
    return what + " belongs to uid " + std::to_string(st.st_uid) + ", not root";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(may_be_sticky && (st.st_mode & S_ISVTX)))
    return what + " can be written by other users (mode " +
           std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
           std::to_string(st.st_mode & 7) + ")";
  return std::nullopt;
}

Error unsafe(const std::string &path, const std::string &why) {
  return make_error("cache directory " + path, why,
                    "the object cache stays off; make it root's and mode 0700, or set "
                    "RBT_CACHE_DIR to such a directory");
}

}  // namespace

Result<CacheDir> CacheDir::open(const std::string &path) {
  if (path.empty() || path[0] != '/')
    return unsafe(path, "not an absolute path");
  // Check, and create, each directory from the root down. Those above the cache may be
  // sticky and world-writable (/tmp): nobody but root can rename root's directory out of one.
  // (The root directory itself is root's on any system rbt can trace on.)
  std::vector<std::string> names;
  for (size_t pos = 0; pos < path.size();) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos)
      slash = path.size();
    if (slash > pos)
      names.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  if (names.empty())
    return unsafe(path, "the root directory is no cache");
  std::string part;
  for (size_t i = 0; i < names.size(); i++) {
    part += "/" + names[i];
    bool last = i + 1 == names.size();
    struct stat st;
    if (lstat(part.c_str(), &st) != 0) {
      if (errno != ENOENT)
        return unsafe(path, "checking " + part + ": " + strerror(errno));
      if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
        return unsafe(path, "creating " + part + ": " + strerror(errno));
      if (lstat(part.c_str(), &st) != 0)
        return unsafe(path, "checking " + part + ": " + strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
      if (last)
        return unsafe(path, "it is a symbolic link");
      // A link above the cache (/var/run → /run) is fine when root owns it and where it leads.
      char resolved[PATH_MAX];
      if (st.st_uid != 0 || !realpath(part.c_str(), resolved))
        return unsafe(path, part + " is a symbolic link another user may change");
      if (stat(resolved, &st) != 0)
        return unsafe(path, "checking " + std::string(resolved) + ": " + strerror(errno));
    }
    if (auto why = unsafe_because(st, part, !last))
      return unsafe(path, *why);
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return unsafe(path, std::string("opening it: ") + strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || unsafe_because(st, path, false)) {
    close(fd);
    return unsafe(path, "it changed while rbt checked it");
  }
  return CacheDir(fd, path);
}

CacheDir::CacheDir(CacheDir &&other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

CacheDir::~CacheDir() {
  if (fd_ >= 0)
    close(fd_);
}

Result<std::optional<std::string>> CacheDir::read(const std::string &name) const {
  int fd = openat(fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT)
      return std::optional<std::string>();
    return make_error("", std::string("cannot open it: ") + strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size > kMaxEntryBytes) {
    close(fd);
    return make_error("", "not a regular file of root's that only root can write");
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  bytes.resize(done);  // a short read shows as a truncated entry
  return std::optional<std::string>(std::move(bytes));
}

Status CacheDir::write(const std::string &name, const std::string &bytes) const {
  char suffix[32];
  snprintf(suffix, sizeof suffix, "%d-%lx", getpid(), static_cast<long>(random()));
  std::string temp = kTempPrefix + std::string(suffix);
  int fd = openat(fd_, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return make_error("writing " + path_ + "/" + name, strerror(errno));
  size_t done = 0;
  int err = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 && !err)
    err = errno;
  if (!err && renameat(fd_, temp.c_str(), fd_, name.c_str()) != 0)
    err = errno;
  if (err) {
    unlinkat(fd_, temp.c_str(), 0);
    return make_error("writing " + path_ + "/" + name, strerror(err));
  }
  return Ok{};
}

void CacheDir::remove(const std::string &name) const { unlinkat(fd_, name.c_str(), 0); }

void CacheDir::touch(const std::string &name) const {
  utimensat(fd_, name.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

void CacheDir::evict(uint64_t max_bytes, const std::string &keep) const {
  int dup_fd = fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : nullptr;
  if (!dir) {
    if (dup_fd >= 0)
      close(dup_fd);
    return;
  }
  struct Entry {
    std::string name;
    uint64_t bytes;
    timespec used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  time_t now = time(nullptr);
  while (dirent *d = readdir(dir)) {
    std::string name = d->d_name;
    struct stat st;
    if (fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    // A writer that died between create and rename; an hour is far longer than any compile.
    if (name.rfind(kTempPrefix, 0) == 0) {
      if (now - st.st_mtime > 3600)
        unlinkat(fd_, name.c_str(), 0);
      continue;
    }
    size_t n = name.size(), s = strlen(kEntrySuffix);
    if (n <= s || name.compare(n - s, s, kEntrySuffix) != 0)
      continue;
    total += static_cast<uint64_t>(st.st_size);
    if (name != keep)
      entries.push_back({name, static_cast<uint64_t>(st.st_size), st.st_mtim});
  }
  closedir(dir);
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec
                                          : a.used.tv_nsec < b.used.tv_nsec;
  });
  for (const Entry &e : entries) {
    if (total <= max_bytes)
      break;
    if (unlinkat(fd_, e.name.c_str(), 0) == 0)
      total -= e.bytes;
  }
}

}  // namespace rbt::cache
