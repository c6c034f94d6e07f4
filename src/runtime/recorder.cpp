#include "recorder.h"

#include <cstring>
#include <ctime>
#include <fstream>

#include "clock_ns.h"
#include "output/value_format.h"

namespace rbt::runtime {

namespace {

std::string read_comm(const std::string &path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// "name+123" → "name": the top table and the flame graphs group by function.
std::string strip_offset(std::string s) {
  size_t plus = s.rfind('+');
  if (plus != std::string::npos && plus > 0 && plus + 1 < s.size() &&
      s.find_first_not_of("0123456789", plus + 1) == std::string::npos)
    s.resize(plus);
  return s;
}

// The fields a recorder's own markers carry, by name; other names get arg0..arg3.
struct MarkerKind {
  const char *name;
  const char *category;
  const char *fields[4];
};
constexpr MarkerKind kMarkerKinds[] = {
    {"OffCPU", "Scheduler", {"state"}},
    {"BlockIO", "IO", {"bytes", "device", "sector"}},
    {"PageFault", "Memory", {"address"}},
    {"GC mark", "GC", {}},
    {"GC sweep", "GC", {}},
};

std::string field_text(const char *field, int64_t v) {
  if (std::strcmp(field, "device") == 0)  // the kernel's dev_t: major << 20 | minor
    return std::to_string(static_cast<uint64_t>(v) >> 20) + ":" +
           std::to_string(static_cast<uint64_t>(v) & 0xfffff);
  if (std::strcmp(field, "address") == 0) {
    char buf[24];
    snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
    return buf;
  }
  if (std::strcmp(field, "state") == 0)  // prev_state of sched_switch
    return v == 0 ? "preempted" : (v & 1) ? "sleeping" : (v & 2) ? "disk sleep" : "blocked";
  return std::to_string(v);
}

}  // namespace

std::vector<uint32_t> mixed_frames(const std::vector<uint32_t> &ruby,
                                   const std::vector<uint32_t> &user,
                                   const std::vector<uint32_t> &kernel) {
  std::vector<uint32_t> out;
  out.reserve(ruby.size() + user.size() + kernel.size());
  out.insert(out.end(), ruby.rbegin(), ruby.rend());
  out.insert(out.end(), user.rbegin(), user.rend());
  out.insert(out.end(), kernel.rbegin(), kernel.rend());
  return out;
}

profile::Frame parse_frame(StackKind kind, const std::string &line) {
  profile::Frame f;
  if (kind == StackKind::Ruby) {
    if (line.rfind("[...", 0) == 0) {
      f.kind = profile::FrameKind::Truncated;
      f.name = line;
      return f;
    }
    if (line.size() > 8 && line.compare(line.size() - 8, 8, " <cfunc>") == 0) {
      f.kind = profile::FrameKind::RubyCfunc;
      f.name = line.substr(0, line.size() - 8);
      return f;
    }
    f.kind = profile::FrameKind::Ruby;
    f.name = line;
    size_t open = line.rfind(" (");
    size_t colon = line.rfind(':');
    if (open != std::string::npos && line.back() == ')' && colon != std::string::npos &&
        colon > open) {
      f.name = line.substr(0, open);
      f.file = line.substr(open + 2, colon - open - 2);
      f.line = static_cast<uint32_t>(std::strtoul(line.c_str() + colon + 1, nullptr, 10));
    }
    return f;
  }
  f.kind = kind == StackKind::Kernel ? profile::FrameKind::Kernel : profile::FrameKind::Native;
  std::string s = line;
  if (!s.empty() && s[0] == '\t') {
    // perf style: "\tADDR symbol (module)"
    size_t space = s.find(' ');
    size_t open = s.rfind(" (");
    if (space != std::string::npos && open != std::string::npos && open >= space &&
        s.back() == ')') {
      f.module = s.substr(open + 2, s.size() - open - 3);
      std::string sym = s.substr(space + 1, open - space - 1);
      // A symbol the binary does not name (stripped static functions): grouped by module,
      // so the table and flame graphs show one "[libruby.so.3.1]" instead of many addresses.
      if (sym == "[unknown]" && f.module == "[unknown]") {
        f.name = "[unknown]";
      } else if (sym == "[unknown]") {
        size_t slash = f.module.rfind('/');
        f.name = "[" + (slash == std::string::npos ? f.module : f.module.substr(slash + 1)) + "]";
      } else {
        f.name = strip_offset(sym);
      }
    } else {
      f.name = s.substr(1);
    }
  } else {
    f.name = strip_offset(s);
  }
  if (f.kind == profile::FrameKind::Kernel)
    f.module = "[kernel]";
  return f;
}

Recorder::Recorder(std::string name, int64_t period_ns)
    : start_ktime_ns_(clock_ns(CLOCK_MONOTONIC)) {
  profile_.name = std::move(name);
  profile_.value_types = {{"samples", "count"}};
  profile_.period_type = {"cpu", "nanoseconds"};
  profile_.period = period_ns;
  profile_.start_ns = clock_ns(CLOCK_REALTIME);
}

uint64_t Recorder::since_start(uint64_t ktime_ns) const {
  return ktime_ns > start_ktime_ns_ ? ktime_ns - start_ktime_ns_ : 0;
}

const std::vector<uint32_t> &Recorder::stack(const Type &type, const uint8_t *value) {
  int64_t id;
  uint64_t pid;
  memcpy(&id, value, 8);
  memcpy(&pid, value + 8, 8);
  // Kernel stack ids are the same in every process; user and Ruby ids belong to one.
  auto key = std::make_tuple(static_cast<int>(type.stack_kind), id,
                             type.stack_kind == StackKind::Kernel ? 0 : pid);
  auto it = stacks_.find(key);
  if (it != stacks_.end())
    return it->second;
  std::vector<uint32_t> frames;
  bool unmapped = false;
  auto &known = lines_[static_cast<int>(type.stack_kind)];
  for (const std::string &line : output::stack_frames(type, value)) {
    auto [it, added] = known.try_emplace(line);
    if (added) {
      bool unresolved = false;
      uint32_t id = intern(parse_frame(type.stack_kind, line), unresolved);
      it->second = {id, unresolved};
    }
    unmapped = unmapped || it->second.second;
    frames.push_back(it->second.first);
  }
  // A frame outside every mapping known now (a process between fork and exec, a library
  // being loaded) may resolve later: such a stack is not cached.
  if (unmapped) {
    auto &slot = uncached_[static_cast<int>(type.stack_kind)];
    slot = std::move(frames);
    return slot;
  }
  return stacks_.emplace(key, std::move(frames)).first->second;
}

uint32_t Recorder::intern(const profile::Frame &f, bool &unresolved) {
  // Also a C method or a native frame named by its address: its symbols were not read yet.
  unresolved = unresolved || f.name == "[unknown]" ||
               (f.kind != profile::FrameKind::Ruby && f.name.rfind("0x", 0) == 0);
  return profile_.intern(f);
}

const std::vector<uint32_t> &Recorder::merged(const MixedStackIds &ids) {
  auto key = std::make_tuple(ids.ruby, ids.native, ids.kernel, ids.pid);
  auto it = merged_.find(key);
  if (it != merged_.end())
    return it->second;
  std::vector<profile::Frame> leaf_first = mixed_records(ids);
  std::vector<uint32_t> frames;
  frames.reserve(leaf_first.size());
  bool unresolved = false;
  for (auto f = leaf_first.rbegin(); f != leaf_first.rend(); ++f)
    frames.push_back(intern(*f, unresolved));
  // As in stack(): a frame no mapping names yet may resolve later, so it is not cached.
  if (unresolved) {
    merged_uncached_ = std::move(frames);
    return merged_uncached_;
  }
  return merged_.emplace(key, std::move(frames)).first->second;
}

std::vector<uint32_t> Recorder::event_frames(const EventStacks &stacks, uint32_t pid) {
  auto word = [&](StackKind kind) {
    uint64_t v;
    memcpy(&v, stacks.value[static_cast<int>(kind)], 8);
    return v;
  };
  // rstack(native)'s value is the three ids already, then the pid: {ruby, native, kernel, pid}.
  if (const uint8_t *mixed = stacks.value[static_cast<int>(StackKind::Mixed)]; mixed && mixed_records) {
    uint64_t w[4];
    memcpy(w, mixed, sizeof(w));
    return merged(MixedStackIds{w[0], w[1], static_cast<int64_t>(w[2]), static_cast<int32_t>(w[3])});
  }
  if (stacks.value[static_cast<int>(StackKind::Native)] && mixed_records) {
    MixedStackIds ids;  // rstack's value starts with its id, nstack's and kstack's too
    ids.ruby = stacks.value[static_cast<int>(StackKind::Ruby)] ? word(StackKind::Ruby) : 0;
    ids.native = word(StackKind::Native);
    ids.kernel = stacks.value[static_cast<int>(StackKind::Kernel)]
                     ? static_cast<int64_t>(word(StackKind::Kernel))
                     : -1;
    ids.pid = static_cast<int32_t>(pid);
    return merged(ids);
  }
  static const std::vector<uint32_t> kNone;
  auto of = [&](StackKind kind) -> const std::vector<uint32_t> & {
    int k = static_cast<int>(kind);
    return stacks.value[k] ? stack(*stacks.type[k], stacks.value[k]) : kNone;
  };
  return mixed_frames(of(StackKind::Ruby), of(StackKind::User), of(StackKind::Kernel));
}

void Recorder::note_thread(uint32_t pid, uint32_t tid, const std::string &comm) {
  auto [it, added] = threads_.try_emplace({pid, tid});
  NamedThread &t = it->second;
  if (added) {
    t.thread.pid = pid;
    t.thread.tid = tid;
  }
  if (!comm.empty()) {
    // A sample's (or a marker's) comm, taken in BPF, is the thread's name at that event:
    // threads are often named after they start, and /proc no longer has a thread that exited
    // before user space read its events (rbt kept off the CPU).
    if (comm != t.thread.name)
      t.thread.name = comm;
  } else {
    // A marker without a comm: read it, again now and then, since it may have been renamed
    // (a Ruby thread names itself once it runs) or exec'd (a -c child sampled before its exec
    // was still rbt) since the name was last taken, from /proc or from a sample.
    uint64_t now = clock_ns(CLOCK_MONOTONIC);
    if (added || now - t.read_ns > 20000000ull) {
      std::string name = read_comm("/proc/" + std::to_string(pid) + "/task/" +
                                   std::to_string(tid) + "/comm");
      if (!name.empty())
        t.thread.name = name;
      t.read_ns = now;
    }
  }
  if (added) {
    auto [p, first] = process_names_.try_emplace(pid);
    if (first)
      p->second = read_comm("/proc/" + std::to_string(pid) + "/comm");
    t.thread.process_name = p->second;
  }
  if (t.thread.process_name.empty() && pid == tid)
    t.thread.process_name = t.thread.name;
}

void Recorder::on_sample(const ActionDesc &action, const uint8_t *payload) {
  const Type &args = action.args;
  auto u64 = [&](size_t i) {
    uint64_t v;
    memcpy(&v, payload + args.offsets[i], 8);
    return v;
  };
  EventStacks stacks;
  for (size_t i = 5; i < args.elems.size(); i++) {
    stacks.type[static_cast<int>(args.elems[i].stack_kind)] = &args.elems[i];
    stacks.value[static_cast<int>(args.elems[i].stack_kind)] = payload + args.offsets[i];
  }
  profile::Sample s;
  s.stack = event_frames(stacks, static_cast<uint32_t>(u64(1)));
  s.values = {1};
  s.time_ns = since_start(u64(0));
  s.pid = static_cast<uint32_t>(u64(1));
  s.tid = static_cast<uint32_t>(u64(2));
  s.cpu = static_cast<uint32_t>(u64(3));
  note_thread(s.pid, s.tid, output::load_string(args.elems[4], payload + args.offsets[4]));
  profile_.samples.push_back(std::move(s));
}

void Recorder::on_marker(const ActionDesc &action, const uint8_t *payload) {
  const Type &args = action.args;
  auto u64 = [&](size_t i) {
    uint64_t v;
    memcpy(&v, payload + args.offsets[i], 8);
    return v;
  };
  profile::Marker m;
  m.name = action.text;
  m.category = "User";
  const MarkerKind *kind = nullptr;
  for (const auto &k : kMarkerKinds)
    if (m.name == k.name)
      kind = &k;
  if (kind)
    m.category = kind->category;
  m.start_ns = since_start(u64(0));
  m.end_ns = std::max(m.start_ns, since_start(u64(1)));
  m.pid = static_cast<uint32_t>(u64(2));
  m.tid = static_cast<uint32_t>(u64(3));
  size_t i = 4;
  // The thread's name as BPF saw it, when the script passes one (check_marker).
  std::string comm;
  if (i < args.elems.size() && args.elems[i].is_string()) {
    comm = output::load_string(args.elems[i], payload + args.offsets[i]);
    i++;
  }
  const size_t first_field = i;
  for (; i < args.elems.size() && !args.elems[i].is_stack(); i++) {
    const char *field = kind && kind->fields[i - first_field] ? kind->fields[i - first_field] : nullptr;
    std::string generic = "arg" + std::to_string(i - first_field);
    m.data.emplace_back(field ? field : generic,
                        field_text(field ? field : "", static_cast<int64_t>(u64(i))));
  }
  if (m.end_ns > m.start_ns)
    m.data.emplace_back("duration_us", std::to_string((m.end_ns - m.start_ns) / 1000));
  EventStacks stacks;
  for (; i < args.elems.size(); i++) {
    stacks.type[static_cast<int>(args.elems[i].stack_kind)] = &args.elems[i];
    stacks.value[static_cast<int>(args.elems[i].stack_kind)] = payload + args.offsets[i];
  }
  m.stack = event_frames(stacks, m.pid);
  note_thread(m.pid, m.tid, comm);
  profile_.markers.push_back(std::move(m));
}

profile::Profile Recorder::finish() {
  profile_.duration_ns = since_start(clock_ns(CLOCK_MONOTONIC));
  profile_.threads.clear();
  for (auto &[id, t] : threads_) {
    if (t.thread.process_name.empty()) {
      auto main = threads_.find({id.first, id.first});
      t.thread.process_name = main != threads_.end() ? main->second.thread.name : t.thread.name;
    }
    profile_.threads.push_back(t.thread);
  }
  return std::move(profile_);
}

}  // namespace rbt::runtime
