#include "probe_expansion.h"

#include <fnmatch.h>

#include <cerrno>
#include <charconv>
#include <set>

#include "symbols/elf_file.h"
#include "symbols/library_resolver.h"
#include "symbols/usdt_notes.h"
#include "tracepoint_catalog.h"

namespace rbt::runtime {

namespace {

bool glob_matches(const std::string &glob, const std::string &text) {
  return fnmatch(glob.c_str(), text.c_str(), 0) == 0;
}

std::string hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::optional<uint64_t> parse_uprobe_address(const std::string &func) {
  if (func.empty() || !isdigit(static_cast<unsigned char>(func[0])))
    return std::nullopt;
  bool is_hex = func.rfind("0x", 0) == 0 || func.rfind("0X", 0) == 0;
  const char *b = func.data() + (is_hex ? 2 : 0), *e = func.data() + func.size();
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(b, e, v, is_hex ? 16 : 10);
  if (ec != std::errc() || ptr != e || b == e)
    return std::nullopt;
  return v;
}

namespace {

// Points `p` at `path`, a file resolve_binaries found: a file inside the process's root by the
// process's own name for it.
void set_target(ProbeDesc &p, const std::string &path, pid_t pid) {
  auto inside = path_in_process_root(path, pid);
  p.target = inside ? *inside : path;
  p.in_process_root = inside.has_value();
}

std::string uprobe_name(const ProbeDesc &p) {
  std::string name = std::string(probe_kind_name(p.kind)) + ":" + p.target + ":";
  if (p.func.empty())
    return name + hex(p.offset);
  return name + p.func + (p.offset ? "+" + std::to_string(p.offset) : "");
}

Result<std::vector<ProbeDesc>> expand_tracepoint(const ProbeDesc &probe) {
  std::vector<ProbeDesc> out;
  if (!has_wildcard(probe.target) && !has_wildcard(probe.func)) {
    ProbeDesc p = probe;
    p.name = "tracepoint:" + p.target + ":" + p.func;
    out.push_back(std::move(p));
    return out;
  }
  auto events = tracepoint_events();
  if (!events)
    return events.error();
  for (auto &ev : *events) {
    if (!glob_matches(probe.target, ev.category) || !glob_matches(probe.func, ev.event))
      continue;
    ProbeDesc p = probe;
    p.target = ev.category;
    p.func = ev.event;
    p.name = "tracepoint:" + ev.category + ":" + ev.event;
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<ProbeDesc>> expand_raw_tracepoint(const ProbeDesc &probe) {
  std::vector<ProbeDesc> out;
  // The kernel's own tracepoints only: a module's name (or a glob) that is not vmlinux matches
  // nothing.
  if (!probe.target.empty() && !glob_matches(probe.target, "vmlinux"))
    return out;
  if (!has_wildcard(probe.func)) {
    ProbeDesc p = probe;
    p.target.clear();
    p.name = "rawtracepoint:" + p.func;
    out.push_back(std::move(p));
    return out;
  }
  auto events = tracepoint_events();
  if (!events)
    return events.error();
  std::set<std::string> names;
  for (auto &ev : *events)
    // The syscalls category is made of per-syscall trace events built on raw_syscalls'
    // sys_enter/sys_exit; they are not raw tracepoints of their own.
    if (ev.category != "syscalls" && glob_matches(probe.func, ev.event))
      names.insert(ev.event);
  for (auto &n : names) {
    ProbeDesc p = probe;
    p.target.clear();
    p.func = n;
    p.name = "rawtracepoint:" + n;
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<ProbeDesc>> expand_uprobe(const ProbeDesc &probe, pid_t pid) {
  auto files = resolve_binaries(probe.target, pid);
  if (!files)
    return files.error();
  // GCC warns about a maybe-uninitialized std::optional here, so the address is kept apart.
  auto parsed = probe.offset == 0 ? parse_uprobe_address(probe.func) : std::nullopt;
  const bool is_address = parsed.has_value();
  const uint64_t address = parsed.value_or(0);
  bool wild = has_wildcard(probe.func);
  if (wild && probe.offset != 0)
    return make_error("", "a wildcard symbol cannot take an offset",
                      "probe one function with func+offset");

  // A wildcard binary with one symbol (uprobe:*:func -p PID): the files that define it.
  const bool wild_target = has_wildcard(probe.target);
  std::vector<ProbeDesc> out;
  for (auto &path : *files) {
    ProbeDesc base = probe;
    set_target(base, path, pid);
    if (!is_address && !wild && !wild_target) {
      base.name = uprobe_name(base);
      out.push_back(std::move(base));
      continue;
    }
    if (is_address && is_flat_binary(path)) {  // no segments: the address is a file offset
      base.func.clear();
      base.offset = address;
      base.name = uprobe_name(base);
      out.push_back(std::move(base));
      continue;
    }
    auto elf = ElfFile::open(path);
    if (!elf) {
      if (files->size() > 1)
        continue;  // -p with a wildcard: skip mapped files libelf cannot read
      return elf.error();
    }
    if (is_address) {
      const LoadSegment *seg = elf->segment_of(address);
      if (!seg || !seg->executable)
        return make_error("", "address " + hex(address) + " is not in an executable segment of " +
                                  path,
                          "give a virtual address from the binary's code (see nm or objdump -d)");
      base.func.clear();
      base.offset = address;
      base.name = uprobe_name(base);
      out.push_back(std::move(base));
      continue;
    }
    if (!wild) {
      if (!elf->match(probe.func).empty()) {
        base.name = uprobe_name(base);
        out.push_back(std::move(base));
      }
      continue;
    }
    for (const ElfSymbol *sym : elf->match(probe.func)) {
      ProbeDesc p = base;
      p.func = sym->name;
      p.name = uprobe_name(p);
      out.push_back(std::move(p));
    }
  }
  return out;
}

Result<std::vector<ProbeDesc>> expand_usdt(const ProbeDesc &probe, pid_t pid) {
  // With -p, an empty binary (`usdt::provider:probe`, `usdt:::probe`) is every file the
  // process maps, as `*` is (bpftrace).
  auto files = resolve_binaries(probe.target.empty() && pid > 0 ? "*" : probe.target, pid);
  if (!files)
    return files.error();
  // usdt:binary:probe names no provider, usdt:binary::probe an empty one: any will do.
  size_t colon = probe.func.find(':');
  std::string provider = colon == std::string::npos ? "*" : probe.func.substr(0, colon);
  if (provider.empty())
    provider = "*";
  std::string name = colon == std::string::npos ? probe.func : probe.func.substr(colon + 1);

  std::vector<ProbeDesc> out;
  for (auto &path : *files) {
    auto elf = ElfFile::open(path);
    if (!elf) {
      if (files->size() > 1)
        continue;
      return elf.error();
    }
    auto notes = read_usdt_notes(*elf);
    if (!notes)
      return notes.error();
    for (auto &n : unique_usdt_probes(*notes)) {
      if (!glob_matches(provider, n.provider) || !glob_matches(name, n.name))
        continue;
      ProbeDesc p = probe;
      set_target(p, path, pid);
      p.func = n.full_name();
      p.name = "usdt:" + p.target + ":" + p.func;
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace

bool has_wildcard(const std::string &text) { return text.find('*') != std::string::npos; }

std::string probe_file(const ProbeDesc &probe, pid_t pid) {
  return probe.in_process_root && pid > 0 ? process_root(pid) + probe.target : probe.target;
}

Result<std::vector<ProbeDesc>> expand_probe(const ProbeDesc &probe, pid_t pid) {
  Result<std::vector<ProbeDesc>> r = std::vector<ProbeDesc>{probe};
  switch (probe.kind) {
  case ProbeKind::Tracepoint: r = expand_tracepoint(probe); break;
  case ProbeKind::RawTracepoint: r = expand_raw_tracepoint(probe); break;
  case ProbeKind::Uprobe:
  case ProbeKind::Uretprobe: r = expand_uprobe(probe, pid); break;
  case ProbeKind::Usdt: r = expand_usdt(probe, pid); break;
  default: break;
  }
  if (r && r->empty()) {
    std::string why = probe.kind == ProbeKind::Usdt ? "no USDT probe matches"
                      : probe.kind == ProbeKind::Uprobe || probe.kind == ProbeKind::Uretprobe
                          ? "no function matches"
                          : "no tracepoint matches";
    std::string where =
        probe.kind == ProbeKind::RawTracepoint && probe.target.empty() ? "" : probe.target + ":";
    r = make_error("", why,
                   "list what exists with: rbt -l '" + std::string(probe_kind_name(probe.kind)) +
                       ":" + where + "*'",
                   ENOENT);
  }
  if (!r)
    r.error().context("attaching " + probe.name);
  return r;
}

}  // namespace rbt::runtime
