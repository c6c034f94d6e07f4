// tracepoint:category:event and rawtracepoint:event.

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attach.h"
#include "tracefs.h"

namespace rbt::runtime {

Status check_tracepoint(const ProbeDesc &probe) {
  auto root = tracefs_root();
  if (!root)
    return root.error();
  std::string dir = *root + "/events/" + probe.target + "/" + probe.func;
  if (access(dir.c_str(), F_OK) != 0)
    return make_error("", "no such tracepoint (" + dir + " does not exist)",
                      "list tracepoints with: rbt -l 'tracepoint:" + probe.target + ":*'", ENOENT);
  return Ok{};
}

Result<std::vector<Link>> attach_tracepoint(const ProbeDesc &probe, bpf_program *prog) {
  if (auto s = check_tracepoint(probe); !s)
    return s.error();
  bpf_link *link = bpf_program__attach_tracepoint(prog, probe.target.c_str(), probe.func.c_str());
  if (!link) {
    int err = errno;
    return make_error("", strerror(err), {}, err);
  }
  std::vector<Link> links;
  links.emplace_back(link);
  return links;
}

Result<std::vector<Link>> attach_raw_tracepoint(const ProbeDesc &probe, bpf_program *prog) {
  // A probe that needs tracing-only helpers is a BTF-typed raw tracepoint (tp_btf/EVENT): the
  // kernel knows its event from the program, so it attaches without a name.
  bool btf_typed = bpf_program__type(prog) == BPF_PROG_TYPE_TRACING;
  bpf_link *link = btf_typed ? bpf_program__attach_trace(prog)
                             : bpf_program__attach_raw_tracepoint(prog, probe.func.c_str());
  if (!link) {
    int err = errno;
    return make_error("", err == ENOENT ? "no such raw tracepoint" : strerror(err),
                      "raw tracepoints have the names of tracepoint events, e.g. sys_enter", err);
  }
  std::vector<Link> links;
  links.emplace_back(link);
  return links;
}

}  // namespace rbt::runtime
