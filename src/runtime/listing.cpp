#include "listing.h"

#include <fnmatch.h>

#include <set>
#include <vector>

#include "manifest.h"
#include "perf_events.h"
#include "symbols/elf_file.h"
#include "symbols/library_resolver.h"
#include "symbols/usdt_notes.h"
#include "tracepoint_catalog.h"

namespace rbt::runtime {

namespace {

// The probe types and their short spellings, so `-l 't:syscalls:*'` works like the full name.
struct TypeName {
  const char *name, *alias;
};
const TypeName kTypes[] = {
    {"tracepoint", "t"}, {"rawtracepoint", "rt"}, {"software", "s"}, {"hardware", "h"},
    {"uprobe", "u"},     {"uretprobe", "ur"},     {"usdt", "U"},   {"interval", "i"},
    {"profile", "p"},    {"iter", "it"},
};

bool matches(const std::string &glob, const std::string &text) {
  return glob.empty() || fnmatch(glob.c_str(), text.c_str(), 0) == 0;
}

// Printing collects nothing: each lister writes lines that match the pattern straight out.
class Lister {
public:
  Lister(std::string pattern, pid_t pid, bool verbose, std::FILE *out)
      : pattern_(std::move(pattern)), pid_(pid), verbose_(verbose), out_(out) {}

  // A pattern without a type ("*openat*") is matched against the whole name and its last part.
  bool wanted(const std::string &name) const {
    if (pattern_.empty() || matches(pattern_, name))
      return true;
    if (pattern_.find(':') != std::string::npos)
      return false;
    std::string last = name.substr(name.find_last_of(':', name.size() - 2) + 1);
    return matches(pattern_, last);
  }

  Status tracepoints() {
    auto events = tracepoint_events();
    if (!events)
      return events.error();
    for (auto &ev : *events) {
      std::string name = "tracepoint:" + ev.category + ":" + ev.event;
      if (!wanted(name))
        continue;
      fprintf(out_, "%s\n", name.c_str());
      if (verbose_)
        if (auto fields = tracepoint_fields(ev.category, ev.event); fields)
          for (auto &f : *fields)
            fprintf(out_, "    %s;\n", f.c_str());
    }
    return Ok{};
  }

  // Raw tracepoints are the kernel's tracepoints themselves; the syscalls category's events
  // are built on raw_syscalls:sys_enter/sys_exit and have none of their own.
  Status raw_tracepoints() {
    auto events = tracepoint_events();
    if (!events)
      return events.error();
    std::set<std::string> names;
    for (auto &ev : *events)
      if (ev.category != "syscalls")
        names.insert("rawtracepoint:" + ev.event);
    for (auto &n : names) {
      if (!wanted(n))
        continue;
      fprintf(out_, "%s\n", n.c_str());
      if (verbose_)  // as bpftrace: the arguments a raw tracepoint's probe gets, from BTF
        for (auto &arg : raw_tracepoint_args(n.substr(n.find(':') + 1)))
          fprintf(out_, "    %s\n", arg.c_str());
    }
    return Ok{};
  }

  void perf_events(bool hardware) {
    for (auto &e : rbt::perf_events()) {
      if (e.hardware != hardware)
        continue;
      for (const char *n : {e.name, e.alias}) {
        if (!n)
          continue;
        std::string name = std::string(hardware ? "hardware:" : "software:") + n + ":";
        if (wanted(name))
          fprintf(out_, "%s\n", name.c_str());
      }
    }
  }

  // interval:UNIT: and profile:UNIT: (their count is the script's choice).
  void timers(const char *type) {
    for (const char *unit : {"hz", "us", "ms", "s"}) {
      std::string name = std::string(type) + ":" + unit + ":";
      if (wanted(name))
        fprintf(out_, "%s\n", name.c_str());
    }
  }

  // iter:NAME, and with -v the fields of its `ctx` (struct bpf_iter__NAME).
  void iterators() {
    for (const std::string &it : iterator_names()) {
      std::string name = "iter:" + it;
      if (!wanted(name))
        continue;
      fprintf(out_, "%s\n", name.c_str());
      if (verbose_)
        (void)list_kernel_struct("struct bpf_iter__" + it, out_);
    }
  }

  // uprobe:BINARY[:SYMBOL-GLOB] — function symbols of the binary or library.
  Status uprobes(const std::string &type, const std::string &target, const std::string &rest) {
    auto files = resolve_binaries(target, pid_);
    if (!files)
      return files.error();
    for (auto &path : *files) {
      auto elf = ElfFile::open(path);
      if (!elf) {
        if (files->size() > 1)
          continue;
        return elf.error();
      }
      for (const ElfSymbol *sym : elf->match(rest.empty() ? "*" : rest))
        fprintf(out_, "%s:%s:%s\n", type.c_str(), path.c_str(), sym->name.c_str());
    }
    return Ok{};
  }

  // usdt:BINARY[:[PROVIDER:]NAME-GLOB] — USDT probes of the binary or library.
  Status usdts(const std::string &target, const std::string &rest) {
    auto files = resolve_binaries(target, pid_);
    if (!files)
      return files.error();
    size_t colon = rest.find(':');
    std::string provider = colon == std::string::npos ? "*" : rest.substr(0, colon);
    std::string name = colon == std::string::npos ? rest : rest.substr(colon + 1);
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
        if (!matches(provider, n.provider) || !matches(name, n.name))
          continue;
        fprintf(out_, "usdt:%s:%s\n", path.c_str(), n.full_name().c_str());
        if (!verbose_)
          continue;
        fprintf(out_, "    arg count: %d\n", n.arg_count);
        if (n.semaphore)
          fprintf(out_, "    semaphore: 0x%llx\n", static_cast<unsigned long long>(n.semaphore));
        else
          fprintf(out_, "    semaphore: none\n");
      }
    }
    return Ok{};
  }

private:
  std::string pattern_;
  pid_t pid_;
  bool verbose_;
  std::FILE *out_;
};

std::vector<std::string> split_colon(const std::string &s, size_t max_parts) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (parts.size() + 1 < max_parts) {
    size_t colon = s.find(':', start);
    if (colon == std::string::npos)
      break;
    parts.push_back(s.substr(start, colon - start));
    start = colon + 1;
  }
  parts.push_back(s.substr(start));
  return parts;
}

}  // namespace

Status list_probes(const std::string &patterns, pid_t pid, bool verbose, std::FILE *out) {
  // Several patterns, comma-separated: `kprobe:vfs_read,struct file`.
  if (size_t comma = patterns.find(','); comma != std::string::npos) {
    if (Status s = list_probes(patterns.substr(0, comma), pid, verbose, out); !s)
      return s;
    return list_probes(patterns.substr(comma + 1), pid, verbose, out);
  }
  const std::string &pattern = patterns;
  if (pattern.rfind("struct ", 0) == 0 || pattern.rfind("union ", 0) == 0)
    return list_kernel_struct(pattern, out);
  // Spell the type in full so the pattern matches the printed names.
  std::vector<std::string> parts = split_colon(pattern, 3);
  std::string type;
  for (auto &t : kTypes)
    if (parts.size() > 1 && (parts[0] == t.name || parts[0] == t.alias))
      type = t.name;
  std::string full = type.empty() ? pattern : type + pattern.substr(parts[0].size());
  // `*:./bin:*`, `u*:lib:*`: a wildcarded type lists each type it matches, as that type's
  // pattern (uretprobe lists as uprobe does, so it is left out: every line would repeat). A type
  // that cannot list what the rest names (no such file) lists nothing.
  if (type.empty() && parts.size() > 1 && parts[0].find_first_of("*?[") != std::string::npos) {
    for (auto &t : kTypes)
      if (std::string_view(t.name) != "uretprobe" && matches(parts[0], t.name))
        (void)list_probes(t.name + pattern.substr(parts[0].size()), pid, verbose, out);
    return Ok{};
  }

  Lister lister(full, pid, verbose, out);
  Status s = Ok{};
  if (type == "uprobe" || type == "uretprobe")
    s = lister.uprobes(type, parts[1], parts.size() > 2 ? parts[2] : "");
  else if (type == "usdt")
    s = lister.usdts(parts[1], parts.size() > 2 ? parts[2] : "");
  else if (type == "tracepoint")
    s = lister.tracepoints();
  else if (type == "rawtracepoint")
    s = lister.raw_tracepoints();
  else if (type == "software" || type == "hardware")
    lister.perf_events(type == "hardware");
  else if (type == "interval" || type == "profile")
    lister.timers(type.c_str());
  else if (type == "iter")
    lister.iterators();
  else {
    s = lister.tracepoints();
    if (s)
      s = lister.raw_tracepoints();
    lister.perf_events(false);
    lister.perf_events(true);
    lister.timers("interval");
    lister.timers("profile");
    lister.iterators();
    // With -p: the uprobes and USDT probes of every file the process maps.
    if (s && pid > 0)
      s = lister.uprobes("uprobe", "*", "");
    if (s && pid > 0)
      s = lister.usdts("*", "");
  }
  if (!s)
    s.error().context("listing probes" + (pattern.empty() ? "" : " '" + pattern + "'"));
  return s;
}

}  // namespace rbt::runtime
