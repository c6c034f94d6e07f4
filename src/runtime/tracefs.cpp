#include "tracefs.h"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rbt::runtime {

Result<std::string> tracefs_root() {
  static std::string cached;
  if (!cached.empty())
    return cached;
  for (const char *root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    if (access((std::string(root) + "/events").c_str(), F_OK) == 0)
      return cached = root;
  }
  if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0) {
    int err = errno;
    return make_error("mounting tracefs at /sys/kernel/tracing", strerror(err),
                      err == EPERM ? "run rbt as root" : "mount it by hand: mount -t tracefs nodev /sys/kernel/tracing",
                      err);
  }
  return cached = "/sys/kernel/tracing";
}

}  // namespace rbt::runtime
