// kprobe:function[+offset] and kretprobe:function.

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attach.h"
#include "tracefs.h"

namespace rbt::runtime {

namespace {
// A kernel has kprobes when it has the kprobe PMU (perf_event_open) or the legacy
// kprobe_events file in tracefs; CONFIG_KPROBES gives both.
bool kernel_has_kprobes() {
  if (access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0)
    return true;
  auto root = tracefs_root();
  return root && access((*root + "/kprobe_events").c_str(), F_OK) == 0;
}
}  // namespace

Status check_kprobe(const ProbeDesc &) {
  if (!kernel_has_kprobes())
    return make_error("", "this kernel has no kprobe support (CONFIG_KPROBES)",
                      "trace the same event with a tracepoint or a rawtracepoint instead "
                      "(rbt -l 'tracepoint:*' lists them), e.g. tracepoint:syscalls:sys_enter_read",
                      EOPNOTSUPP);
  return Ok{};
}

Result<std::vector<Link>> attach_kprobe(const ProbeDesc &probe, bpf_program *prog) {
  if (auto s = check_kprobe(probe); !s)
    return s.error();
  LIBBPF_OPTS(bpf_kprobe_opts, opts);
  opts.offset = probe.offset;
  opts.retprobe = probe.kind == ProbeKind::Kretprobe;
  bpf_link *link = bpf_program__attach_kprobe_opts(prog, probe.func.c_str(), &opts);
  if (!link) {
    int err = errno;
    return make_error("", err == ENOENT ? "no such kernel function" : strerror(err),
                      err == ENOENT ? "the function may be inlined or static; see "
                                      "/sys/kernel/tracing/available_filter_functions"
                                    : "",
                      err);
  }
  std::vector<Link> links;
  links.emplace_back(link);
  return links;
}

}  // namespace rbt::runtime
