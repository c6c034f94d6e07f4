#pragma once
// The user-space half of rstack: fills the BPF walker's maps (layouts, per-process facts),
// discovers Ruby processes the probes met (rbt_ruby_unknown), and turns a stack id back into
// frame lines. Everything it prints comes from the stacks and frames maps, so stacks of
// processes that have exited print as well as live ones.

#include <bpf/libbpf.h>
#include <sys/types.h>

#include <map>
#include <utility>
#include <memory>
#include <string>
#include <vector>

#include "profile.h"
#include "result.h"
#include "ruby/ruby_discovery.h"
#include "ruby/ruby_process.h"

namespace rbt::runtime::ruby {

class RubyStacks {
public:
  // Null when the object does not use rstack (it has no rbt_ruby_procs map).
  static std::unique_ptr<RubyStacks> open(bpf_object *obj, bool verbose);

  // Loads the layout records into BPF. Call once after the object is loaded.
  Status fill_layouts();
  // Before the script's probes: attaches discovery (ruby_discovery.h), so that processes
  // started from now on are found by BPF, and records the Ruby processes already running.
  Status attach_discovery();
  // The -c command's executable, probed before it runs: a ruby whose interpreter is linked
  // into it (no libruby) is then known to BPF at its exec, and its first events have stacks
  // without waiting for user space to meet the file (a short script was over by then).
  void probe_executable(const std::string &path);
  // Inspects `pid` now (-p): an error when it is not a Ruby rstack supports. With
  // `may_be_early` (a -c child just exec'd) an interpreter not mapped yet is no error: the
  // process is watched and inspected again by poll().
  Status add_process(pid_t pid, bool may_be_early = false);
  // Inspects processes the probes met since the last call and watched ones. Cheap when there
  // is nothing new; the session calls it every few milliseconds while running.
  void poll();
  // Whether poll() still has work that needs a short timer (a watched -c child).
  bool watching() const { return !watched_.empty() || !unnamed_.empty(); }

  // Frame lines of a stack, leaf first: `label (path:line)`, C methods `label <cfunc>`, and a
  // last line when the walk hit the depth limit: `[... N more frames]` when `cut` carries this
  // event's count (RBT_RUBY_CUT_EXACT), else `[... more frames]`. An empty stack (even id) is
  // one line saying why: `[no Ruby frames: not a Ruby thread]`.
  std::vector<std::string> frames(uint64_t stack_id, uint32_t cut = 0);
  // The same stack as structured frames for the profile formats, leaf first: Ruby frames with
  // label, path and line, C methods by name, a Truncated frame for the depth limit.
  // `cfuncs`, when given, receives each frame's C function address (0 but for C methods).
  std::vector<profile::Frame> frame_records(uint64_t stack_id, uint32_t cut = 0,
                                            std::vector<uint64_t> *cfuncs = nullptr);
  // The interpreter's binary (libruby or the ruby executable) as `pid` sees it; empty if not
  // known as a Ruby.
  std::string interpreter(pid_t pid) const;

private:
  RubyStacks(bpf_object *obj, bool verbose);
  void record(pid_t pid, Inspection &inspection);
  // Takes in the processes BPF found (rbt_ruby_born): how to name their C functions.
  void take_born();
  // Whether BPF already holds Ruby facts for the running process `pid`.
  bool known_in_bpf(pid_t pid);
  std::string cfunc_name(uint64_t key, uint64_t addr);
  // processes_ and unnamed_ are keyed by (pid, low 32 bits of its start time), as the BPF
  // records are: a pid reused by a new process is another process.
  static uint64_t key_of(pid_t pid, uint64_t start) {
    return static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32 | static_cast<uint32_t>(start);
  }

  bool verbose_;
  int layouts_fd_, procs_fd_, unknown_fd_, stacks_fd_, more_fd_, spill_fd_, frames_fd_, born_fd_;
  // rbt_ruby_epoch's user-space counter: moved after every write of rbt_ruby_procs, so BPF
  // drops its per-CPU copies of records (stdlib/bpf/ruby_stack.bpf.c).
  int epoch_fd_;
  uint32_t epoch_ = 0;
  void write_proc(uint32_t pid, const rbt_ruby_proc &proc);
  void drain_spill();
  std::unique_ptr<RubyDiscovery> discovery_;
  std::map<uint64_t, RubyProcess> processes_;  // kept after exit, to name C functions
  std::map<pid_t, int> watched_;            // pid → polls left before giving up
  // Whether a watched, not yet Ruby process should be recorded as not Ruby now (ruby_stacks.cpp).
  bool runs_no_ruby(pid_t pid, const Inspection &in);
  std::map<std::pair<dev_t, ino_t>, bool> exe_runs_no_ruby_;  // by executable: no Ruby in it
  // Ruby processes whose symbol table was not there yet (a -c child is inspected before Ruby
  // has initialised): pid → polls left.
  std::map<uint64_t, int> unnamed_;
  void find_symbols();
};

}  // namespace rbt::runtime::ruby
