#pragma once
// The Manifest is what codegen tells the runtime about the object it produced: which program
// serves which probe, what each map holds and how its keys and values are laid out, and how to
// format each event the programs send through the ring buffer. The runtime never sees the AST.

#include <cstdint>
#include <string>
#include <vector>

#include "types.h"

namespace rbt {

enum class ProbeKind : uint8_t {
  Begin,
  End,
  Tracepoint,
  RawTracepoint,
  Kprobe,
  Kretprobe,
  Uprobe,
  Uretprobe,
  Usdt,
  Profile,
  Interval,
  Software,
  Hardware,
};

const char *probe_kind_name(ProbeKind kind);  // "tracepoint", "BEGIN", ...

// One attach point after parsing; `name` is what the `probe` builtin and messages show.
struct ProbeDesc {
  ProbeKind kind = ProbeKind::Begin;
  std::string name;    // e.g. "tracepoint:syscalls:sys_enter_openat", "profile:hz:99"
  std::string target;  // tracepoint category, binary path, software event name, time unit
  std::string func;    // tracepoint event, symbol, USDT probe name
  uint64_t offset = 0; // uprobe symbol offset
  uint64_t freq = 0;   // profile: samples per second (0 when a period is used)
  uint64_t period = 0; // interval/profile: nanoseconds; software/hardware: event count
  std::string program; // name of the BPF function serving this probe in the ELF object
};

struct MapDesc {
  std::string name;      // as the user wrote it: "@", "@start"
  std::string bpf_name;  // name of the BPF map in the object (kernel map names are short)
  Type key;              // none() for a map without keys
  Type value;            // an aggregation, or the assigned value type

  bool per_cpu() const { return value.is_aggregation(); }
  // Histograms keep one entry per (key, bucket): the bucket index follows the key, 8-aligned.
  uint32_t bucket_offset() const { return (user_key_size() + 7) / 8 * 8; }
  uint32_t user_key_size() const { return key.is_none() ? 8 : key.size; }
  uint32_t bpf_key_size() const {
    return value.is_histogram() ? bucket_offset() + 8 : user_key_size();
  }
  uint32_t bpf_value_size() const { return value.size; }
};

// Events in the ring buffer start with a u64 id; the payload follows at offset 8.
enum class EventId : uint64_t {
  Exit = 1,          // payload: int64 exit code
  FirstPrintf = 1000 // FirstPrintf + i: printf format i; payload laid out as formats[i].args
};

struct FormatDesc {
  std::string format;  // the printf format string, escapes already decoded
  Type args;           // a tuple describing the payload (empty tuple when no arguments)
};

struct Manifest {
  std::vector<ProbeDesc> probes;
  std::vector<MapDesc> maps;
  std::vector<FormatDesc> formats;
  std::string ringbuf_name = "events";
};

}  // namespace rbt
