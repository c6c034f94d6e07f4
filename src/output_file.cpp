#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rbt {

namespace {

std::string parent_dir(const std::string &path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

// The kernel's protected_symlinks rule, applied whatever the sysctl says: in a world-writable
// directory a link is followed only when its owner is us or the directory's owner. In such a
// directory anyone may plant or swap the last component, so the open itself refuses links
// (O_NOFOLLOW) unless the link found there is trusted and the directory is sticky (then nobody
// else can replace it between our lstat and open).
bool may_follow_link(const std::string &path, struct stat &link, struct stat &dir) {
  if (lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode))
    return true;  // not a link now; O_NOFOLLOW below catches one planted in between
  if (stat(parent_dir(path).c_str(), &dir) != 0)
    return false;
  if (!(dir.st_mode & S_IWOTH))
    return true;
  bool trusted_owner = link.st_uid == geteuid() || link.st_uid == dir.st_uid;
  return trusted_owner && (dir.st_mode & S_ISVTX);
}

bool world_writable_dir(const std::string &path) {
  struct stat dir {};
  return stat(parent_dir(path).c_str(), &dir) == 0 && (dir.st_mode & S_IWOTH);
}

}  // namespace

Result<int> open_output_fd(const std::string &path) {
  struct stat link {}, dir {};
  int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  bool follow = may_follow_link(path, link, dir);
  if (!follow || world_writable_dir(path)) {
    if (!follow || !S_ISLNK(link.st_mode))
      flags |= O_NOFOLLOW;
  }
  int fd = ::open(path.c_str(), flags, 0666);
  if (fd >= 0)
    return fd;
  int err = errno;
  // O_NOFOLLOW says ELOOP; a sticky directory with protected_regular may say EACCES first.
  struct stat now {};
  if ((flags & O_NOFOLLOW) && lstat(path.c_str(), &now) == 0 && S_ISLNK(now.st_mode)) {
    uid_t owner = now.st_uid;
    return make_error("opening " + path,
                      "it is a symbolic link owned by uid " + std::to_string(owner) +
                          " in the world-writable directory " + parent_dir(path) +
                          "; rbt does not follow it",
                      "another user may have planted it to make rbt overwrite the file it "
                      "points to; remove the link or write somewhere else",
                      err);
  }
  return make_error("opening " + path, strerror(err), {}, err);
}

Result<std::FILE *> open_output_file(const std::string &path) {
  auto fd = open_output_fd(path);
  if (!fd)
    return fd.error();
  std::FILE *f = fdopen(*fd, "we");
  if (!f) {
    int err = errno;
    close(*fd);
    return make_error("opening " + path, strerror(err), {}, err);
  }
  return f;
}

Status write_output_file(const std::string &path, const std::string &bytes) {
  auto fd = open_output_fd(path);
  if (!fd)
    return fd.error();
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(*fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close(*fd);
      return make_error("writing " + path, strerror(err), {}, err);
    }
    done += static_cast<size_t>(n);
  }
  if (close(*fd) != 0) {
    int err = errno;
    return make_error("writing " + path, strerror(err), {}, err);
  }
  return Ok{};
}

}  // namespace rbt
