#pragma once
// Events the ring buffer had no room for. Programs add bpf_ringbuf_output's -EAGAIN to a u64
// in the object's .bss (Manifest::lost_events_name); reading it is one map lookup, cheap enough
// to do after every drain of the ring buffer.

#include <bpf/libbpf.h>

#include <cstdint>
#include <string>
#include <vector>

#include "manifest.h"

namespace rbt::runtime {

// Where a u64 counter the programs add to lies: the object's .bss map and the offset in its one
// value. fd < 0 when the object has no such counter.
struct BssCounter {
  int fd = -1;
  size_t offset = 0;
  size_t value_size = 0;  // of the whole .bss value, which a lookup copies out
};
BssCounter find_bss_counter(bpf_object *obj, const std::string &name);
// The counter's value now (0 when it cannot be read).
int64_t read_bss_counter(const BssCounter &counter);

class LostEvents {
public:
  // Finds the counter in a loaded object; a script that sends no events has none.
  LostEvents(bpf_object *obj, const Manifest &manifest);

  // Events lost since the last call.
  uint64_t take_new();

private:
  // A linked object (codegen/partition.h) keeps one of the parts' copies of the weak counter.
  BssCounter counter_;
  uint64_t reported_ = 0;
};

}  // namespace rbt::runtime
