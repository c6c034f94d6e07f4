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

}  // namespace rbt
