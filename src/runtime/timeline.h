#pragma once
// Where sample() and marker() events go: a Timeline the session was given (`rbt record`'s
// Recorder). Without one they are printed as text, so a script using them still shows them.

#include <cstdint>
#include <functional>
#include <vector>

#include "manifest.h"
#include "mixed_stack.h"
#include "profile.h"

namespace rbt::runtime {

class Timeline {
public:
  virtual ~Timeline() = default;
  // `payload` is laid out as action.args (manifest.h: ActionKind::Sample / Marker). Called
  // while the BPF object is loaded, so stack values can still be read.
  virtual void on_sample(const ActionDesc &action, const uint8_t *payload) = 0;
  virtual void on_marker(const ActionDesc &action, const uint8_t *payload) = 0;
  // Events the ring buffer had no room for (every kind, timeline events among them).
  virtual void on_lost(uint64_t count) = 0;

  // The mixed stack (Ruby, native, kernel) of an event's raw stacks, leaf first: the session's
  // merge (mixed_frame_records, unwind/native_frames.h), set before the first event.
  std::function<std::vector<profile::Frame>(const MixedStackIds &)> mixed_records;
};

}  // namespace rbt::runtime
