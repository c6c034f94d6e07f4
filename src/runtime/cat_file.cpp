#include "cat_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rbt::runtime {

CatResult cat_file(const std::string &path, size_t limit) {
  CatResult r;
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    r.error = strerror(errno);
    return r;
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    r.error = strerror(EISDIR);
    return r;
  }
  r.opened = true;
  char buf[65536];
  while (r.text.size() <= limit) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno != EAGAIN)  // EAGAIN: a FIFO or socket with nothing more yet
      r.error = strerror(errno);
    if (n <= 0)
      break;
    r.text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (r.text.size() > limit) {
    r.text.resize(limit);
    r.truncated = true;
  }
  return r;
}

}  // namespace rbt::runtime
