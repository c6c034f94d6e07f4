#include "probe_spec.h"

#include <charconv>
#include <vector>

#include "parse.h"
#include "perf_events.h"

namespace rbt::sema {
namespace {

struct KindName {
  const char *name;
  const char *alias;
  ProbeKind kind;
};

const KindName kKinds[] = {
    {"BEGIN", "begin", ProbeKind::Begin},
    {"END", "end", ProbeKind::End},
    {"tracepoint", "t", ProbeKind::Tracepoint},
    {"rawtracepoint", "rt", ProbeKind::RawTracepoint},
    {"kprobe", "k", ProbeKind::Kprobe},
    {"kretprobe", "kr", ProbeKind::Kretprobe},
    {"uprobe", "u", ProbeKind::Uprobe},
    {"uretprobe", "ur", ProbeKind::Uretprobe},
    {"usdt", "U", ProbeKind::Usdt},
    {"profile", "p", ProbeKind::Profile},
    {"interval", "i", ProbeKind::Interval},
    {"software", "s", ProbeKind::Software},
    {"hardware", "h", ProbeKind::Hardware},
    {"self", "self", ProbeKind::SelfSignal},
    {"bench", "bench", ProbeKind::Bench},
    {"iter", "it", ProbeKind::Iter},
};

// Split at `sep`, except inside double quotes (uprobe:/bin/app:"ns::f" is three parts); the
// quotes stay, for unquote() once the parts are known.
std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> parts(1);
  bool quoted = false;
  for (size_t i = 0; i < s.size(); i++) {
    char c = s[i];
    if (quoted && c == '\\' && i + 1 < s.size() && s[i + 1] == '"') {  // \" inside quotes
      parts.back() += "\\\"";
      i++;
      continue;
    }
    if (c == '"')
      quoted = !quoted;
    if (c == sep && !quoted)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

// "echo_builtin" → echo_builtin: bpftrace lets a symbol be quoted (for `:` or odd characters);
// inside the quotes \" is a quote ("\"probe1\"" names a USDT probe whose name has quotes).
std::string unquote(const std::string &s) {
  if (s.size() < 2 || s.front() != '"' || s.back() != '"')
    return s;
  std::string out;
  for (size_t i = 1; i + 1 < s.size(); i++) {
    if (s[i] == '\\' && i + 2 < s.size() && s[i + 1] == '"')
      i++;
    out += s[i];
  }
  return out;
}

// A count or rate as a script writes numbers: 1000, 1e6, 1_000 (not a duration: 10ms is no
// count).
bool parse_u64(const std::string &s, uint64_t &out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec == std::errc() && p == s.data() + s.size())
    return true;
  if (s.find_first_not_of("0123456789_eE") != std::string::npos)
    return false;
  auto v = int_literal_value(s);
  if (v)
    out = *v;
  return bool(v);
}

// "99" with unit "hz" → freq; "1" with unit "s" → period in ns.
std::string parse_rate(ProbeDesc &p, const std::string &unit, const std::string &value) {
  uint64_t n = 0;
  if (!parse_u64(value, n) || n == 0)
    return "invalid rate '" + value + "' (expected a positive integer)";
  if (unit == "hz") {
    p.freq = n;
  } else if (unit == "s") {
    p.period = n * 1000000000ull;
  } else if (unit == "ms") {
    p.period = n * 1000000ull;
  } else if (unit == "us") {
    p.period = n * 1000ull;
  } else if (unit == "ns" && p.kind == ProbeKind::Interval) {
    p.period = n;
  } else {
    return "invalid unit '" + unit + "' (expected hz, s, ms or us)";
  }
  return {};
}

// "sym+0x10" → func "sym", offset 0x10.
std::string split_offset(ProbeDesc &p, const std::string &fn) {
  size_t plus = fn.find('+', !fn.empty() && fn.front() == '"' ? fn.find('"', 1) : 0);  // not in "a+b"
  p.func = unquote(fn.substr(0, plus));
  if (plus == std::string::npos)
    return {};
  std::string off = fn.substr(plus + 1);
  int base = off.rfind("0x", 0) == 0 ? 16 : 10;
  const char *b = off.data() + (base == 16 ? 2 : 0);
  auto [ptr, ec] = std::from_chars(b, off.data() + off.size(), p.offset, base);
  if (ec != std::errc() || ptr != off.data() + off.size() || b == off.data() + off.size())
    return "invalid offset '" + off + "'";
  return {};
}

}  // namespace

bool is_return_probe(ProbeKind kind) {
  return kind == ProbeKind::Kretprobe || kind == ProbeKind::Uretprobe;
}

bool has_arguments(ProbeKind kind) {
  return kind == ProbeKind::Kprobe || kind == ProbeKind::Uprobe || kind == ProbeKind::Usdt ||
         kind == ProbeKind::RawTracepoint;
}

bool has_registers(ProbeKind kind) {
  switch (kind) {
  case ProbeKind::Kprobe:
  case ProbeKind::Kretprobe:
  case ProbeKind::Uprobe:
  case ProbeKind::Uretprobe:
  case ProbeKind::Usdt:
  case ProbeKind::Profile:
  case ProbeKind::Software:
  case ProbeKind::Hardware:
    return true;
  default:
    return false;
  }
}

ProbeSpecResult parse_probe_spec(const std::string &text) {
  ProbeSpecResult r;
  ProbeDesc &p = r.probe;
  std::vector<std::string> parts = split(text, ':');
  const KindName *kind = nullptr;
  for (auto &k : kKinds)
    if (parts[0] == k.name || parts[0] == k.alias)
      kind = &k;
  if (!kind) {
    r.error = "unknown probe type '" + parts[0] + "'";
    return r;
  }
  p.kind = kind->kind;
  auto need = [&](size_t n, const char *form) {
    if (parts.size() == n)
      return true;
    r.error = std::string("invalid ") + kind->name + " probe '" + text + "' (expected " + form + ")";
    return false;
  };
  // The canonical name uses the full type name; the rest is kept as written. `begin` and
  // `end` stay as spelled: bpftrace's `probe` is "begin" today and was "BEGIN" in 0.17.
  bool special = p.kind == ProbeKind::Begin || p.kind == ProbeKind::End;
  p.name = (special ? parts[0] : std::string(kind->name)) + text.substr(parts[0].size());

  switch (p.kind) {
  case ProbeKind::Begin:
  case ProbeKind::End:
    need(1, kind->name);
    break;
  case ProbeKind::SelfSignal:
    // bpftrace's self probes: events of the tracer itself; signals are the one kind.
    if (need(3, "self:signal:SIGUSR1")) {
      p.target = parts[1];
      p.func = parts[2];
      if (p.target != "signal")
        r.error = "unknown self probe type '" + p.target + "' (expected self:signal:SIGUSR1)";
      else if (p.func != "SIGUSR1" && p.func != "SIGUSR2")
        r.error = "unsupported signal '" + p.func + "' (self:signal takes SIGUSR1 or SIGUSR2)";
    }
    break;
  case ProbeKind::Bench:
    // bpftrace's micro benchmarks: run only with --mode bench, named by the second part.
    if (need(2, "bench:name"))
      p.func = parts[1];
    break;
  case ProbeKind::Iter:
    // iter:task, iter:task:PIN (pin the iterator at PIN, relative to /sys/fs/bpf, instead of
    // running it): bpftrace's three iterators.
    if (parts.size() == 3 || need(2, "iter:task|task_file|task_vma[:pin]")) {
      p.target = parts[1];
      p.func = parts.size() == 3 ? parts[2] : "";
      if (!is_iterator(p.target))
        r.error = "unknown iterator '" + p.target + "' (expected task, task_file or task_vma)";
      else if (parts.size() == 3 && p.func.empty())
        r.error = "invalid iter probe '" + text + "' (an empty pin path)";
    }
    break;
  case ProbeKind::Tracepoint:
    if (need(3, "tracepoint:category:event")) {
      p.target = parts[1];
      p.func = parts[2];
    }
    break;
  case ProbeKind::RawTracepoint:
    if (parts.size() == 3) {  // rawtracepoint:module:event (vmlinux, or a glob matching it)
      p.target = parts[1];
      p.func = parts[2];
    } else if (need(2, "rawtracepoint:[module:]event")) {
      p.func = parts[1];
    }
    break;
  case ProbeKind::Kprobe:
  case ProbeKind::Kretprobe:
    if (parts.size() == 3) {  // kprobe:module:function
      p.target = parts[1];
      r.error = split_offset(p, parts[2]);
    } else if (need(2, "kprobe:function[+offset]")) {
      r.error = split_offset(p, parts[1]);
    }
    break;
  case ProbeKind::Uprobe:
  case ProbeKind::Uretprobe:
    if (need(3, "uprobe:binary:symbol[+offset]")) {
      p.target = unquote(parts[1]);
      r.error = split_offset(p, parts[2]);
    }
    break;
  case ProbeKind::Usdt:
    if (parts.size() == 4) {
      p.target = unquote(parts[1]);
      p.func = unquote(parts[2]) + ":" + unquote(parts[3]);  // provider:probe
    } else if (need(3, "usdt:binary:[provider:]probe")) {
      p.target = unquote(parts[1]);
      p.func = unquote(parts[2]);
    }
    break;
  case ProbeKind::Profile:
  case ProbeKind::Interval:
    if (parts.size() == 2) {
      // `interval:1s`, `interval:100ms`, `profile:1000000`: a count with its unit (ns without).
      size_t digits = parts[1].find_first_not_of("0123456789_");
      std::string unit = digits == std::string::npos ? "ns" : parts[1].substr(digits);
      if (digits == 0 || (unit != "ns" && unit != "us" && unit != "ms" && unit != "s" && unit != "hz"))
        r.error = "invalid interval '" + parts[1] + "' (expected N, Nns, Nus, Nms, Ns or Nhz)";
      else if (unit == "ns" && p.kind == ProbeKind::Profile)
        r.error = parse_u64(parts[1].substr(0, digits), p.period) && p.period
                      ? std::string()
                      : "invalid rate '" + parts[1] + "'";
      else
        r.error = parse_rate(p, unit, parts[1].substr(0, digits));
      parts = {parts[0], unit, parts[1].substr(0, digits)};
    } else if (need(3, p.kind == ProbeKind::Profile ? "profile:hz|s|ms|us:N" : "interval:s|ms|us:N")) {
      r.error = parse_rate(p, parts[1], parts[2]);
    }
    p.target = parts.size() > 1 ? parts[1] : "";
    break;
  case ProbeKind::Software:
  case ProbeKind::Hardware: {
    bool hw = p.kind == ProbeKind::Hardware;
    if (parts.size() != 2 && !need(3, hw ? "hardware:event[:count]" : "software:event[:count]"))
      break;
    const PerfEventInfo *ev = find_perf_event(parts[1], hw);
    if (!ev) {
      r.error = std::string("unknown ") + kind->name + " event '" + parts[1] + "'";
      break;
    }
    p.target = ev->name;
    p.period = ev->default_count;
    if (parts.size() == 3 && (!parse_u64(parts[2], p.period) || p.period == 0))
      r.error = "invalid count '" + parts[2] + "' (expected a positive integer)";
    break;
  }
  }
  return r;
}

}  // namespace rbt::sema
