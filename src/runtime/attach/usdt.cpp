// usdt:binary:[provider:]probe, through libbpf's USDT support: one BPF program serves every
// call site, arguments come from bpf_usdt_arg, and the kernel maintains the semaphore.

#include "attach.h"
#include "probe_expansion.h"
#include "symbols/library_resolver.h"

namespace rbt::runtime {

Result<std::vector<Link>> attach_usdt(const ProbeDesc &probe, bpf_program *prog,
                                      const AttachTarget &target) {
  size_t colon = probe.func.find(':');
  if (colon == std::string::npos)
    return make_error("", "a USDT probe needs its provider here (usdt:binary:provider:probe)",
                      "probe expansion fills it in; this is a bug if the driver expanded probes");
  std::string provider = probe.func.substr(0, colon), name = probe.func.substr(colon + 1);
  // Expansion resolved the target already; a bare library name is resolved here too.
  auto path = probe.target.find('/') != std::string::npos
                  ? resolve_binary(probe_file(probe, target.pid), -1)
                  : resolve_binary(probe.target, target.pid);
  if (!path)
    return path.error();
  return one_link(
      [&] {
        return bpf_program__attach_usdt(prog, target.pid, path->c_str(), provider.c_str(),
                                        name.c_str(), nullptr);
      },
      "no USDT probe '" + probe.func + "' in " + *path,
      "list its probes with: rbt -l 'usdt:" + *path + ":*'");
}

}  // namespace rbt::runtime
