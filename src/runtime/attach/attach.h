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

// A link made without libbpf (libbpf 1.1 has no uprobe_multi): its fd, closed when dropped.
class FdLink {
public:
  explicit FdLink(int fd) : fd_(fd) {}
  FdLink(FdLink &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FdLink &operator=(FdLink &&o) noexcept;
  FdLink(const FdLink &) = delete;
  ~FdLink();

private:
  int fd_;
};

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
// The file a uprobe goes on and its offset there (an archive entry's: the archive's).
Result<std::pair<std::string, uint64_t>> uprobe_place(const ProbeDesc &probe,
                                                      const AttachTarget &target);
// BPF_TRACE_UPROBE_MULTI (Linux 6.6): a uprobe_multi group's program is loaded with it.
constexpr int kUprobeMultiAttachType = 48;
// One uprobe_multi link for every desc of a group (codegen/uprobe_groups.h), one binary; the
// attach cookie of each function is its index in `group` (the program's `probe`/`func`).
// A function that cannot be placed (a missing symbol) ends the attach unless `skip` says to
// leave it out (missing_probes = warn|ignore).
Result<FdLink> attach_uprobe_multi(const std::vector<const ProbeDesc *> &group,
                                   bpf_program *prog, const AttachTarget &target,
                                   const std::function<bool(const ProbeDesc &, const Error &)> &skip);
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
