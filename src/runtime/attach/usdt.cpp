// usdt:binary:[provider:]probe, through libbpf's USDT support.

#include <cerrno>
#include <cstring>

#include "attach.h"

namespace rbt::runtime {

Result<std::vector<Link>> attach_usdt(const ProbeDesc &probe, bpf_program *prog,
                                      const AttachTarget &target) {
  size_t colon = probe.func.find(':');
  if (colon == std::string::npos)
    return make_error("", "a USDT probe needs its provider here (usdt:binary:provider:probe)");
  std::string provider = probe.func.substr(0, colon), name = probe.func.substr(colon + 1);
  bpf_link *link = bpf_program__attach_usdt(prog, target.pid, probe.target.c_str(),
                                            provider.c_str(), name.c_str(), nullptr);
  if (!link) {
    int err = errno;
    return make_error("", err == ENOENT ? "no such USDT probe in " + probe.target
                                        : std::string(strerror(err)),
                      {}, err);
  }
  std::vector<Link> links;
  links.emplace_back(link);
  return links;
}

}  // namespace rbt::runtime
