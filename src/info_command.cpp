#include "info_command.h"

#include <bpf/libbpf.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <string>

namespace rbt {

namespace {

bool exists(const char *path) { return access(path, F_OK) == 0; }

const char *yes_no(bool b) { return b ? "yes" : "no"; }

// tracefs where it is usually mounted.
bool tracefs_has(const std::string &file) {
  return exists(("/sys/kernel/tracing/" + file).c_str()) ||
         exists(("/sys/kernel/debug/tracing/" + file).c_str());
}

}  // namespace

int print_info(std::FILE *out) {
  struct utsname u {};
  uname(&u);
  fprintf(out, "System\n  OS: %s %s %s\n  Arch: %s\n\n", u.sysname, u.release, u.version,
          u.machine);
  fprintf(out, "Build\n  version: v%s\n  libbpf: %u.%u\n\n", RBT_VERSION, libbpf_major_version(),
          libbpf_minor_version());
  // What rbt's probes need from the kernel, looked up where the kernel shows it. Features rbt
  // has no use for say so ("no": rbt never asks for them).
  bool kprobes = tracefs_has("kprobe_events") || exists("/sys/bus/event_source/devices/kprobe");
  bool uprobes = tracefs_has("uprobe_events") || exists("/sys/bus/event_source/devices/uprobe");
  fprintf(out, "Kernel features\n");
  fprintf(out, "  btf: %s\n", yes_no(exists("/sys/kernel/btf/vmlinux")));
  fprintf(out, "  tracepoint: %s\n", yes_no(tracefs_has("events")));
  fprintf(out, "  kprobe: %s\n", yes_no(kprobes));
  fprintf(out, "  uprobe: %s\n", yes_no(uprobes));
  fprintf(out, "  kprobe_multi: no (not used by rbt)\n");
  fprintf(out, "  kprobe_session: no (not used by rbt)\n");
  fprintf(out, "  fentry: no (not used by rbt)\n");
  return 0;
}

}  // namespace rbt
