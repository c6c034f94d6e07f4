// iter:task, iter:task_file, iter:task_vma: BPF iterators. The program (section iter/<name>)
// is attached as an iterator link; running it means reading an iterator file made from that
// link until its end, the kernel calling the program once per object on the way. What the
// program prints comes back through that read (Lowering::send_iter_event), not the ring
// buffer, so rbt carries it out in order and then ends, as bpftrace does after an iterator.

#include <bpf/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attach.h"

namespace rbt::runtime {

Status check_iter(const ProbeDesc &probe) {
  // bpftrace pins the iterator for others to read (`cat /sys/fs/bpf/NAME` runs it, printing
  // with the kernel's seq_printf); rbt's probes write binary events only rbt can print.
  if (!probe.func.empty())
    return make_error("", "pinning an iterator is not supported",
                      "rbt prints what an iterator writes itself; drop ':" + probe.func +
                          "' to run it now (" + probe_kind_name(probe.kind) + ":" + probe.target +
                          ")",
                      ENOTSUP);
  return Ok{};
}

Result<std::vector<Link>> attach_iter(const ProbeDesc &probe, bpf_program *prog) {
  if (auto s = check_iter(probe); !s)
    return s.error();
  return one_link([&] { return bpf_program__attach_iter(prog, nullptr); },
                  "the kernel has no '" + probe.target + "' iterator",
                  "BPF iterators need Linux 5.8 or later (task_vma: 5.12)");
}

Result<std::string> read_iterator(bpf_link *link) {
  int fd = bpf_iter_create(bpf_link__fd(link));
  if (fd < 0) {
    int err = errno;
    return make_error("running the iterator", strerror(err), {}, err);
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return make_error("reading the iterator", strerror(err), {}, err);
    }
    if (n == 0)
      break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

}  // namespace rbt::runtime
