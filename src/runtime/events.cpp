#include "events.h"

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>

#include "cat_file.h"
#include "maps.h"
#include "output/printf.h"
#include "output/value_format.h"
#include "warnings.h"

namespace rbt::runtime {

namespace {

void warn(const std::string &what) {
  if (!warnings_suppressed)
    fprintf(stderr, "rbt: warning: %s\n", what.c_str());
}

// Local time now through strftime; an empty result for a non-empty format means the text did
// not fit, so the buffer grows.
std::string local_time(const std::string &format) {
  time_t now = time(nullptr);
  struct tm tm;
  localtime_r(&now, &tm);
  for (size_t size = 256; size <= (1u << 20); size *= 4) {
    std::string buf(size, '\0');
    size_t n = strftime(buf.data(), buf.size(), format.c_str(), &tm);
    if (n > 0 || format.empty()) {
      buf.resize(n);
      return buf;
    }
  }
  return {};
}

// The output of `/bin/sh -c command`, captured so that it goes through the writer (stdout
// stays pure NDJSON in JSON mode, and -o FILE receives it).
std::string run_command(const std::string &command) {
  fflush(nullptr);
  FILE *p = popen(command.c_str(), "re");
  if (!p) {
    warn("system(\"" + command + "\"): " + strerror(errno));
    return {};
  }
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
    out.append(buf, n);
  pclose(p);
  return out;
}

// cat()'s text, with a warning when the file cannot be read or is cut at rbt's own bound
// (cat_file.h); a limit the script set (max_cat_bytes) cuts silently, as in bpftrace.
std::optional<std::string> read_file(const std::string &path, uint64_t max_cat_bytes) {
  CatResult r = cat_file(path, max_cat_bytes ? max_cat_bytes : kMaxCatBytes);
  if (!r.opened) {  // bpftrace's words; an error, as there, though the script goes on
    fprintf(stderr, "rbt: error: failed to open file '%s' (%s)\n", path.c_str(), r.error.c_str());
    return std::nullopt;
  }
  if (!r.error.empty() && r.text.empty()) {
    warn("cat(\"" + path + "\"): " + r.error);
    return std::nullopt;
  }
  if (r.truncated && !max_cat_bytes)
    warn("cat(\"" + path + "\"): printed its first " + std::to_string(kMaxCatBytes) +
         " bytes only");
  return std::move(r.text);
}

// A sample() or marker() event as text, for scripts run without a recorder: its fields, then
// its stacks' frames as print() shows stacks.
std::string describe_timeline_event(const ActionDesc &action, const uint8_t *payload) {
  auto u64 = [&](size_t i) {
    uint64_t v;
    memcpy(&v, payload + action.args.offsets[i], 8);
    return v;
  };
  std::string out;
  size_t first_stack;
  if (action.kind == ActionKind::Sample) {
    out = "sample: nsecs=" + std::to_string(u64(0)) + " pid=" + std::to_string(u64(1)) +
          " tid=" + std::to_string(u64(2)) + " cpu=" + std::to_string(u64(3)) + " comm=" +
          output::load_string(action.args.elems[4], payload + action.args.offsets[4]);
    first_stack = 5;
  } else {
    out = "marker " + action.text + ": start=" + std::to_string(u64(0)) +
          " end=" + std::to_string(u64(1)) + " pid=" + std::to_string(u64(2)) +
          " tid=" + std::to_string(u64(3));
    first_stack = 4;
    if (first_stack < action.args.elems.size() && action.args.elems[first_stack].is_string()) {
      out += " comm=" + output::load_string(action.args.elems[first_stack],
                                            payload + action.args.offsets[first_stack]);
      first_stack++;
    }
    while (first_stack < action.args.elems.size() && !action.args.elems[first_stack].is_stack()) {
      out += " " + std::to_string(static_cast<int64_t>(u64(first_stack)));
      first_stack++;
    }
  }
  out += "\n";
  for (size_t i = first_stack; i < action.args.elems.size(); i++)
    for (auto &frame : output::stack_frames(action.args.elems[i], payload + action.args.offsets[i]))
      out += "        " + frame + "\n";
  return out;
}

}  // namespace

EventReader::EventReader(const Manifest &manifest, output::Writer &writer,
                         std::vector<const bpf_map *> maps)
    : manifest_(manifest), writer_(writer), maps_(std::move(maps)) {
  for (auto &a : manifest.actions) {
    bool formatted = a.kind == ActionKind::Printf || a.kind == ActionKind::Cat ||
                     a.kind == ActionKind::System || a.kind == ActionKind::Diagnostic;
    formats_.push_back(formatted ? parse_format(a.text) : ParsedFormat{});
  }
}

EventReader::~EventReader() { ring_buffer__free(rb_); }

Status EventReader::open(const bpf_map *ringbuf) {
  rb_ = ring_buffer__new(bpf_map__fd(ringbuf), &EventReader::on_event, this, nullptr);
  if (!rb_) {
    int err = errno;
    return make_error("opening the event ring buffer", strerror(err), {}, err);
  }
  return Ok{};
}

int EventReader::epoll_fd() const { return ring_buffer__epoll_fd(rb_); }

void EventReader::drain(const Limit &limit) {
  limit_ = limit;
  next_check_ns_ = 0;
  discarding_ = false;
  ring_buffer__consume(rb_);  // < 0 when on_event stopped it: the rest stays queued
}

namespace {
// A HelperError action's text, "FILE:LINE:COL: WARNING: Failed to HELPER" (lower_actions.cpp),
// taken apart from the right (a file name may hold ':'). No place: just the helper.
output::HelperError helper_error_of(const std::string &text) {
  output::HelperError e;
  const std::string marker = ": WARNING: Failed to ";
  size_t at = text.rfind(marker);
  if (at == std::string::npos) {
    e.helper = text;
    return e;
  }
  e.helper = text.substr(at + marker.size());
  std::string place = text.substr(0, at);
  size_t col = place.rfind(':');
  size_t line = col == std::string::npos || col == 0 ? std::string::npos : place.rfind(':', col - 1);
  if (line == std::string::npos) {
    e.file = place;
    return e;
  }
  e.file = place.substr(0, line);
  e.line = static_cast<uint32_t>(strtoul(place.c_str() + line + 1, nullptr, 10));
  e.col = static_cast<uint32_t>(strtoul(place.c_str() + col + 1, nullptr, 10));
  return e;
}

uint64_t monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

// The driver blocks SIGINT and SIGTERM (they are read from a signalfd), so one that arrived
// is pending until the session's loop reads it.
bool interrupt_pending() {
  sigset_t pending;
  return sigpending(&pending) == 0 &&
         (sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1);
}
}  // namespace

bool EventReader::limit_reached() {
  uint64_t now = monotonic_ns();
  if (now < next_check_ns_)
    return false;
  next_check_ns_ = now + 5000000;  // 5 ms: sigpending is a system call
  return (limit_.deadline_ns && now >= limit_.deadline_ns) || interrupt_pending();
}

int EventReader::on_event(void *self, void *data, size_t size) {
  auto *r = static_cast<EventReader *>(self);
  auto *bytes = static_cast<const uint8_t *>(data);
  uint64_t id = 0;
  if (size >= 8)
    memcpy(&id, bytes, 8);
  if (r->discarding_ && id >= static_cast<uint64_t>(EventId::FirstAction)) {
    r->discarded_++;
    return 0;
  }
  r->handle(bytes, size);
  if (!r->discarding_ && r->limit_reached()) {
    if (!r->limit_.discard_late)
      return -EINTR;  // stop here; ring_buffer__consume returns
    r->discarding_ = true;
  }
  return 0;
}

void EventReader::handle(const uint8_t *data, size_t size) {
  if (size < 8)
    return;
  uint64_t id;
  memcpy(&id, data, 8);
  if (id == static_cast<uint64_t>(EventId::NewProcess)) {
    if (size >= 16 && on_new_process) {
      uint64_t pid;
      memcpy(&pid, data + 8, 8);
      on_new_process(static_cast<pid_t>(pid));
    }
    return;
  }
  if (id == static_cast<uint64_t>(EventId::Exit)) {
    // The first exit() wins; what is queued behind it only clears or zeroes maps (see
    // print_after_exit).
    if (!exit_requested_ && size >= 16) {
      int64_t code;
      memcpy(&code, data + 8, 8);
      exit_code_ = static_cast<int>(code);
    }
    exit_requested_ = true;
    quiet_after_exit_ = true;
    return;
  }
  uint64_t index = id - static_cast<uint64_t>(EventId::FirstAction);
  if (id < static_cast<uint64_t>(EventId::FirstAction) || index >= formats_.size())
    return;
  if (quiet_after_exit_ && manifest_.actions[index].kind != ActionKind::Clear &&
      manifest_.actions[index].kind != ActionKind::Zero)
    return;
  if (size < 8 + manifest_.actions[index].args.size)
    return;  // a truncated event: nothing sensible to print
  run_action(index, data + 8);
}

void EventReader::run_action(size_t index, const uint8_t *payload) {
  const ActionDesc &action = manifest_.actions[index];
  auto arg_u64 = [&](size_t i) {
    uint64_t v;
    memcpy(&v, payload + action.args.offsets[i], 8);
    return v;
  };
  switch (action.kind) {
  case ActionKind::Printf:
    writer_.message(output::MessageKind::Printf,
                    output::format_printf(formats_[index], action.args, payload));
    break;
  case ActionKind::PrintValue:
    writer_.value(action.args.elems[0], payload + action.args.offsets[0]);
    break;
  case ActionKind::Print: {
    const MapDesc &desc = manifest_.maps[action.map];
    auto snap = snapshot_map(maps_[action.map], desc);
    if (!snap) {
      warn("print(" + desc.name + "): " + snap.error().why);
      break;
    }
    // bpftrace: print() of a map without keys that holds nothing prints its zero value
    // (`@: 0`, stats with zero counts); a keyed map prints nothing.
    if (snap->entries.empty() && desc.key.is_none() && !desc.value.is_bucketed())
      snap->entries.push_back(zero_entry(desc));
    writer_.map(*snap, arg_u64(0), arg_u64(1));
    break;
  }
  case ActionKind::Clear:
  case ActionKind::Zero: {
    const MapDesc &desc = manifest_.maps[action.map];
    Status s = action.kind == ActionKind::Clear ? clear_map(maps_[action.map], desc)
                                                : zero_map(maps_[action.map], desc);
    if (!s)
      warn(std::string(action.kind == ActionKind::Clear ? "clear(" : "zero(") + desc.name +
           "): " + s.error().why);
    break;
  }
  case ActionKind::Time:
    writer_.message(output::MessageKind::Time, local_time(action.text));
    break;
  case ActionKind::Cat:
    if (auto text = read_file(output::format_printf(formats_[index], action.args, payload),
                                manifest_.max_cat_bytes))
      writer_.message(output::MessageKind::Cat, *text);
    break;
  case ActionKind::System:
    writer_.message(output::MessageKind::Syscall,
                    run_command(output::format_printf(formats_[index], action.args, payload)));
    break;
  case ActionKind::Join: {
    // The array's strings up to the first empty one (its NULL, or a pointer that failed to
    // read), as bpftrace.
    std::string joined;
    for (size_t i = 0; i < action.args.elems.size(); i++) {
      std::string s = output::load_string(action.args.elems[i], payload + action.args.offsets[i]);
      if (s.empty())
        break;
      joined += (i ? action.text : "") + s;
    }
    writer_.message(output::MessageKind::Join, joined);
    break;
  }
  case ActionKind::Sample:
  case ActionKind::Marker:
    if (timeline)
      action.kind == ActionKind::Sample ? timeline->on_sample(action, payload)
                                        : timeline->on_marker(action, payload);
    else
      writer_.message(output::MessageKind::Printf, describe_timeline_event(action, payload));
    break;
  case ActionKind::Diagnostic: {
    // stderr, a line each, as bpftrace's errorf/warnf (never in -f json's stdout). The text is
    // "place: ERROR: ..." or "place: WARNING: ..." (lower_actions.cpp); --no-warnings drops
    // the warnings (warnf's, the runtime's), as in bpftrace.
    size_t warning = action.text.find(": WARNING: "), error = action.text.find(": ERROR: ");
    if (warnings_suppressed && warning < error)
      break;
    fprintf(stderr, "%s\n",
            output::format_printf(formats_[index], action.args, payload).c_str());
    break;
  }
  case ActionKind::HelperError: {
    output::HelperError e = helper_error_of(action.text);
    memcpy(&e.retcode, payload, sizeof(e.retcode));
    if (!warnings_suppressed)  // --no-warnings drops -k's reports, in either format
      writer_.helper_error(e);
    break;
  }
  case ActionKind::SkbOutput:
    break;  // its packets come through their own perf buffer (skb_output.h), not the ring
  }
}

}  // namespace rbt::runtime
