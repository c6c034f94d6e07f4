// uprobe:binary:symbol and uretprobe:binary:symbol.

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attach.h"

namespace rbt::runtime {

Status check_uprobe(const ProbeDesc &probe) {
  if (access(probe.target.c_str(), F_OK) != 0)
    return make_error("", probe.target + ": no such file", "give the binary's full path", ENOENT);
  return Ok{};
}

Result<std::vector<Link>> attach_uprobe(const ProbeDesc &probe, bpf_program *prog,
                                        const AttachTarget &target) {
  if (auto s = check_uprobe(probe); !s)
    return s.error();
  LIBBPF_OPTS(bpf_uprobe_opts, opts);
  opts.retprobe = probe.kind == ProbeKind::Uretprobe;
  opts.func_name = probe.func.c_str();
  bpf_link *link = bpf_program__attach_uprobe_opts(prog, target.pid, probe.target.c_str(),
                                                   probe.offset, &opts);
  if (!link) {
    int err = errno;
    return make_error("", err == ENOENT ? "no symbol '" + probe.func + "' in " + probe.target
                                        : std::string(strerror(err)),
                      {}, err);
  }
  std::vector<Link> links;
  links.emplace_back(link);
  return links;
}

}  // namespace rbt::runtime
