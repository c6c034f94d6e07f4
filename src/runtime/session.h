#pragma once
// A tracing session: one loaded BPF object and everything attached to it. The driver walks it
// through its lifecycle: load → BEGIN → attach → run → END → print maps; the destructor detaches
// everything, on every path, so no probe outlives rbt.

#include <bpf/libbpf.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "attach/attach.h"
#include "child.h"
#include "events.h"
#include "formats.h"
#include "exit_flag.h"
#include "lost_events.h"
#include "manifest.h"
#include "options.h"
#include "output/writer.h"
#include "result.h"
#include "ruby/ruby_stacks.h"
#include "skb_output.h"
#include "unwind/native_stacks.h"

namespace rbt::runtime {

struct SessionOptions {
  std::FILE *out = stdout;
  OutputFormat format = OutputFormat::Text;  // -f: text or json, for everything on `out`
  bool quiet = false;          // -q: no banner
  bool verbose = false;        // -v: libbpf's messages and full verifier logs
  bool dump_verifier = false;  // -d verifier: print every program's verifier log
  pid_t pid = -1;              // -p
  std::string command;         // -c
  bool attach_marker = false;  // print a marker on stderr once attached (the test runner's cue)
  // __BPFTRACE_NOTIFY_PROBES_ATTACHED is set: print that line on stdout once attached, before
  // BEGIN's output, as bpftrace does for its runtime tests' runner (some cases drop it with
  // `| tail -n +2`), so that bpftrace's tests run against rbt unchanged.
  bool bpftrace_notice = false;
  bool bench = false;  // --mode bench: run_benchmarks() instead of waiting for events
  // -f folded|pprof|speedscope|svg: the maps at exit go to `profile_out` in this format
  // (output/profile_maps.h); everything else still goes to `out` as text or JSON.
  std::optional<profile::Format> profile_format;
  std::FILE *profile_out = nullptr;
  std::string sum_unit = "count";  // --sum-unit: what sum() maps add up
  Timeline *timeline = nullptr;   // receives sample()/marker() events (rbt record); may be null
  bool rstack_needs_ruby = true;  // -p must be a Ruby when the script uses rstack (not record)
  uint32_t ringbuf_bytes = 0;     // the event ring buffer's size (a power of 2); 0: as compiled
  // A file with a minimal kernel BTF for the object's CO-RE relocations (core_btf.h), or ""
  // to let libbpf use the whole vmlinux BTF; may be unset.
  std::function<std::string(bpf_object *)> core_btf_path;
};

class Session {
public:
  Session(const Manifest &manifest, SessionOptions options);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  Status load(const std::vector<char> &elf);  // open, verify and load every program
  Status check_probes();                      // before BEGIN: what can fail without attaching
  Status start_command();                     // -c: fork the command, held before exec
  Status run_begin();
  Status attach();                            // every probe but BEGIN/END
  void announce();                            // the banner and the test runner's marker
  Status run();                               // until exit(), a signal, or the target's end
  Status run_end();
  Status print_maps();
  // Whether everything written to the output (stdout or -o FILE) got there: a full disk or
  // /dev/full is an error, not lost data with exit status 0.
  Status check_output();
  // Says, per map, how many updates were refused because the map was full (max_map_keys).
  void report_dropped_updates();
  void detach_probes() {  // probes stop; maps stay readable
    links_.clear();
    fd_links_.clear();
  }
  void detach();

  bool exit_requested() const { return events_ && events_->exit_requested(); }
  int exit_code() const { return events_ ? events_->exit_code() : 0; }
  const std::string &verifier_log() const { return log_; }
  // The probe whose program the kernel refused in load(), or null.
  const ProbeDesc *rejected_probe() const { return rejected_; }

private:
  bpf_program *program_for(const ProbeDesc &probe);
  Status run_benchmarks();  // --mode bench
  Status run_iterators();   // iter: probes
  std::vector<bpf_link *> iterators_;  // the links of iter: probes (owned by links_)
  // missing_probes = warn|ignore: whether probe `p`, which failed with `e`, is skipped (saying
  // so once under warn) rather than ending the run.
  bool skip_missing(const ProbeDesc &p, const Error &e);
  std::set<std::string> skipped_;
  void write_config();
  // Runs the probes of `kind` (BEGIN, END, self) once; `func` narrows self probes to a signal.
  Status run_special(ProbeKind kind, const std::string &func = {});
  Status write_profile(std::vector<MapSnapshot> &snapshots);

  Manifest manifest_;
  SessionOptions options_;
  std::unique_ptr<output::Writer> writer_;
  bpf_object *obj_ = nullptr;
  std::vector<Link> links_;
  std::vector<FdLink> fd_links_;  // uprobe_multi links
  // The uprobe_multi groups: program name -> its descs, in the order of their attach cookies.
  std::map<std::string, std::vector<const ProbeDesc *>> multi_groups() const;
  std::unique_ptr<EventReader> events_;
  std::unique_ptr<class LostEvents> lost_;
  std::unique_ptr<SkbOutput> skb_output_;  // skboutput()'s packets, when the script sends any
  BssCounter exit_flag_;  // kExitFlagName, when the script calls exit()
  void drain_events(const EventReader::Limit &limit = EventReader::Limit{});  // reads the ring buffer, then reports events it dropped
  std::unique_ptr<class StackPrinter> stacks_;
  std::unique_ptr<ruby::RubyStacks> ruby_;  // rstack: null when the script does not use it
  std::unique_ptr<NativeStacks> native_;    // nstack, rstack(native): null when unused
  ChildProcess child_;
  std::string log_;
  const ProbeDesc *rejected_ = nullptr;
  uint64_t start_wall_ns_ = 0, start_mono_ns_ = 0;  // when the probes attached (profiles)
};

}  // namespace rbt::runtime
