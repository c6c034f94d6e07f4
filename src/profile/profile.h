#pragma once
// The profile model: what every profile format writes and every reader fills. Stack maps
// printed with -f folded|pprof|speedscope|svg, `rbt record`'s samples and markers, and
// `rbt report`'s input all become a Profile; each format is one writer over it
// (src/profile/<format>.cpp). The model knows nothing of BPF or of how stacks were walked, so
// this library (rbt_profile) needs neither libbpf nor LLVM, and `rbt report` runs anywhere.
//
// Stability: writers must produce byte-identical files for equal profiles. Frames, samples and
// labels are kept in the order the producer adds them; producers add them in a sorted order.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rbt::profile {

// What a frame is, so writers can colour, categorise or label it.
enum class FrameKind : uint8_t {
  Ruby,       // a Ruby method or block: name = label, file = path, line
  RubyCfunc,  // a C method called from Ruby: name = method name (`each`), no file or line
  Native,     // a user-space native function: name = symbol, module = binary path
  Kernel,     // a kernel function: name = symbol, module = "[kernel]"
  Key,        // a map key part that is not a stack (comm, pid, a string): name = its text;
              // pprof leaves these out of the stack (the sample's labels carry them)
  Truncated,  // the walk's depth limit: name says how many frames were cut
};

struct Frame {
  FrameKind kind = FrameKind::Native;
  std::string name;
  std::string file;    // source file (Ruby path); empty when unknown
  uint32_t line = 0;   // 0 when unknown
  std::string module;  // binary or shared object for Native; "[kernel]" for Kernel
  auto operator<=>(const Frame &) const = default;
};

// A sample value's meaning, as pprof's ValueType: ("samples", "count"), ("off_cpu",
// "nanoseconds"), ("bytes", "bytes").
struct ValueType {
  std::string type;
  std::string unit;
  auto operator<=>(const ValueType &) const = default;
};

// A sample's label: pid, tid, comm, or a key part. Numbers stay numbers (pprof num labels).
struct Label {
  std::string key;
  std::string str;  // when !is_number
  int64_t number = 0;
  bool is_number = false;
  std::string unit;  // optional, for numbers
  auto operator<=>(const Label &) const = default;
};

// One stack with its values. From a map: one entry (stack root first, values per the map's
// aggregation). From `rbt record`: one event, with its time and thread.
struct Sample {
  std::vector<uint32_t> stack;  // indices into Profile::frames, ROOT FIRST
  std::vector<int64_t> values;  // one per Profile::value_types
  std::vector<Label> labels;
  // Recorded samples only (time_ns == 0 for aggregated maps).
  uint64_t time_ns = 0;  // since Profile::start_ns
  uint32_t pid = 0, tid = 0, cpu = 0;
};

// An interval or instant on a thread's timeline (off-CPU, block I/O, page fault, GC, or a
// script's own marker). end_ns == start_ns for an instant.
struct Marker {
  std::string name;      // "OffCPU", "BlockIO", "PageFault", "GC mark", or a script's name
  std::string category;  // "Scheduler", "IO", "Memory", "GC", "User"
  uint64_t start_ns = 0, end_ns = 0;  // since Profile::start_ns
  uint32_t pid = 0, tid = 0;
  std::vector<uint32_t> stack;  // root first; may be empty
  std::vector<std::pair<std::string, std::string>> data;  // shown as the marker's fields
};

// A thread that samples or markers belong to (a track in the Firefox Profiler).
struct Thread {
  uint32_t pid = 0, tid = 0;
  std::string name;          // thread name (comm of the thread)
  std::string process_name;  // comm of the thread group leader
};

struct Profile {
  std::string name;  // the map's name ("@", "@offcpu") or "rbt record"
  std::vector<ValueType> value_types;
  ValueType period_type;     // e.g. ("cpu", "nanoseconds") for a 99 Hz profile
  int64_t period = 0;        // 0 when not sampled at a fixed rate
  uint64_t start_ns = 0;     // wall clock (ns since the Unix epoch) at the start
  uint64_t duration_ns = 0;
  uint64_t lost = 0;         // samples or events lost (ring buffer full, map full)
  std::vector<Frame> frames;  // interned: use intern()
  std::vector<Sample> samples;
  std::vector<Marker> markers;
  std::vector<Thread> threads;  // sorted by (pid, tid)

  // The index of `frame` in frames, adding it when new.
  uint32_t intern(const Frame &frame);

private:
  std::map<Frame, uint32_t> index_;
};

}  // namespace rbt::profile

namespace rbt::profile {

// A frame as one line of text, the way the text output and the flamegraph formats name it:
// Ruby `label (path:line)`, C methods `label <cfunc>`, everything else its name. Never empty
// ("[unknown]").
std::string frame_text(const Frame &frame);

}  // namespace rbt::profile
