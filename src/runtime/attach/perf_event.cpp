// profile, interval, software and hardware probes: a perf event per CPU (interval: one) whose
// overflow runs the program.

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "attach.h"
#include "perf_events.h"

namespace rbt::runtime {

namespace {

std::vector<int> online_cpus() {
  std::vector<int> cpus;
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string spec;
  std::getline(in, spec);
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string part = spec.substr(pos, comma - pos);
    size_t dash = part.find('-');
    int lo = std::stoi(part), hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
    for (int c = lo; c <= hi; c++)
      cpus.push_back(c);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  if (cpus.empty())
    cpus.push_back(0);
  return cpus;
}

int perf_event_open(perf_event_attr *attr, pid_t pid, int cpu) {
  return static_cast<int>(syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

Error no_pmu(int err) {
  return make_error("", "this machine has no hardware performance counters (no PMU)",
                    "virtual machines often have none; use software:cpu-clock or profile:hz:99 "
                    "instead",
                    err);
}

bool is_missing_pmu(int err) { return err == ENOENT || err == EOPNOTSUPP || err == ENODEV; }

}  // namespace

Status check_perf_event(const ProbeDesc &probe) {
  const PerfEventInfo *ev = find_perf_event(probe.target, true);
  if (!ev)
    return Ok{};
  // Open (and close) the counter once: the only reliable test for a PMU that counts it.
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = ev->config;
  attr.disabled = 1;
  int fd = perf_event_open(&attr, -1, online_cpus()[0]);
  if (fd < 0)
    return is_missing_pmu(errno) ? Status(no_pmu(errno)) : Status(Ok{});
  close(fd);
  return Ok{};
}

Result<std::vector<Link>> attach_perf_event(const ProbeDesc &probe, bpf_program *prog,
                                            const AttachTarget &target) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  bool hardware = probe.kind == ProbeKind::Hardware;
  if (probe.kind == ProbeKind::Software || hardware) {
    const PerfEventInfo *ev = find_perf_event(probe.target, hardware);
    if (!ev)
      return make_error("", "unknown event");
    attr.type = hardware ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
    attr.config = ev->config;
    attr.sample_period = probe.period;
  } else {
    // profile and interval count CPU time; interval fires on one CPU only.
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    if (probe.freq) {
      attr.freq = 1;
      attr.sample_freq = probe.freq;
    } else {
      attr.sample_period = probe.period;
    }
  }

  std::vector<int> cpus = online_cpus();
  if (probe.kind == ProbeKind::Interval)
    cpus.resize(1);
  // Always system-wide: a perf event opened for a pid follows one thread, not the process;
  // -p filters in the program instead.
  (void)target;
  pid_t pid = -1;
  std::vector<Link> links;
  for (int cpu : cpus) {
    int fd = perf_event_open(&attr, pid, cpu);
    if (fd < 0) {
      int err = errno;
      if (hardware && is_missing_pmu(err))
        return no_pmu(err);
      return make_error("", std::string("perf_event_open on CPU ") + std::to_string(cpu) + ": " +
                                strerror(err),
                        {}, err);
    }
    bpf_link *link = bpf_program__attach_perf_event(prog, fd);
    if (!link) {
      int err = errno;
      close(fd);
      return make_error("", strerror(err), {}, err);
    }
    links.emplace_back(link);  // the link owns fd from here on
  }
  return links;
}

}  // namespace rbt::runtime
