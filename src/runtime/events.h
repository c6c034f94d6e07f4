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
  // Handles every pending event; returns how many.
  int drain();

  bool exit_requested() const { return exit_requested_; }
  // Called for EventId::NewProcess: a process whose stacks we will print was first seen.
  std::function<void(pid_t)> on_new_process;
  // sample() and marker() events go here when set (rbt record), else they print as text.
  Timeline *timeline = nullptr;
  int exit_code() const { return exit_code_; }

private:
  static int on_event(void *self, void *data, size_t size);
  void handle(const uint8_t *data, size_t size);
  void run_action(size_t index, const uint8_t *payload);

  const Manifest &manifest_;
  output::Writer &writer_;
  std::vector<const bpf_map *> maps_;
  std::vector<ParsedFormat> formats_;  // parsed printf/cat/system formats, by action index
  ring_buffer *rb_ = nullptr;
  bool exit_requested_ = false;
  int exit_code_ = 0;
};

}  // namespace rbt::runtime
