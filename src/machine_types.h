#pragma once
// Answers the type checker's questions about this machine (sema::Environment) from the
// runtime: tracepoint formats from tracefs, kernel structs from BTF, probe expansion. Lives in
// the driver, the one place that may see both the parser and the runtime.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "btf_types.h"
#include "options.h"
#include "sema/sema.h"

namespace rbt {

class MachineTypes {
public:
  // The environment for `options`; valid while this object lives.
  sema::Environment environment(const Options &options);
  // The newest BPF instruction set the running kernel takes ("v4" from Linux 6.6, else "v3").
  static std::string bpf_cpu();
  // Linux 6.6+ (the same release as the v4 instructions): uprobe_multi links
  // (BPF_TRACE_UPROBE_MULTI), one link for many functions of a binary.
  static bool has_uprobe_multi() { return bpf_cpu() == "v4"; }
  // The CPUs this process may run on (its affinity mask), for compiling on several threads.
  static unsigned usable_cpus();
  // rbt runs in a pid namespace other than the kernel's initial one (a container, `unshare
  // --pid`), whose pids `pid` and `tid` then give, as bpftrace's (curr_ns).
  static bool in_child_pid_namespace();

  // Warnings the checks printed while the script was checked (--unsafe's), for the object
  // cache to print again when it reuses the object.
  const std::string &warnings() const { return warnings_; }
  // The binaries whose symbols, notes or code the checks read: the compiled object depends on
  // their contents, so the cache checks they are unchanged before reusing it. Each is a path
  // and whether it is inside the -p process's root (then the path is the process's name).
  const std::set<std::pair<std::string, bool>> &files_read() const { return files_read_; }
  // With -p, what each probe's binary (`libruby`, `/usr/bin/*`) resolved to through that
  // process (its mapped files, its root): runtime::resolution_in_process. Another process may
  // map other files; the cache compares this before it reuses the object for it.
  const std::map<std::string, std::vector<std::string>> &resolutions() const {
    return resolutions_;
  }

private:
  const RecordLayout *tracepoint_format(const ProbeDesc &probe);

  runtime::KernelTypes kernel_;
  std::map<std::string, std::unique_ptr<RecordLayout>> tracepoints_;
  std::string warnings_;
  std::set<std::pair<std::string, bool>> files_read_;
  std::map<std::string, std::vector<std::string>> resolutions_;
};

}  // namespace rbt
