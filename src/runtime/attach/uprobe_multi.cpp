// uprobe_multi links (Linux 6.6): one link attaches a program to many functions of a binary,
// as bpftrace does for a wildcard uprobe. libbpf 1.1 (Debian 12's) has no
// bpf_program__attach_uprobe_multi and its uapi header no such attr, so the link is made with
// the bpf() syscall, its attr laid out as the kernel's union bpf_attr has it.

#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attach.h"

namespace rbt::runtime {

namespace {

// union bpf_attr's link_create for BPF_TRACE_UPROBE_MULTI (include/uapi/linux/bpf.h, 6.6).
struct UprobeMultiLinkAttr {
  uint32_t prog_fd, target_fd, attach_type, flags;
  uint64_t path, offsets, ref_ctr_offsets, cookies;
  uint32_t cnt, multi_flags, pid;
};
constexpr uint32_t kUprobeMultiReturn = 1;  // BPF_F_UPROBE_MULTI_RETURN

}  // namespace

FdLink &FdLink::operator=(FdLink &&o) noexcept {
  if (this != &o) {
    if (fd_ >= 0)
      close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

FdLink::~FdLink() {
  if (fd_ >= 0)
    close(fd_);
}

Result<FdLink> attach_uprobe_multi(const std::vector<const ProbeDesc *> &group,
                                   bpf_program *prog, const AttachTarget &target,
                                   const std::function<bool(const ProbeDesc &, const Error &)> &skip) {
  std::string file;
  std::vector<uint64_t> offsets, cookies;
  for (size_t i = 0; i < group.size(); i++) {
    auto place = uprobe_place(*group[i], target);
    if (!place && skip(*group[i], place.error()))
      continue;  // missing_probes = warn|ignore: the link leaves it out, the others keep their cookies
    if (!place)
      return place.error();
    if (!file.empty() && place->first != file)  // codegen groups one binary's functions only
      return make_error(group[i]->name, "not in " + file + " as the rest of its group");
    file = place->first;
    offsets.push_back(place->second);
    cookies.push_back(i);
  }
  if (offsets.empty())
    return FdLink(-1);
  UprobeMultiLinkAttr a{};
  a.prog_fd = static_cast<uint32_t>(bpf_program__fd(prog));
  a.attach_type = kUprobeMultiAttachType;
  a.path = reinterpret_cast<uint64_t>(file.c_str());
  a.offsets = reinterpret_cast<uint64_t>(offsets.data());
  a.cookies = reinterpret_cast<uint64_t>(cookies.data());
  a.cnt = static_cast<uint32_t>(offsets.size());
  a.multi_flags = group.front()->kind == ProbeKind::Uretprobe ? kUprobeMultiReturn : 0;
  a.pid = target.pid > 0 ? static_cast<uint32_t>(target.pid) : 0;
  // The kernel checks that the attr's bytes past what it knows are zero: pass the whole union.
  union bpf_attr attr;
  memset(&attr, 0, sizeof attr);
  static_assert(sizeof(UprobeMultiLinkAttr) <= sizeof(union bpf_attr));
  memcpy(&attr, &a, sizeof a);
  int fd = static_cast<int>(syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof attr));
  if (fd < 0) {
    int err = errno;
    return make_error(group.front()->name,
                      std::string("cannot attach a uprobe_multi link to ") + file + ": " +
                          strerror(err),
                      err == ENOENT ? file + " disappeared while attaching" : "", err);
  }
  return FdLink(fd);
}

}  // namespace rbt::runtime
