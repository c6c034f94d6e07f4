#include "ruby/ruby_stacks.h"

#include <bpf/bpf.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "ruby/ruby_elf.h"
#include "ruby/ruby_symbols.h"
#include "symbols/process_maps.h"

namespace rbt::runtime::ruby {

namespace {

int map_fd(bpf_object *obj, const char *name) {
  const bpf_map *m = bpf_object__find_map_by_name(obj, name);
  return m ? bpf_map__fd(m) : -1;
}

// A -c child is polled every few milliseconds until its interpreter is mapped and relocated;
// this bounds the wait for a command that never becomes Ruby (~5 s).
constexpr int kWatchPolls = 1000;

std::string bounded(const char *s, size_t cap) { return std::string(s, strnlen(s, cap)); }

// How BPF finds the process's threads, for -v.
std::string lookup_text(const rbt_ruby_proc &proc) {
  char how[96];
  if (proc.tls_kind == RBT_RUBY_THREAD_LIST)
    snprintf(how, sizeof(how), "threads list (ruby_current_vm_ptr at 0x%llx)",
             static_cast<unsigned long long>(proc.vm_ptr));
  else
    snprintf(how, sizeof(how), "TLS %s modid %llu offset %lld",
             proc.tls_kind == RBT_RUBY_TLS_DTV ? "dtv" : "tpoff",
             static_cast<unsigned long long>(proc.tls_modid),
             static_cast<long long>(proc.tls_offset));
  return how;
}

}  // namespace

std::unique_ptr<RubyStacks> RubyStacks::open(bpf_object *obj, bool verbose) {
  if (map_fd(obj, "rbt_ruby_procs") < 0)
    return nullptr;
  return std::unique_ptr<RubyStacks>(new RubyStacks(obj, verbose));
}

RubyStacks::RubyStacks(bpf_object *obj, bool verbose)
    : verbose_(verbose), layouts_fd_(map_fd(obj, "rbt_ruby_layouts")),
      procs_fd_(map_fd(obj, "rbt_ruby_procs")), unknown_fd_(map_fd(obj, "rbt_ruby_unknown")),
      stacks_fd_(map_fd(obj, "rbt_ruby_stacks")), more_fd_(map_fd(obj, "rbt_ruby_stacks_more")),
      spill_fd_(map_fd(obj, "rbt_ruby_stacks_spill")),
      frames_fd_(map_fd(obj, "rbt_ruby_frames")),
      born_fd_(map_fd(obj, "rbt_ruby_born")), epoch_fd_(map_fd(obj, "rbt_ruby_epoch")),
      discovery_(RubyDiscovery::open(obj, verbose)) {}

void RubyStacks::write_proc(uint32_t pid, const rbt_ruby_proc &proc) {
  bpf_map_update_elem(procs_fd_, &pid, &proc, BPF_ANY);
  uint32_t user = 1;
  ++epoch_;
  bpf_map_update_elem(epoch_fd_, &user, &epoch_, BPF_ANY);
}

Status RubyStacks::attach_discovery() {
  if (!discovery_)
    return Ok{};
  std::vector<pid_t> running;
  if (auto s = discovery_->attach(running); !s)
    return s;
  // Processes that run already were not found by the early uprobe: inspect them now rather
  // than on their first event.
  for (pid_t pid : running) {
    if (known_in_bpf(pid))
      continue;
    Inspection in = inspect_process(pid);
    if (in.outcome == InspectOutcome::Ruby)
      record(pid, in);
  }
  return Ok{};
}

void RubyStacks::probe_executable(const std::string &path) {
  if (discovery_ && !path.empty())
    discovery_->binary_for(path);  // -1 for a file that is no Ruby: nothing to do
}

bool RubyStacks::known_in_bpf(pid_t pid) {
  uint32_t key = static_cast<uint32_t>(pid);
  rbt_ruby_proc proc{};
  if (bpf_map_lookup_elem(procs_fd_, &key, &proc) != 0)
    return false;
  return !proc.start || proc.start == process_start_ticks(pid);
}

void RubyStacks::take_born() {
  if (born_fd_ < 0)
    return;
  uint64_t key, next;
  std::vector<uint64_t> keys;
  void *prev = nullptr;
  while (bpf_map_get_next_key(born_fd_, prev, &next) == 0) {
    keys.push_back(next);
    key = next;
    prev = &key;
  }
  for (uint64_t k : keys) {
    rbt_ruby_born born{};
    if (bpf_map_lookup_elem(born_fd_, &k, &born) != 0)
      continue;
    bpf_map_delete_elem(born_fd_, &k);
    pid_t pid = static_cast<pid_t>(k >> 32);
    RubyProcess p;
    const RubyDiscovery::Binary *b =
        born.binary != RBT_RUBY_NO_BINARY && discovery_ ? discovery_->binary(born.binary) : nullptr;
    if (b) {
      p.binary = b->path;
      p.elf = b->elf;
      p.version = b->version;
      p.load_bias = born.bias;
    } else if (born.parent_tgid) {
      auto parent = processes_.find(key_of(static_cast<pid_t>(born.parent_tgid), born.parent_image));
      if (parent == processes_.end())
        continue;
      p = parent->second;
    } else {
      continue;
    }
    p.pid = pid;
    uint32_t tgid = static_cast<uint32_t>(pid);
    // The facts as BPF holds them, while they are this image's (for find_symbols' update).
    rbt_ruby_proc now{};
    bool current = bpf_map_lookup_elem(procs_fd_, &tgid, &now) == 0 &&
                   now.image == static_cast<uint32_t>(k);
    if (current)
      p.proc = now;
    else
      p.proc.image = static_cast<uint32_t>(k);
    processes_[k] = p;
    if (verbose_ && current)
      fprintf(stderr, "rbt: rstack: pid %d runs Ruby %s (%s), %s, found by BPF%s\n", pid,
              p.version.c_str(), p.binary.c_str(), lookup_text(p.proc).c_str(),
              born.parent_tgid ? " at fork" : "");
    else if (verbose_)
      fprintf(stderr, "rbt: rstack: pid %d ran Ruby %s (%s), found by BPF, until an exec\n", pid,
              p.version.c_str(), p.binary.c_str());
    if (current && !now.global_symbols)
      unnamed_[k] = kWatchPolls;
  }
}

Status RubyStacks::fill_layouts() {
  for (uint32_t i = 0; i < RBT_RUBY_LAYOUT_COUNT; i++)
    if (bpf_map_update_elem(layouts_fd_, &i, &rbt_ruby_layouts_table[i], BPF_ANY) != 0)
      return make_error("loading Ruby layouts for rstack", strerror(errno));
  return Ok{};
}

void RubyStacks::record(pid_t pid, Inspection &in) {
  uint32_t key = static_cast<uint32_t>(pid);
  // The process exec'd while it was inspected: what was found is of the image before, and
  // writing it would overwrite what discovery wrote for the new one (a `-c` child inspected as
  // the copy of rbt it was, its verdict landing after it became ruby). The new image is
  // inspected on its own first events.
  if (process_exe_identity(pid) != std::pair{in.exe_dev, in.exe_ino})
    return;
  if (in.outcome == InspectOutcome::Ruby) {
    rbt_ruby_proc &facts = in.process.proc;
    facts.image = static_cast<uint32_t>(facts.start);
    facts.binary = RBT_RUBY_NO_BINARY;
    facts.bias = in.process.load_bias;
    // A Ruby file first seen now gets its early uprobe: the next process of it is found by BPF.
    int file = discovery_ ? discovery_->binary_for(in.process.elf->path()) : -1;
    if (file >= 0 && facts.global_symbols)
      discovery_->set_global_symbols(static_cast<uint32_t>(file),
                                     facts.global_symbols - in.process.load_bias);
    // A process inspected before its VM filled the symbol table: the file says where it is,
    // so BPF names C methods from the first one (an inspection must not forget what BPF knew).
    if (!facts.global_symbols && file >= 0)
      if (uint64_t vaddr = discovery_->binary(static_cast<uint32_t>(file))->facts.global_symbols_vaddr)
        facts.global_symbols = in.process.load_bias + vaddr;
    write_proc(key, facts);
    uint64_t k = key_of(pid, facts.image);
    processes_[k] = in.process;
    if (!in.process.proc.global_symbols)
      unnamed_[k] = kWatchPolls;
    const rbt_ruby_proc &proc = in.process.proc;
    if (verbose_)
      fprintf(stderr, "rbt: rstack: pid %d runs Ruby %s (%s), %s%s\n", pid,
              in.process.version.c_str(), in.process.binary.c_str(), lookup_text(proc).c_str(),
              proc.global_symbols ? ", symbol table found" : "");
  } else if (in.outcome == InspectOutcome::NotRuby || in.layout_mismatch) {
    // A layout that still fails its check once the process had time to start: say so once,
    // then leave the process alone (its stacks would be garbage).
    if (in.layout_mismatch)
      fprintf(stderr, "rbt: error: %s: %s\n%s%s%s", in.error.what.c_str(), in.error.why.c_str(),
              in.error.hint.empty() ? "" : "hint: ", in.error.hint.c_str(),
              in.error.hint.empty() ? "" : "\n");
    // Remember the answer in BPF so the probes stop asking.
    rbt_ruby_proc none{};
    none.layout = in.layout_mismatch || in.no_layout ? RBT_RUBY_BAD_LAYOUT : RBT_RUBY_NOT_RUBY;
    none.start = process_start_ticks(pid);
    none.image = static_cast<uint32_t>(none.start);
    none.binary = RBT_RUBY_NO_BINARY;
    write_proc(key, none);
    if (verbose_)
      fprintf(stderr, "rbt: rstack: pid %d: %s\n", pid, in.error.why.c_str());
  }
}

Status RubyStacks::add_process(pid_t pid, bool may_be_early) {
  Inspection in = inspect_process(pid);
  // The layout check reads a running thread's frames: a frame changing under it can fail it
  // once; a wrong layout fails every time.
  for (int tries = 0; !may_be_early && in.layout_mismatch && tries < 3; tries++) {
    usleep(20000);
    in = inspect_process(pid);
  }
  if (in.layout_mismatch && !may_be_early)
    return in.error;
  if (in.outcome == InspectOutcome::Ruby) {
    record(pid, in);
    return Ok{};
  }
  if (may_be_early || in.outcome == InspectOutcome::NotYet) {
    watched_[pid] = kWatchPolls;
    return Ok{};
  }
  Error e = in.error;
  if (e.hint.empty())
    e.hint = "rstack needs a process running Ruby 2.7 to 3.4 (give -p the pid of a ruby)";
  return e;
}

void RubyStacks::find_symbols() {
  for (auto it = unnamed_.begin(); it != unnamed_.end();) {
    RubyProcess &p = processes_[it->first];
    p.proc.global_symbols = find_global_symbols(p.pid, *p.elf, p.load_bias, 0);
    uint32_t key = static_cast<uint32_t>(p.pid);
    rbt_ruby_proc now{};
    // Only into the record of the image it was found in: the process may have exec'd since.
    bool current = bpf_map_lookup_elem(procs_fd_, &key, &now) == 0 && now.image == p.proc.image;
    if (p.proc.global_symbols && current) {
      now.global_symbols = p.proc.global_symbols;
      write_proc(key, now);
      if (now.binary != RBT_RUBY_NO_BINARY && discovery_)
        discovery_->set_global_symbols(now.binary, p.proc.global_symbols - p.load_bias);
      if (verbose_)
        fprintf(stderr, "rbt: rstack: pid %d: Ruby's symbol table found\n", p.pid);
    }
    if (!current)
      it->second = 0;  // gone, or another image
    if (p.proc.global_symbols || --it->second <= 0)
      it = unnamed_.erase(it);
    else
      ++it;
  }
}

// Stacks the probes recorded in the preallocated spill map (rbt_ruby_stacks_spill) move to the
// main map, so that the spill has room for the next ones. Inserted before deleted: a probe
// looking one up always finds it in one of the two.
void RubyStacks::drain_spill() {
  uint64_t key, next;
  std::vector<uint64_t> ids;
  void *prev = nullptr;
  while (bpf_map_get_next_key(spill_fd_, prev, &next) == 0) {
    ids.push_back(next);
    key = next;
    prev = &key;
  }
  auto stack = std::make_unique<rbt_ruby_stack>();
  for (uint64_t id : ids) {
    if (bpf_map_lookup_elem(spill_fd_, &id, stack.get()) != 0)
      continue;
    if (bpf_map_update_elem(stacks_fd_, &id, stack.get(), BPF_NOEXIST) == 0 || errno == EEXIST)
      bpf_map_delete_elem(spill_fd_, &id);
  }
}

// A watched process (a -c command, one met early) that is not Ruby and whose executable neither
// is a Ruby nor links libruby: it is recorded as not Ruby at once, so its samples say so,
// instead of "not inspected yet" for the whole watch. The -c child still running rbt's image
// (before its exec) is not judged; an exec later gives the process a new image, inspected anew.
// The verdict is kept per executable file: a watch polls every 2 ms, and a ruby that has not
// started its VM yet would have its ELF file read on each.
bool RubyStacks::runs_no_ruby(pid_t pid, const Inspection &in) {
  if (in.outcome != InspectOutcome::NotRuby || in.no_layout || runs_own_image(pid))
    return false;
  std::string exe_path = "/proc/" + std::to_string(pid) + "/exe";
  struct stat st{};
  if (stat(exe_path.c_str(), &st) != 0)
    return false;
  auto [verdict, inserted] = exe_runs_no_ruby_.try_emplace({st.st_dev, st.st_ino}, false);
  if (inserted) {
    auto exe = ElfFile::open(exe_path);
    verdict->second = exe && !may_run_ruby(*exe);
  }
  return verdict->second;
}

void RubyStacks::poll() {
  take_born();
  if (discovery_)
    discovery_->judge_execs();
  find_symbols();
  drain_spill();
  for (auto it = watched_.begin(); it != watched_.end();) {
    Inspection in = inspect_process(it->first);
    if (in.outcome == InspectOutcome::Ruby || --it->second <= 0 || runs_no_ruby(it->first, in)) {
      record(it->first, in);
      it = watched_.erase(it);
    } else {
      ++it;
    }
  }
  uint32_t key, next;
  std::vector<uint32_t> seen;
  void *prev = nullptr;
  while (bpf_map_get_next_key(unknown_fd_, prev, &next) == 0) {
    seen.push_back(next);
    key = next;
    prev = &key;
  }
  for (uint32_t pid : seen) {
    // BPF's discovery may have found it since the probe asked.
    if (!watched_.count(static_cast<pid_t>(pid)) && !known_in_bpf(static_cast<pid_t>(pid))) {
      Inspection in = inspect_process(static_cast<pid_t>(pid));
      if (in.outcome == InspectOutcome::NotYet)
        watched_[static_cast<pid_t>(pid)] = kWatchPolls;
      else
        record(static_cast<pid_t>(pid), in);
    }
    // Only now: samples taken while it was inspected would have asked again.
    bpf_map_delete_elem(unknown_fd_, &pid);
  }
}

std::string RubyStacks::cfunc_name(uint64_t key, uint64_t addr) {
  auto it = processes_.find(key);
  if (it == processes_.end()) {
    take_born();  // a process BPF found since the last poll
    it = processes_.find(key);
  }
  if (it == processes_.end() || !it->second.elf)
    return {};
  auto sym = it->second.elf->symbolize(addr - it->second.load_bias);
  if (!sym)
    return {};
  return sym->substr(0, sym->find('+'));
}

std::string RubyStacks::interpreter(pid_t pid) const {
  auto it = processes_.lower_bound(key_of(pid, 0));
  std::string binary;
  for (; it != processes_.end() && it->second.pid == pid; ++it)
    binary = it->second.binary;  // the latest start of this pid
  return binary;
}

static std::string empty_stack_line(uint64_t why) {
  const char *reason = nullptr;
  switch (why) {
  case RBT_RUBY_EMPTY_NOT_INSPECTED:
    reason = "process not inspected yet";
    break;
  case RBT_RUBY_EMPTY_NOT_RUBY_PROCESS:
    reason = "not a Ruby process";
    break;
  case RBT_RUBY_EMPTY_UNKNOWN_LAYOUT:
    reason = "unknown Ruby layout";
    break;
  case RBT_RUBY_EMPTY_NOT_RUBY_THREAD:
    reason = "not a Ruby thread";
    break;
  case RBT_RUBY_EMPTY_NOT_INITIALISED:
    reason = "Ruby VM not yet initialised";
    break;
  case RBT_RUBY_EMPTY_NO_FRAMES:
    reason = "no method or block frame on the VM stack";
    break;
  }
  return reason ? std::string("[no Ruby frames: ") + reason + "]" : "[no Ruby frames]";
}

static std::string cut_line(uint32_t truncated, bool exact) {
  uint32_t cut = truncated & ~(RBT_RUBY_TRUNCATED_AT_LEAST | RBT_RUBY_CUT_EXACT);
  if (!exact)
    return "[... more frames]";
  std::string frames = cut == 1 ? " more frame]" : " more frames]";
  if (truncated & RBT_RUBY_TRUNCATED_AT_LEAST)
    return cut ? "[... at least " + std::to_string(cut) + frames : "[... more frames not read]";
  return "[... " + std::to_string(cut) + frames;
}

std::vector<std::string> RubyStacks::frames(uint64_t stack_id, uint32_t cut) {
  std::vector<std::string> out;
  for (const auto &frame : frame_records(stack_id, cut))
    out.push_back(profile::frame_text(frame));
  return out;
}

std::vector<profile::Frame> RubyStacks::frame_records(uint64_t stack_id, uint32_t cut,
                                                      std::vector<uint64_t> *cfuncs) {
  using profile::Frame;
  using profile::FrameKind;
  std::vector<Frame> out;
  // Each frame's C function (0 but for C methods), in step with `out`, for the mixed stack.
  std::vector<uint64_t> unused;
  std::vector<uint64_t> &cf = cfuncs ? *cfuncs : unused;
  auto add = [&](Frame frame, uint64_t cfunc = 0) {
    out.push_back(std::move(frame));
    cf.push_back(cfunc);
  };
  if (!(stack_id & 1)) {
    add(Frame{FrameKind::Truncated, empty_stack_line(stack_id), "", 0, ""});
    return out;
  }
  auto stack = std::make_unique<rbt_ruby_stack>();
  if (bpf_map_lookup_elem(stacks_fd_, &stack_id, stack.get()) != 0 &&
      bpf_map_lookup_elem(more_fd_, &stack_id, stack.get()) != 0 &&
      bpf_map_lookup_elem(spill_fd_, &stack_id, stack.get()) != 0) {
    add(Frame{FrameKind::Truncated, "[unknown Ruby stack]", "", 0, ""});
    return out;
  }
  uint32_t count = stack->count < RBT_RUBY_MAX_DEPTH ? stack->count : RBT_RUBY_MAX_DEPTH;
  for (uint32_t i = 0; i < count; i++) {
    rbt_ruby_frame_key key{stack->frames[i].addr, stack->frames[i].pc, stack->tgid, stack->start};
    rbt_ruby_frame f{};
    if (bpf_map_lookup_elem(frames_fd_, &key, &f) != 0) {
      add(Frame{FrameKind::Truncated, "[frame evicted]", "", 0, ""});
      continue;
    }
    std::string label = bounded(f.label, sizeof(f.label));
    if (f.kind == RBT_RUBY_FRAME_CFUNC) {
      if (label.empty())
        label = cfunc_name(key_of(static_cast<pid_t>(stack->tgid), stack->start), f.cfunc);
      if (label.empty()) {
        char hex[32];
        snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(f.cfunc));
        label = hex;
      }
      add(Frame{FrameKind::RubyCfunc, label, "", 0, ""}, f.cfunc);
    } else {
      add(Frame{FrameKind::Ruby, label, bounded(f.path, sizeof(f.path)), f.line, ""});
    }
  }
  // A map key stands for stacks cut by different numbers of frames: it says only that some
  // were; a printed event knows its own count.
  if (cut & RBT_RUBY_CUT_EXACT) {
    if (cut & ~RBT_RUBY_CUT_EXACT)
      add(Frame{FrameKind::Truncated, cut_line(cut, true), "", 0, ""});
  } else if (stack->truncated) {
    add(Frame{FrameKind::Truncated, cut_line(stack->truncated, false), "", 0, ""});
  }
  return out;
}

}  // namespace rbt::runtime::ruby
