#include "tracefs.h"

#include <linux/bpf.h>
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

bool calls_trace_printk(bpf_object *obj) {
  bpf_program *prog;
  bpf_object__for_each_program(prog, obj) {
    const bpf_insn *insns = bpf_program__insns(prog);
    for (size_t i = 0; i < bpf_program__insn_cnt(prog); i++)
      if (insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == 0 &&
          (insns[i].imm == BPF_FUNC_trace_printk || insns[i].imm == BPF_FUNC_trace_vprintk))
        return true;
  }
  return false;
}

void mount_debugfs_for_debugf() {
  if (access("/sys/kernel/debug/tracing/trace", F_OK) == 0)
    return;
  mount("debugfs", "/sys/kernel/debug", "debugfs", 0, nullptr);
}

}  // namespace rbt::runtime
