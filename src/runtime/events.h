#pragma once
// Events from the BPF programs (exit and the actions of the manifest: printf, print, clear,
// zero, time, cat, system) arrive through one ring buffer and are carried out here; whatever
// they print goes to the session's output::Writer.

#include <bpf/libbpf.h>

#include <cstdio>
#include <functional>
#include <vector>

#include "format_spec.h"
#include "manifest.h"
#include "output/writer.h"
#include "result.h"
#include "timeline.h"

namespace rbt::runtime {

class EventReader {
public:
  // `maps[i]` is the BPF map of manifest.maps[i] (print, clear and zero read and change it).
  EventReader(const Manifest &manifest, output::Writer &writer,
              std::vector<const bpf_map *> maps);
  ~EventReader();
  EventReader(const EventReader &) = delete;
  EventReader &operator=(const EventReader &) = delete;

  Status open(const bpf_map *ringbuf);
  int epoll_fd() const;

  // How long one drain may go on. A print() of a large map can take longer than the interval
  // that asks for it, so events may arrive faster than they are carried out: an unbounded
  // drain then never returned, and Ctrl-C went unread.
  struct Limit {
    uint64_t deadline_ns = 0;   // CLOCK_MONOTONIC; 0: none
    // Past the deadline, or once SIGINT/SIGTERM is pending: false returns, leaving the rest
    // queued; true drops the rest, counted in discarded() (the last drain, after Ctrl-C).
    bool discard_late = false;
  };
  // Handles pending events until none is left or the limit stops it.
  void drain(const Limit &limit);
  void drain() { drain(Limit{}); }
  // Events dropped by a drain with discard_late (printed by no one: the caller says so).
  uint64_t discarded() const { return discarded_; }

  // Carries out one event that came another way than the ring buffer (an iterator's output).
  void deliver(const uint8_t *data, size_t size) { handle(data, size); }

  bool exit_requested() const { return exit_requested_; }
  // exit(code) as the exit flag tells it (its event may be late, or lost to a full ring
  // buffer); the first exit wins, as for the event.
  void request_exit(int code) {
    if (!exit_requested_)
      exit_code_ = code;
    exit_requested_ = true;
  }
  // What probes queue behind the first exit() event prints nothing (bpftrace ignores events
  // once it is finalizing: a probe that fires again before the run stops adds no output), but
  // clear() and zero() are still carried out, as bpftrace does them in the kernel (its
  // tseries cases rely on it). END's output prints: the session calls this before END.
  void print_after_exit() { quiet_after_exit_ = false; }
  // Called for EventId::NewProcess: a process whose stacks we will print was first seen.
  std::function<void(pid_t)> on_new_process;
  // sample() and marker() events go here when set (rbt record), else they print as text.
  Timeline *timeline = nullptr;
  int exit_code() const { return exit_code_; }

private:
  static int on_event(void *self, void *data, size_t size);
  void handle(const uint8_t *data, size_t size);
  // Whether the drain's limit has been reached (checked every few milliseconds).
  bool limit_reached();
  void run_action(size_t index, const uint8_t *payload);

  const Manifest &manifest_;
  output::Writer &writer_;
  std::vector<const bpf_map *> maps_;
  std::vector<ParsedFormat> formats_;  // parsed printf/cat/system formats, by action index
  ring_buffer *rb_ = nullptr;
  bool exit_requested_ = false;
  bool quiet_after_exit_ = false;  // print_after_exit()
  int exit_code_ = 0;
  Limit limit_;
  uint64_t next_check_ns_ = 0;
  bool discarding_ = false;
  uint64_t discarded_ = 0;
};

}  // namespace rbt::runtime
