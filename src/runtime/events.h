#pragma once
// Events from the BPF programs (printf, exit) arrive through one ring buffer and are turned
// into output here.

#include <bpf/libbpf.h>

#include <cstdio>
#include <vector>

#include "format_spec.h"
#include "manifest.h"
#include "result.h"

namespace rbt::runtime {

class EventReader {
public:
  EventReader(const Manifest &manifest, std::FILE *out);
  ~EventReader();
  EventReader(const EventReader &) = delete;
  EventReader &operator=(const EventReader &) = delete;

  Status open(const bpf_map *ringbuf);
  int epoll_fd() const;
  // Handles every pending event; returns how many.
  int drain();

  bool exit_requested() const { return exit_requested_; }
  int exit_code() const { return exit_code_; }

private:
  static int on_event(void *self, void *data, size_t size);
  void handle(const uint8_t *data, size_t size);

  const Manifest &manifest_;
  std::FILE *out_;
  std::vector<ParsedFormat> formats_;  // parsed printf formats, by action index
  ring_buffer *rb_ = nullptr;
  bool exit_requested_ = false;
  int exit_code_ = 0;
};

}  // namespace rbt::runtime
