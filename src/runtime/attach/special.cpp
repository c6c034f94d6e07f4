// BEGIN and END: raw tracepoint programs that are never attached, only run once with
// BPF_PROG_TEST_RUN, so they execute synchronously in rbt's own context.

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>

#include "attach.h"

namespace rbt::runtime {

Status run_special_probe(const ProbeDesc &probe, bpf_program *prog) {
  LIBBPF_OPTS(bpf_test_run_opts, opts);
  if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts) != 0) {
    int err = errno;
    return make_error("running " + probe.name, strerror(err),
                      "BEGIN and END need BPF_PROG_TEST_RUN for raw tracepoint programs "
                      "(Linux 5.10 or later)",
                      err);
  }
  return Ok{};
}

}  // namespace rbt::runtime
