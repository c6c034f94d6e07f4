#include "manifest.h"

#include <signal.h>

#include <algorithm>

namespace rbt {

const char *probe_kind_name(ProbeKind kind) {
  switch (kind) {
  case ProbeKind::Begin: return "BEGIN";
  case ProbeKind::End: return "END";
  case ProbeKind::Tracepoint: return "tracepoint";
  case ProbeKind::RawTracepoint: return "rawtracepoint";
  case ProbeKind::Kprobe: return "kprobe";
  case ProbeKind::Kretprobe: return "kretprobe";
  case ProbeKind::Uprobe: return "uprobe";
  case ProbeKind::Uretprobe: return "uretprobe";
  case ProbeKind::Usdt: return "usdt";
  case ProbeKind::Profile: return "profile";
  case ProbeKind::Interval: return "interval";
  case ProbeKind::Software: return "software";
  case ProbeKind::Hardware: return "hardware";
  case ProbeKind::SelfSignal: return "self";
  case ProbeKind::Bench: return "bench";
  case ProbeKind::Iter: return "iter";
  }
  return "?";
}

const std::vector<std::string> &iterator_names() {
  static const std::vector<std::string> names = {"task", "task_file", "task_vma"};
  return names;
}

bool is_iterator(const std::string &name) {
  const auto &names = iterator_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

const char *probe_type_name(ProbeKind kind) {
  return kind == ProbeKind::Begin || kind == ProbeKind::End ? "special" : probe_kind_name(kind);
}

// Histograms with more buckets than this stay hashes: an lhist with a million steps should not
// reserve a million slots per CPU.
constexpr uint32_t kMaxArrayBuckets = 4096;

bool MapDesc::is_array() const {
  // tseries stays a hash: only the interval slots a key has used exist, as bpftrace prints them.
  if (!key.is_none() || !value.is_aggregation() || value.kind == TypeKind::Sum ||
      value.kind == TypeKind::TSeries)
    return false;
  return !value.is_histogram() || histogram_buckets(value) <= kMaxArrayBuckets;
}

std::vector<int> self_signals(const Manifest &m) {
  std::vector<int> out;
  for (const ProbeDesc &p : m.probes) {
    int signo = p.kind != ProbeKind::SelfSignal ? 0
                : p.func == "SIGUSR1"          ? SIGUSR1
                : p.func == "SIGUSR2"          ? SIGUSR2
                                               : 0;
    if (signo && std::find(out.begin(), out.end(), signo) == out.end())
      out.push_back(signo);
  }
  return out;
}

uint32_t MapDesc::array_entries() const {
  return value.is_histogram() ? static_cast<uint32_t>(histogram_buckets(value)) : 1;
}

}  // namespace rbt
