#include "privileges.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace rbt {

namespace {

// CAP_BPF and CAP_PERFMON (Linux 5.8) are above 31: the effective set is two 32-bit words.
bool has_capability(const __user_cap_data_struct (&data)[2], int cap) {
  return (data[cap / 32].effective & (1u << (cap % 32))) != 0;
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

}  // namespace

Status check_tracing_privileges() {
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0)
    return Ok{};  // cannot tell: let the kernel decide
  if (has_capability(data, CAP_SYS_ADMIN))
    return Ok{};
  bool bpf = has_capability(data, CAP_BPF), perfmon = has_capability(data, CAP_PERFMON);
  if (bpf && perfmon)
    return Ok{};
  std::string missing = !bpf && !perfmon ? "CAP_BPF and CAP_PERFMON" : !bpf ? "CAP_BPF" : "CAP_PERFMON";
  return make_error("tracing needs root or CAP_BPF + CAP_PERFMON",
                    "rbt runs as uid " + std::to_string(geteuid()) + " without " + missing,
                    "run it as root (sudo rbt ...), or grant CAP_BPF and CAP_PERFMON "
                    "(+ CAP_SYS_ADMIN for some probes), e.g. setcap cap_bpf,cap_perfmon+ep on the rbt binary",
                    EPERM);
}

}  // namespace rbt
