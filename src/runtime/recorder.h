#pragma once
// `rbt record`'s timeline: turns sample() and marker() events into a profile::Profile while
// the session runs (stacks are symbolized as they arrive, once per distinct stack id, while
// the stack maps and the processes are still there), then hands the profile to a writer.

#include <sys/types.h>

#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "profile.h"
#include "timeline.h"

namespace rbt::runtime {

// The frames of one event, ROOT FIRST, when its native stack is ustack (frame pointers, which
// place no native frame under its Ruby method): the Ruby stack (root first), then the user
// stack, then the kernel stack. Each argument is leaf first, as the walkers give them. With
// nstack the recorder merges them exactly instead (Timeline::mixed_records).
std::vector<uint32_t> mixed_frames(const std::vector<uint32_t> &ruby,
                                   const std::vector<uint32_t> &user,
                                   const std::vector<uint32_t> &kernel);

// Turns a frame line of the stack printers into a frame of the model: Ruby lines are
// `label (path:line)` or `label <cfunc>`, native and kernel lines are perf-style
// `\tADDR symbol+off (module)` (ustack(perf)/kstack(perf)) or bpftrace-style `symbol+off`.
profile::Frame parse_frame(StackKind kind, const std::string &line);

class Recorder : public Timeline {
public:
  // `period_ns`: the sampling period (0 when only events are recorded).
  Recorder(std::string name, int64_t period_ns);

  void on_sample(const ActionDesc &action, const uint8_t *payload) override;
  void on_marker(const ActionDesc &action, const uint8_t *payload) override;
  void on_lost(uint64_t count) override { profile_.lost += count; }

  // The recorded profile, with its duration and threads filled in. Call once, at the end.
  profile::Profile finish();
  uint64_t lost() const { return profile_.lost; }

private:
  // An event's stacks by kind (StackKind), null when absent.
  struct EventStacks {
    const Type *type[5] = {};
    const uint8_t *value[5] = {};
  };
  // The event's one stack, root first, interned: the exact mixed stack when it has nstack.
  std::vector<uint32_t> event_frames(const EventStacks &stacks, uint32_t pid);
  // The mixed stack of rstack, nstack and kstack ids, root first; cached per ids.
  const std::vector<uint32_t> &merged(const MixedStackIds &ids);
  // The frames of a stack value ({id, pid}), leaf first, interned; cached per stack id.
  const std::vector<uint32_t> &stack(const Type &type, const uint8_t *value);
  // Interns a frame; `unresolved`: named by no symbol yet (a later sample may resolve it).
  uint32_t intern(const profile::Frame &f, bool &unresolved);
  void note_thread(uint32_t pid, uint32_t tid, const std::string &comm);
  uint64_t since_start(uint64_t ktime_ns) const;

  profile::Profile profile_;
  uint64_t start_ktime_ns_;  // CLOCK_MONOTONIC, the clock of nsecs
  std::map<std::tuple<int, int64_t, uint64_t>, std::vector<uint32_t>> stacks_;
  std::vector<uint32_t> uncached_[3];  // per stack kind, the last stack that was not cached
  std::map<std::tuple<uint64_t, uint64_t, int64_t, int32_t>, std::vector<uint32_t>> merged_;
  std::vector<uint32_t> merged_uncached_;
  // Frame lines already parsed, per stack kind: line → (frame, unresolved).
  std::unordered_map<std::string, std::pair<uint32_t, bool>> lines_[3];
  struct NamedThread {
    profile::Thread thread;
    uint64_t read_ns = 0;    // when /proc was read
  };
  std::map<std::pair<uint32_t, uint32_t>, NamedThread> threads_;
  std::map<uint32_t, std::string> process_names_;
};

}  // namespace rbt::runtime
