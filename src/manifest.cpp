#include "manifest.h"

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
  }
  return "?";
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

uint32_t MapDesc::array_entries() const {
  return value.is_histogram() ? static_cast<uint32_t>(histogram_buckets(value)) : 1;
}

}  // namespace rbt
