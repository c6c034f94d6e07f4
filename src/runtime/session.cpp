#include "session.h"

#include <cstdio>
#include <bpf/bpf.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <cstdarg>
#include <cstring>

#include "cgroup_path.h"
#include "clock_ns.h"
#include "core_btf.h"
#include "lost_events.h"
#include "maps.h"
#include "output/profile_maps.h"
#include "output/value_format.h"
#include "output/timestamp.h"
#include "stacks.h"
#include "tracefs.h"
#include "unwind/native_frames.h"
#include "warnings.h"

namespace rbt::runtime {

namespace {

// How often the ring buffer is read when the programs send events without a wakeup.
constexpr int kTimelineDrainMs = 20;

// libbpf's messages go to the session's log instead of stderr; -v echoes them.
std::string *g_log = nullptr;
bool g_echo = false;

int capture_libbpf(enum libbpf_print_level level, const char *fmt, va_list args) {
  if (level == LIBBPF_DEBUG && !g_echo)
    return 0;
  char buf[4096];
  int n = vsnprintf(buf, sizeof(buf), fmt, args);
  if (g_log)
    g_log->append(buf);
  if (g_echo)
    fputs(buf, stderr);
  return n;
}

// The lines of the verifier log for `program` (between libbpf's BEGIN/END markers).
std::string verifier_lines(const std::string &log, std::string &last_line) {
  size_t begin = log.find("-- BEGIN PROG LOAD LOG --");
  size_t end = log.find("-- END PROG LOAD LOG --");
  if (begin == std::string::npos || end == std::string::npos || end < begin)
    return {};
  begin = log.find('\n', begin) + 1;
  std::string text = log.substr(begin, end - begin);
  // The cause is the last line that is neither the closing summary, a register state nor an
  // instruction: "infinite loop detected at insn 0", "R1 invalid mem access 'scalar'".
  auto is_noise = [](const std::string &line) {
    static const char *kPrefixes[] = {"processed ", "verification time", "stack depth",
                                      "cur state", "old state", "from ", ";", "mark_precise",
                                      "last_idx", "regs=", "parent "};
    if (line.empty() || isdigit(static_cast<unsigned char>(line[0])))
      return true;  // "12: (85) call ..." and "12: R1=..." lines
    for (const char *p : kPrefixes)
      if (line.rfind(p, 0) == 0)
        return true;
    return false;
  };
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos)
      break;
    start = nl + 1;
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string line = *it;
    while (!line.empty() && isspace(static_cast<unsigned char>(line.back())))
      line.pop_back();
    if (!is_noise(line)) {
      last_line = line;
      break;
    }
  }
  return text;
}

// Which program failed to load, from libbpf's "prog 'probe_3': ..." message.
std::string failed_program(const std::string &log) {
  size_t p = log.find("prog '");
  if (p == std::string::npos)
    return {};
  size_t q = log.find('\'', p + 6);
  return log.substr(p + 6, q - p - 6);
}

// write_user()'s helper, bpf_probe_write_user, is refused to every program (the verifier says
// the program type "cannot use" it) when the kernel is locked down (integrity or
// confidentiality) or rbt lacks CAP_SYS_ADMIN: say that, not the verifier's words only.
std::string explain_refused_helper(const std::string &cause) {
  if (cause.find("bpf_probe_write_user") == std::string::npos)
    return cause;
  std::string mode;
  if (std::FILE *f = std::fopen("/sys/kernel/security/lockdown", "r")) {
    char buf[128] = {};
    if (std::fgets(buf, sizeof(buf), f)) {
      std::string line = buf;
      auto a = line.find('['), b = line.find(']');
      if (a != std::string::npos && b != std::string::npos && b > a)
        mode = line.substr(a + 1, b - a - 1);
    }
    std::fclose(f);
  }
  return "write_user() needs bpf_probe_write_user, which this kernel gives no program: " +
         (mode.empty() ? std::string("it is locked down, or rbt lacks CAP_SYS_ADMIN")
                       : mode == "none" ? std::string("rbt lacks CAP_SYS_ADMIN")
                                        : "it is locked down (" + mode +
                                              ", /sys/kernel/security/lockdown)");
}

}  // namespace

Session::Session(const Manifest &manifest, SessionOptions options)
    : manifest_(manifest), options_(std::move(options)),
      writer_(output::make_writer(options_.format, options_.out, options_.quiet)) {
  g_log = &log_;
  g_echo = options_.verbose;
  libbpf_set_print(capture_libbpf);
}

Session::~Session() {
  detach();
  child_.terminate();
  g_log = nullptr;
}

std::map<std::string, std::vector<const ProbeDesc *>> Session::multi_groups() const {
  std::map<std::string, std::vector<const ProbeDesc *>> by_program, groups;
  for (const ProbeDesc &p : manifest_.probes)
    if (p.kind == ProbeKind::Uprobe || p.kind == ProbeKind::Uretprobe)
      by_program[p.program].push_back(&p);
  for (auto &[program, descs] : by_program)
    if (descs.size() > 1)
      groups.emplace(program, std::move(descs));
  return groups;
}

void Session::detach() {
  links_.clear();
  fd_links_.clear();
  events_.reset();
  lost_.reset();  // points into the object's .bss mapping
  if (options_.timeline)
    options_.timeline->mixed_records = nullptr;
  output::set_stack_frames(nullptr);
  output::set_symbol_name(nullptr);
  output::set_indexed_text(nullptr);
  output::set_enums({});
  stacks_.reset();
  ruby_.reset();
  native_.reset();
  if (obj_) {
    bpf_object__close(obj_);
    obj_ = nullptr;
  }
}

Status Session::load(const std::vector<char> &elf) {
  LIBBPF_OPTS(bpf_object_open_opts, opts);
  opts.object_name = "rbt";
  obj_ = bpf_object__open_mem(elf.data(), elf.size(), &opts);
  if (!obj_) {
    int err = errno;
    return make_error("opening the compiled BPF object", strerror(err),
                      "please report this with the script that caused it", err);
  }
  // Opened again with the minimal BTF when there is one: libbpf takes it only at open.
  std::string core_btf = options_.core_btf_path && has_core_relocations(elf)
                             ? options_.core_btf_path(obj_)
                             : "";
  if (!core_btf.empty()) {
    opts.btf_custom_path = core_btf.c_str();
    if (bpf_object *again = bpf_object__open_mem(elf.data(), elf.size(), &opts)) {
      bpf_object__close(obj_);
      obj_ = again;
    }
  }
  // A larger ring buffer (rbt record): room for the events that arrive while the reader
  // symbolizes stacks of processes it has not met yet.
  if (options_.ringbuf_bytes)
    if (bpf_map *rb = bpf_object__find_map_by_name(obj_, manifest_.ringbuf_name.c_str()))
      bpf_map__set_max_entries(rb, options_.ringbuf_bytes);
  // Keep kernel-side names readable in bpftool: rbt's own programs are "probe_N".
  // -d verifier: the kernel keeps a log per program when asked before loading.
  std::vector<std::pair<bpf_program *, std::vector<char>>> logs;
  if (options_.dump_verifier) {
    bpf_program *prog;
    bpf_object__for_each_program(prog, obj_) logs.emplace_back(prog, std::vector<char>(1 << 20));
    for (auto &[prog, buf] : logs) {
      bpf_program__set_log_buf(prog, buf.data(), buf.size());
      bpf_program__set_log_level(prog, 2);  // every instruction, not only the summary
    }
  }
  if (calls_trace_printk(obj_))
    mount_debugfs_for_debugf();
  // A program that serves several probes is a uprobe_multi group's (codegen/uprobe_groups.h):
  // the kernel attaches it by one link only if it was loaded for that.
  for (const auto &[program, group] : multi_groups())
    if (bpf_program *prog = bpf_object__find_program_by_name(obj_, program.c_str()))
      bpf_program__set_expected_attach_type(prog,
                                            static_cast<bpf_attach_type>(kUprobeMultiAttachType));
  int loaded = bpf_object__load(obj_);
  for (auto &[prog, buf] : logs) {
    for (auto &p : manifest_.probes)
      if (p.program == bpf_program__name(prog))
        fprintf(stderr, "; verifier log of %s\n", p.name.c_str());
    fprintf(stderr, "%s\n", buf.data());
  }
  if (loaded != 0) {
    int err = errno;
    std::string prog = failed_program(log_), cause;
    std::string vlog = verifier_lines(log_, cause);
    for (auto &p : manifest_.probes) {
      if (p.program == prog) {
        rejected_ = &p;
        Error e = make_error("the kernel's verifier rejected probe " + p.name,
                             explain_refused_helper(cause),
                             options_.verbose ? "" : "run with -v to see the verifier's log", err);
        e.detail = vlog;
        return e;
      }
    }
    Error e = make_error("loading the BPF object", strerror(err), "run with -v for libbpf's log",
                         err);
    e.detail = log_;
    return e;
  }
  const bpf_map *rb = bpf_object__find_map_by_name(obj_, manifest_.ringbuf_name.c_str());
  std::vector<const bpf_map *> maps;
  for (auto &desc : manifest_.maps)
    maps.push_back(bpf_object__find_map_by_name(obj_, desc.bpf_name.c_str()));
  events_ = std::make_unique<EventReader>(manifest_, *writer_, std::move(maps));
  lost_ = std::make_unique<LostEvents>(obj_, manifest_);
  auto skb = SkbOutput::open(obj_, manifest_);
  if (!skb)
    return skb.error();
  skb_output_ = std::move(*skb);
  exit_flag_ = find_bss_counter(obj_, kExitFlagName);
  stacks_ = std::make_unique<StackPrinter>(manifest_, obj_);
  write_config();
  events_->on_new_process = [this](pid_t pid) { stacks_->capture_process(pid); };
  ruby_ = ruby::RubyStacks::open(obj_, options_.verbose);
  if (ruby_)
    if (auto s = ruby_->fill_layouts(); !s)
      return s;
  native_ = NativeStacks::open(obj_, options_.verbose);
  if (native_)  // a library mapped since: its frames must name after the process exits
    native_->on_remapped = [this](pid_t pid) { stacks_->capture_process(pid); };
  events_->timeline = options_.timeline;
  if (options_.timeline)  // a profile's frames: functions without offsets, so samples merge
    options_.timeline->mixed_records = [this](const MixedStackIds &ids) {
      return mixed_frame_records(ids, ruby_.get(), native_.get(), *stacks_, false);
    };
  output::set_str_trunc_trailer(manifest_.str_trunc_trailer);
  output::set_stack_frames([this](const Type &t, const uint8_t *v) {
    if (t.stack_kind == StackKind::Native)
      return native_frame_lines(v, native_.get(), *stacks_);
    if (t.stack_kind == StackKind::Mixed)
      return mixed_frame_lines(v, ruby_.get(), native_.get(), *stacks_);
    if (t.stack_kind == StackKind::Ruby) {
      uint64_t id;
      uint32_t cut;  // {u64 id; u32 pid; u32 cut}: ruby_layouts.h
      memcpy(&id, v, 8);
      memcpy(&cut, v + 12, 4);
      return ruby_ ? ruby_->frames(id, cut) : std::vector<std::string>{};
    }
    return stacks_->frames(t, v);
  });
  output::set_symbol_name([this](bool user, uint64_t addr, uint64_t pid) {
    return stacks_->symbol(user, addr, static_cast<pid_t>(pid));
  });
  output::set_enums(manifest_.enums);
  output::set_indexed_text([this](TypeKind kind, uint64_t index, uint64_t value) {
    const auto &strings =
        kind == TypeKind::Timestamp ? manifest_.strftime_formats : manifest_.cgroup_path_filters;
    if (index >= strings.size())
      return std::string("(?)");
    return kind == TypeKind::Timestamp ? output::format_timestamp(strings[index], value)
                                       : cgroup_path_text(value, strings[index]);
  });
  if (auto s = events_->open(rb); !s)
    return s;
  return Ok{};
}

// elapsed, ncpus, cpid, nsecs(sw_tai) and pid(curr_ns) read the RuntimeConfig map; fill it if
// the programs use it.
void Session::write_config() {
  const bpf_map *map = bpf_object__find_map_by_name(obj_, manifest_.config_name.c_str());
  if (!map)
    return;
  RuntimeConfig config;
  config.start_ns = clock_ns(CLOCK_MONOTONIC);  // the clock of bpf_ktime_get_ns
  config.ncpus = static_cast<uint64_t>(libbpf_num_possible_cpus());
  config.cpid = child_.pid() > 0 ? static_cast<uint64_t>(child_.pid()) : 0;
  config.filter_pid = options_.command.empty() && options_.pid > 0 ? options_.pid : 0;
  config.tai_offset_ns = tai_offset_ns();
  current_pid_namespace(config.pidns_dev, config.pidns_ino);
  uint32_t key = 0;
  bpf_map_update_elem(bpf_map__fd(map), &key, &config, BPF_ANY);
}

bpf_program *Session::program_for(const ProbeDesc &probe) {
  return bpf_object__find_program_by_name(obj_, probe.program.c_str());
}

Status Session::start_command() {
  if (options_.command.empty())
    return Ok{};
  if (auto s = child_.spawn(options_.command); !s)
    return s;
  write_config();
  child_.on_exit([this](pid_t pid) {
    if (stacks_)
      stacks_->capture_process(pid);
  });
  options_.pid = child_.pid();
  return Ok{};
}

Status Session::run_special(ProbeKind kind, const std::string &func) {
  for (auto &p : manifest_.probes) {
    if (p.kind != kind || (!func.empty() && p.func != func))
      continue;
    if (auto s = run_special_probe(p, program_for(p)); !s)
      return s;
  }
  drain_events();
  writer_->flush();
  return Ok{};
}

Status Session::run_begin() {
  writer_->hold();  // until announce(): the attached-probes line comes first
  return run_special(ProbeKind::Begin);
}
Status Session::run_end() {
  events_->print_after_exit();
  return run_special(ProbeKind::End);
}

Status Session::check_probes() {
  // A profile format needs a map it can write: say so before anything runs.
  if (options_.profile_format) {
    bool any = false;
    for (auto &m : manifest_.maps)
      any = any || !output::profile_map_problem(m);
    if (!any)
      return make_error(std::string("-f ") + profile::format_name(*options_.profile_format),
                        "the script has no map keyed by a stack with count() or sum() values",
                        "e.g. profile:hz:99 { @[rstack] = count(); } or @[kstack, comm] = "
                        "sum(...)");
  }
  if (options_.pid > 0 && kill(options_.pid, 0) != 0 && errno == ESRCH)
    return make_error("-p " + std::to_string(options_.pid), "no such process",
                      "check the process id, e.g. with pgrep", ESRCH);
  AttachTarget target;
  target.pid = options_.pid;
  for (auto &p : manifest_.probes)
    if (auto s = check_probe(p, target); !s && !skip_missing(p, s.error()))
      return s;
  return Ok{};
}

bool Session::skip_missing(const ProbeDesc &p, const Error &e) {
  if (manifest_.missing_probes == MissingProbes::Error)
    return false;
  if (manifest_.missing_probes == MissingProbes::Warn && skipped_.insert(p.name).second &&
      !warnings_suppressed)
    fprintf(stderr, "rbt: warning: %s: %s; skipped (missing_probes = warn)\n", p.name.c_str(),
            e.why.empty() ? e.what.c_str() : e.why.c_str());
  skipped_.insert(p.name);
  return true;
}

Status Session::attach() {
  // rstack: -p must name a Ruby now; a -c child is still before exec, so it is watched. Before
  // the probes attach: a probe meeting a process not in rbt_ruby_procs yet records an empty
  // stack, so -p's first samples would be empty while the process is inspected.
  if (ruby_ && options_.pid > 0)
    if (auto s = ruby_->add_process(options_.pid, !options_.command.empty()); !s) {
      if (options_.rstack_needs_ruby)
        return s;
      if (options_.verbose)  // rbt record: a native process is recorded without Ruby stacks
        fprintf(stderr, "rbt: note: %s: %s\n", s.error().what.c_str(), s.error().why.c_str());
    }
  if (native_ && options_.pid > 0)
    native_->add_process(options_.pid);
  start_wall_ns_ = clock_ns(CLOCK_REALTIME);
  start_mono_ns_ = clock_ns(CLOCK_MONOTONIC);
  // rstack's discovery: from here on BPF finds Ruby processes as they start.
  if (ruby_)
    if (auto s = ruby_->attach_discovery(); !s)
      return s;
  if (ruby_ && !child_.exited() && child_.pid() > 0)
    ruby_->probe_executable(child_.executable());
  AttachTarget target;
  target.pid = options_.pid;
  // The kernel runs the consumers of one uprobe newest first: uprobes, uretprobes and USDT
  // probes (uprobes too) attach last to first, so that two probes on one place run in the
  // script's order, as bpftrace's.
  auto newest_first = [](ProbeKind k) {
    return k == ProbeKind::Uprobe || k == ProbeKind::Uretprobe || k == ProbeKind::Usdt;
  };
  std::vector<const ProbeDesc *> order;
  for (auto &p : manifest_.probes)
    if (!newest_first(p.kind))
      order.push_back(&p);
  for (auto it = manifest_.probes.rbegin(); it != manifest_.probes.rend(); ++it)
    if (newest_first(it->kind))
      order.push_back(&*it);
  if (options_.bench)  // only BEGIN, the benchmarks and END run, as in bpftrace's bench mode
    order.clear();
  const auto groups = multi_groups();
  std::set<std::string> groups_attached;
  for (const ProbeDesc *probe : order) {
    const ProbeDesc &p = *probe;
    if (p.kind == ProbeKind::Begin || p.kind == ProbeKind::End ||
        p.kind == ProbeKind::SelfSignal || p.kind == ProbeKind::Bench)
      continue;
    // A group attaches once, with its first desc met, whether or not that one was skipped by
    // the checks before BEGIN (the link leaves out what cannot be placed).
    if (auto g = groups.find(p.program); g != groups.end()) {
      if (!groups_attached.insert(p.program).second)
        continue;
      auto link = attach_uprobe_multi(g->second, program_for(p), target,
                                      [&](const ProbeDesc &d, const Error &e) {
                                        return skip_missing(d, e);
                                      });
      if (!link)
        return link.error();
      fd_links_.push_back(std::move(*link));
      continue;
    }
    if (skipped_.count(p.name))
      continue;
    auto links = attach_probe(p, program_for(p), target);
    if (!links && skip_missing(p, links.error()))
      continue;
    if (!links)
      return links.error();
    for (auto &l : *links) {
      if (p.kind == ProbeKind::Iter)
        iterators_.push_back(l.get());
      links_.push_back(std::move(l));
    }
  }
  if (!child_.exited() && child_.pid() > 0)
    if (auto s = child_.release(); !s)
      return s;
  return Ok{};
}

void Session::announce() {
  std::string begin_output = writer_->release();
  size_t benches = 0;
  for (auto &p : manifest_.probes)
    benches += p.kind == ProbeKind::Bench;
  if (!options_.bench)  // bench mode prints its table instead, as bpftrace
    writer_->attached_probes(manifest_.probes.size() - skipped_.size() - benches);
  if (options_.bpftrace_notice) {
    writer_->flush();
    fputs("__BPFTRACE_NOTIFY_PROBES_ATTACHED\n", stdout);
    fflush(stdout);
  }
  writer_->write_held(begin_output);
  if (options_.attach_marker)
    fprintf(stderr, "__rbt_attached__\n");
}

void Session::drain_events(const EventReader::Limit &limit) {
  // Packets first: a probe sent them before the events that follow them (exit()).
  if (skb_output_)
    skb_output_->consume();
  events_->drain(limit);
  if (!events_->exit_requested() && exit_flag_.fd >= 0)
    if (int64_t flag = read_bss_counter(exit_flag_); flag != 0)
      events_->request_exit(static_cast<int32_t>(flag & 0xffffffff));
  if (uint64_t n = lost_ ? lost_->take_new() : 0) {
    writer_->lost_events(n);
    if (options_.timeline)
      options_.timeline->on_lost(n);
  }
}

Status Session::run() {
  // SIGINT/SIGTERM/SIGCHLD arrive through a signalfd (the driver blocked them at start), so
  // one epoll wait covers events, Ctrl-C and the end of the -c command: no polling timeout.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGCHLD);
  for (int signo : self_signals(manifest_))  // self:signal probes (blocked by the driver too)
    sigaddset(&set, signo);
  int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (sfd < 0 || ep < 0)
    return make_error("waiting for events", strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = sfd;
  epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
  ev.data.fd = events_->epoll_fd();
  epoll_ctl(ep, EPOLL_CTL_ADD, events_->epoll_fd(), &ev);
  if (skb_output_) {  // packets alone wake the loop too (drain_events takes them)
    ev.data.fd = skb_output_->epoll_fd();
    epoll_ctl(ep, EPOLL_CTL_ADD, skb_output_->epoll_fd(), &ev);
  }
  // -p: a pidfd becomes readable when the traced process exits, which ends the session.
  int pidfd = -1;
  if (options_.pid > 0 && child_.pid() <= 0) {
    pidfd = static_cast<int>(syscall(SYS_pidfd_open, options_.pid, 0));
    if (pidfd >= 0) {
      ev.data.fd = pidfd;
      epoll_ctl(ep, EPOLL_CTL_ADD, pidfd, &ev);
    }
  }

  bool timeline_events = false;
  for (const ActionDesc &a : manifest_.actions)
    timeline_events = timeline_events || a.kind == ActionKind::Sample || a.kind == ActionKind::Marker;
  bool stop = events_->exit_requested() || (child_.pid() > 0 && child_.reap());
  bool interrupted = false;  // by SIGINT or SIGTERM
  // As bpftrace does: with only BEGIN/END probes nothing more can happen once BEGIN has run,
  // so the session ends (END runs next), unless a -c command or -p process is still to end it.
  bool only_special = true;
  for (auto &p : manifest_.probes)
    only_special = only_special && (p.kind == ProbeKind::Begin || p.kind == ProbeKind::End ||
                                    p.kind == ProbeKind::Bench);
  if (only_special && options_.command.empty() && options_.pid <= 0)
    stop = true;
  // --mode bench: the benchmarks run after BEGIN (unless it called exit()), then the session
  // ends, as bpftrace's bench mode.
  if (options_.bench && !events_->exit_requested()) {
    if (auto s = run_benchmarks(); !s)
      return s;
    stop = true;
  }
  // iter: probes run now, once over every object, and then the session ends (as in bpftrace).
  if (!iterators_.empty()) {
    if (!stop)
      if (auto s = run_iterators(); !s)
        return s;
    stop = true;
  }
  while (!stop) {
    epoll_event ready[3];
    // rstack learns about Ruby processes by polling: every 2 ms while a -c child is becoming
    // Ruby, then every 50 ms for processes the probes met.
    // nstack maps processes (and their new libraries) the same way, every 10 ms.
    int timeout = ruby_ && ruby_->watching() ? 2 : native_ ? 10 : ruby_ ? 50 : -1;
    // sample() and marker() do not wake the reader (lower_timeline.cpp): drain every 20 ms.
    if (timeline_events && (timeout < 0 || timeout > kTimelineDrainMs))
      timeout = kTimelineDrainMs;
    int n = epoll_wait(ep, ready, 3, timeout);
    if (ruby_)
      ruby_->poll();
    if (native_) {
      native_->poll();
      // The -p/-c target's libraries (a require'd C extension) are mapped before their first
      // event when the mappings are looked at anyway: a cheap read when nothing changed.
      if (options_.pid > 0)
        native_->add_process(options_.pid);
    }
    if (n < 0 && errno == EINTR)
      continue;
    // Each drain gives the loop back within 50 ms, so a signal, the -c command's end or the
    // -p process's is seen while events pour in faster than they are printed.
    EventReader::Limit slice{clock_ns(CLOCK_MONOTONIC) + 50000000};
    if (n == 0 && timeline_events) {
      drain_events(slice);
      writer_->flush();
      stop = events_->exit_requested();
    }
    for (int i = 0; i < n; i++) {
      if (ready[i].data.fd == pidfd) {
        stop = true;
      } else if (ready[i].data.fd == sfd) {
        signalfd_siginfo si;
        while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
          if (si.ssi_signo == SIGCHLD) {
            if (child_.pid() > 0 && child_.reap())
              stop = true;
          } else if (si.ssi_signo == SIGUSR1 || si.ssi_signo == SIGUSR2) {
            // A self:signal probe: what it prints comes after what earlier events queued.
            drain_events(slice);
            if (auto s = run_special(ProbeKind::SelfSignal,
                                     si.ssi_signo == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
                !s)
              fprintf(stderr, "rbt: warning: %s: %s\n", s.error().what.c_str(), s.error().why.c_str());
            stop = stop || events_->exit_requested();
          } else {
            stop = true;
            interrupted = true;
          }
        }
      } else {
        drain_events(slice);
        writer_->flush();
        stop = stop || events_->exit_requested();
      }
    }
  }
  // The probes stop first, so the last drain has an end: what they queued is carried out,
  // for at most a second after Ctrl-C (or until another one); the rest is dropped and said.
  detach_probes();
  drain_events({interrupted ? clock_ns(CLOCK_MONOTONIC) + 1000000000ull : 0, true});
  if (uint64_t n = events_->discarded(); n && !warnings_suppressed)
    fprintf(stderr,
            "rbt: warning: %llu events not carried out: stopped while printing fell behind\n",
            static_cast<unsigned long long>(n));
  writer_->flush();
  close(ep);
  close(sfd);
  if (pidfd >= 0)
    close(pidfd);
  return Ok{};
}

// Reads each iterator to its end and carries out what its program wrote: events, each after
// its length in 8 bytes (Lowering::send_iter_event). The kernel has run the program over every
// object by then, so all of it prints even after an exit(), as bpftrace prints its iterator's
// whole output.
Status Session::run_iterators() {
  for (bpf_link *link : iterators_) {
    auto out = read_iterator(link);
    if (!out)
      return out.error();
    drain_events();  // what went through the ring buffer (new processes) comes first
    const auto *bytes = reinterpret_cast<const uint8_t *>(out->data());
    size_t at = 0;
    while (at + 8 <= out->size()) {
      uint64_t size;
      memcpy(&size, bytes + at, 8);
      if (size > out->size() - at - 8)
        break;
      events_->deliver(bytes + at + 8, size);
      at += 8 + size;  // exit() ends the session after the iterators, whose output is kept
    }
    drain_events();
    writer_->flush();
  }
  return Ok{};
}

// --mode bench: each bench:NAME probe in the script's order runs through BPF_PROG_TEST_RUN,
// repeated more times (x1000, x100, x10, then x2) until one measurement lasts 1 ms, as
// bpftrace's bench mode; what the runs print is dropped, and the kernel's average per run is
// reported with the number of runs.
Status Session::run_benchmarks() {
  std::vector<const ProbeDesc *> benches;
  std::vector<std::string> names;
  for (auto &p : manifest_.probes)
    if (p.kind == ProbeKind::Bench) {
      benches.push_back(&p);
      names.push_back(p.func);
    }
  for (size_t i = 0; i < benches.size(); i++) {
    int fd = bpf_program__fd(program_for(*benches[i]));
    uint32_t iters = 1;
    uint32_t average_ns = 0;
    for (;;) {
      char packet[14] = {};  // an Ethernet header's worth: XDP's test run wants one
      LIBBPF_OPTS(bpf_test_run_opts, opts);
      opts.data_in = packet;
      opts.data_size_in = sizeof(packet);
      opts.repeat = iters;
      writer_->hold();
      int rc = bpf_prog_test_run_opts(fd, &opts);
      int err = errno;
      drain_events({0, true});
      writer_->release();  // a benchmark's output is not shown
      if (rc != 0)
        return make_error("running " + benches[i]->name, strerror(err),
                          "bench probes need BPF_PROG_TEST_RUN for XDP programs", err);
      uint64_t total_ns = static_cast<uint64_t>(opts.duration) * iters;
      uint32_t factor = total_ns < 1000     ? 1000
                        : total_ns < 10000  ? 100
                        : total_ns < 100000 ? 10
                        : total_ns < 1000000 ? 2
                                             : 1;
      if (factor == 1 || iters > UINT32_MAX / factor) {
        average_ns = opts.duration;
        break;
      }
      iters *= factor;
    }
    writer_->benchmark_result(names, i, average_ns, iters);
    writer_->flush();
  }
  return Ok{};
}

Status Session::print_maps() {
  if (!manifest_.print_maps_on_exit && !options_.profile_format)
    return Ok{};
  std::vector<MapSnapshot> snapshots;
  for (auto &desc : manifest_.maps) {
    const bpf_map *map = bpf_object__find_map_by_name(obj_, desc.bpf_name.c_str());
    auto snap = snapshot_map(map, desc);
    if (!snap)
      return snap.error();
    if (!snap->entries.empty())
      snapshots.push_back(std::move(*snap));
  }
  if (options_.profile_format)
    return write_profile(snapshots);
  // The two empty lines come even when no map has entries, as bpftrace prints them at exit.
  writer_->exit_maps_begin();
  for (auto &snap : snapshots)
    writer_->map(snap, 0, 1);
  writer_->flush();
  return Ok{};
}

void Session::report_dropped_updates() {
  for (const MapDesc &map : manifest_.maps) {
    if (map.full_counter.empty())
      continue;
    int64_t dropped = read_bss_counter(find_bss_counter(obj_, map.full_counter));
    if (dropped > 0)
      writer_->map_updates_dropped(map.name, static_cast<uint64_t>(dropped), map.max_keys);
  }
  writer_->flush();
}

Status Session::check_output() {
  if (int err = writer_->error())
    return make_error("writing output", strerror(err), {}, err);
  return Ok{};
}

// The maps at exit as one profile file: every non-empty map must be a stack map with count()
// or sum() values (checked here, since a script's other maps may well be empty by then).
// The maps that can be written are, before an error names the first one that cannot.
Status Session::write_profile(std::vector<MapSnapshot> &snapshots) {
  profile::Format format = *options_.profile_format;
  output::ProfileRun run;
  // One profile:hz/ms/us probe gives count() maps a sampling period (pprof's period_type).
  std::vector<uint64_t> periods;
  for (auto &p : manifest_.probes)
    if (p.kind == ProbeKind::Profile)
      periods.push_back(p.freq ? 1000000000ull / p.freq : p.period);
  if (!periods.empty() && std::all_of(periods.begin(), periods.end(),
                                      [&](uint64_t v) { return v == periods[0]; })) {
    run.period_type = {"cpu", "nanoseconds"};
    run.period = static_cast<int64_t>(periods[0]);
  }
  run.sum_unit = options_.sum_unit;
  run.start_ns = start_wall_ns_;
  run.duration_ns = start_mono_ns_ ? clock_ns(CLOCK_MONOTONIC) - start_mono_ns_ : 0;
  output::StackRecords stacks = [this](const Type &t, const uint8_t *v) {
    if (t.stack_kind == StackKind::Native)
      return native_frame_records(v, native_.get(), *stacks_, false);
    if (t.stack_kind == StackKind::Mixed)
      return mixed_frame_records(v, ruby_.get(), native_.get(), *stacks_, false);
    if (t.stack_kind == StackKind::Ruby) {
      uint64_t id;
      memcpy(&id, v, 8);
      return ruby_ ? ruby_->frame_records(id) : std::vector<profile::Frame>{};
    }
    return stacks_->frame_records(t, v);
  };
  std::vector<profile::Profile> profiles;
  std::optional<Error> problem;
  for (auto &snap : snapshots) {
    if (auto why = output::profile_map_problem(*snap.desc)) {
      if (!problem)
        problem = make_error(snap.desc->name,
                             std::string("cannot be written as ") + profile::format_name(format) +
                                 ": " + *why,
                             "-f " + std::string(profile::format_name(format)) +
                                 " writes maps keyed by kstack, ustack or rstack with count() or "
                                 "sum() values; clear(" + snap.desc->name +
                                 ") in an END probe, or use -f text");
      continue;
    }
    profiles.push_back(output::map_profile(snap, stacks, run));
  }
  std::string bytes;
  if (auto err = profile::write_profiles(format, profiles, bytes))
    return make_error(std::string("writing the ") + profile::format_name(format) + " profile",
                      *err);
  std::FILE *out = options_.profile_out ? options_.profile_out : stdout;
  if (fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size() || fflush(out) != 0)
    return make_error(std::string("writing the ") + profile::format_name(format) + " profile",
                      strerror(errno));
  if (problem)
    return *problem;
  return Ok{};
}

}  // namespace rbt::runtime
