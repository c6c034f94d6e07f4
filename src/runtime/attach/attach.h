#pragma once
// Attaching one program to one probe, with one file per probe kind. Each returns the links it
// made (a profile probe makes one per CPU) or an Error naming the probe and the cause.

#include <bpf/libbpf.h>
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "manifest.h"
#include "result.h"

namespace rbt::runtime {

struct LinkDeleter {
  void operator()(bpf_link *link) const { bpf_link__destroy(link); }
};
using Link = std::unique_ptr<bpf_link, LinkDeleter>;

struct AttachTarget {
  pid_t pid = -1;  // -p or the -c child: restricts perf events and uprobes; -1 means all
};

// Runs one libbpf attach call that makes a single link and returns it, or an Error from errno
// (captured right after the call): `enoent_why` explains ENOENT, strerror everything else.
Result<std::vector<Link>> one_link(const std::function<bpf_link *()> &attach,
                                   const std::string &enoent_why, const std::string &hint = {});

Result<std::vector<Link>> attach_probe(const ProbeDesc &probe, bpf_program *prog,
                                       const AttachTarget &target);
// Checks, before BEGIN runs, what can be known without attaching: that the tracepoint or
// binary exists, that the kernel has kprobes or a PMU. Errors then come before any output.
Status check_probe(const ProbeDesc &probe, const AttachTarget &target);

// Per kind (attach/<kind>.cpp).
Result<std::vector<Link>> attach_tracepoint(const ProbeDesc &probe, bpf_program *prog);
Result<std::vector<Link>> attach_raw_tracepoint(const ProbeDesc &probe, bpf_program *prog);
Result<std::vector<Link>> attach_kprobe(const ProbeDesc &probe, bpf_program *prog);
Result<std::vector<Link>> attach_perf_event(const ProbeDesc &probe, bpf_program *prog,
                                            const AttachTarget &target);
Result<std::vector<Link>> attach_uprobe(const ProbeDesc &probe, bpf_program *prog,
                                        const AttachTarget &target);
Result<std::vector<Link>> attach_usdt(const ProbeDesc &probe, bpf_program *prog,
                                      const AttachTarget &target);

Result<std::vector<Link>> attach_iter(const ProbeDesc &probe, bpf_program *prog);
// Runs the iterator of an iter: link: everything its program wrote, read to the end.
Result<std::string> read_iterator(bpf_link *link);

Status check_tracepoint(const ProbeDesc &probe);
Status check_iter(const ProbeDesc &probe);
Status check_kprobe(const ProbeDesc &probe);
Status check_perf_event(const ProbeDesc &probe);
Status check_uprobe(const ProbeDesc &probe, const AttachTarget &target);

// BEGIN and END are not attached: they run once, on demand (attach/special.cpp).
Status run_special_probe(const ProbeDesc &probe, bpf_program *prog);

}  // namespace rbt::runtime
