#include "attach.h"

#include <cassert>
#include <cerrno>
#include <cstring>

namespace rbt::runtime {

Result<std::vector<Link>> one_link(const std::function<bpf_link *()> &attach,
                                   const std::string &enoent_why, const std::string &hint) {
  bpf_link *link = attach();
  int err = errno;
  if (!link)
    return make_error("", err == ENOENT && !enoent_why.empty() ? enoent_why : strerror(err), hint,
                      err);
  std::vector<Link> links;
  links.emplace_back(link);
  return links;
}

Result<std::vector<Link>> attach_probe(const ProbeDesc &probe, bpf_program *prog,
                                       const AttachTarget &target) {
  Result<std::vector<Link>> r = std::vector<Link>{};
  switch (probe.kind) {
  case ProbeKind::Tracepoint: r = attach_tracepoint(probe, prog); break;
  case ProbeKind::RawTracepoint: r = attach_raw_tracepoint(probe, prog); break;
  case ProbeKind::Kprobe:
  case ProbeKind::Kretprobe: r = attach_kprobe(probe, prog); break;
  case ProbeKind::Uprobe:
  case ProbeKind::Uretprobe: r = attach_uprobe(probe, prog, target); break;
  case ProbeKind::Usdt: r = attach_usdt(probe, prog, target); break;
  case ProbeKind::Iter: r = attach_iter(probe, prog); break;
  case ProbeKind::Profile:
  case ProbeKind::Interval:
  case ProbeKind::Software:
  case ProbeKind::Hardware: r = attach_perf_event(probe, prog, target); break;
  case ProbeKind::Begin:
  case ProbeKind::End:
  case ProbeKind::SelfSignal:
  case ProbeKind::Bench: assert(false && "BEGIN/END/self/bench are run, not attached"); break;
  }
  if (!r)
    r.error().context("attaching " + probe.name);
  return r;
}

Status check_probe(const ProbeDesc &probe, const AttachTarget &target) {
  Status s = Ok{};
  switch (probe.kind) {
  case ProbeKind::Tracepoint: s = check_tracepoint(probe); break;
  case ProbeKind::Kprobe:
  case ProbeKind::Kretprobe: s = check_kprobe(probe); break;
  case ProbeKind::Uprobe:
  case ProbeKind::Uretprobe:
  case ProbeKind::Usdt: s = check_uprobe(probe, target); break;
  case ProbeKind::Hardware: s = check_perf_event(probe); break;
  case ProbeKind::Iter: s = check_iter(probe); break;
  default: break;
  }
  if (!s)
    s.error().context("attaching " + probe.name);
  return s;
}

}  // namespace rbt::runtime
