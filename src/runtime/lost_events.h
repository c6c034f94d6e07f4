#pragma once
// Events the ring buffer had no room for. Programs add bpf_ringbuf_output's -EAGAIN to a u64
// in the object's .bss (Manifest::lost_events_name); reading it is one map lookup, cheap enough
// to do after every drain of the ring buffer.

#include <bpf/libbpf.h>

#include <cstdint>
#include <vector>

#include "manifest.h"

namespace rbt::runtime {

class LostEvents {
public:
  // Finds the counter in a loaded object; a script that sends no events has none.
  LostEvents(bpf_object *obj, const Manifest &manifest);

  // Events lost since the last call.
  uint64_t take_new();

private:
  int fd_ = -1;  // the .bss map
  // Where the counter lies in the .bss map's one value. A linked object (codegen/partition.h)
  // keeps every part's copy of the weak counter, and the kernel copies out the whole section.
  size_t offset_ = 0;
  std::vector<char> value_;
  uint64_t reported_ = 0;
};

}  // namespace rbt::runtime
