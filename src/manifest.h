#pragma once
// The Manifest is what codegen tells the runtime about the object it produced: which program
// serves which probe, what each map holds and how its keys and values are laid out, and how to
// format each event the programs send through the ring buffer. The runtime never sees the AST.

#include <cstdint>
#include <string>
#include <utility>
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
  SelfSignal,  // self:signal:SIGUSR1: run (as BEGIN is) each time rbt receives the signal
  Bench,       // bench:NAME: with --mode bench, run repeatedly and timed (an XDP program)
  Iter,        // iter:task[:pin]: a BPF iterator, run once over every object by reading it
};

const char *probe_kind_name(ProbeKind kind);
// The iterators `iter:` probes take (bpftrace's: task, task_file, task_vma); each one's
// context is the kernel's `struct bpf_iter__<name>`.
const std::vector<std::string> &iterator_names();
bool is_iterator(const std::string &name);  // "tracepoint", "BEGIN", ...
// What the `probetype` builtin gives, as bpftrace names probe types: BEGIN and END "special".
const char *probe_type_name(ProbeKind kind);

// One attach point after parsing; `name` is what the `probe` builtin and messages show.
struct ProbeDesc {
  ProbeKind kind = ProbeKind::Begin;
  std::string name;    // e.g. "tracepoint:syscalls:sys_enter_openat", "profile:hz:99"
  std::string target;  // tracepoint category, binary path, software event name, time unit
  // With -p: `target` is a path inside that process's root (/proc/PID/root + target), as the
  // process names the file. Kept apart from the pid so that an object compiled for one process
  // serves another of the same files (the object cache, cache/cache_key.h).
  bool in_process_root = false;
  std::string func;    // tracepoint event, symbol, USDT probe name
  uint64_t offset = 0; // uprobe symbol offset
  uint64_t freq = 0;   // profile: samples per second (0 when a period is used)
  uint64_t period = 0; // interval/profile: nanoseconds; software/hardware: event count
  std::string program; // name of the BPF function serving this probe in the ELF object
  // Where the probe's first attach point is in the script (1-based; 0: not known), for an
  // error only the kernel finds, on loading: a caret under it (run_object.cpp).
  uint32_t line = 0, col = 0, end_line = 0, end_col = 0;
};

struct MapDesc {
  std::string name;      // as the user wrote it: "@", "@start"
  std::string bpf_name;  // name of the BPF map in the object (kernel map names are short)
  Type key;              // none() for a map without keys
  Type value;            // an aggregation, or the assigned value type
  std::vector<std::string> key_names;  // per key part: "comm", "pid", "" (sema's MapInfo)
  // A hash map holds at most max_keys keys (config max_map_keys); an update it refuses (full)
  // adds 1 to the u64 named full_counter in the object's .bss, so the runtime can say how many
  // were dropped. Empty: no program inserts into this map.
  uint64_t max_keys = 0;
  std::string full_counter;

  bool per_cpu() const { return value.is_aggregation(); }
  // A keyless aggregation whose value (or each histogram bucket) has a slot of its own lives in
  // a per-CPU array indexed by bucket (0 for a scalar): the verifier inlines its lookups and
  // they never miss, so updating it is a load and a store. A slot that is zero on every CPU was
  // never written. sum stays a hash: a sum of zeros is still a value to print.
  bool is_array() const;
  uint32_t array_entries() const;  // 1, or the number of histogram buckets
  // Histograms keep one entry per (key, bucket), tseries one per (key, interval slot): the
  // bucket index follows the key, 8-aligned
  // (in an array, the key is the u32 bucket alone).
  uint32_t bucket_offset() const { return is_array() ? 0 : (user_key_size() + 7) / 8 * 8; }
  uint32_t user_key_size() const { return key.is_none() ? 8 : key.size; }
  uint32_t bpf_key_size() const {
    if (is_array())
      return 4;
    return value.is_bucketed() ? bucket_offset() + 8 : user_key_size();
  }
  uint32_t bpf_value_size() const { return value.size; }
};

// A BPF_MAP_TYPE_STACK_TRACE map serving kstack/ustack of one depth.
struct StackMapDesc {
  std::string bpf_name;
  bool user = false;
  uint32_t depth = 0;
};

// Values only known when rbt runs (elapsed, ncpus, cpid), read by programs from a map.
struct RuntimeConfig {
  uint64_t start_ns = 0;  // CLOCK_MONOTONIC (bpf_ktime_get_ns) when rbt started tracing
  uint64_t ncpus = 0;
  uint64_t cpid = 0;
  uint64_t filter_pid = 0;  // -p
  // nsecs(sw_tai): CLOCK_TAI - CLOCK_BOOTTIME, measured once by user space.
  uint64_t tai_offset_ns = 0;
  // pid(curr_ns)/tid(curr_ns): rbt's own pid namespace, as bpf_get_ns_current_pid_tgid wants
  // it (the kernel's dev_t encoding of the nsfs device, and the inode).
  uint64_t pidns_dev = 0;
  uint64_t pidns_ino = 0;
};

// Events in the ring buffer start with a u64 id; the payload follows at offset 8.
enum class EventId : uint64_t {
  Exit = 1,            // payload: int64 exit code
  NewProcess = 2,      // payload: u64 pid; a ustack was taken in a process first seen now, so
                       // user space captures its memory map while it is alive
  FirstAction = 1000,  // FirstAction + i: actions[i]; payload laid out as actions[i].args
};

// What user space does when a program asks for it. Every call site that needs user space
// (printf, print, clear, ...) gets its own ActionDesc, so events carry only an id and values.
enum class ActionKind : uint8_t {
  Printf,      // text: the format (escapes decoded); args: the values
  Print,       // print(@m[, top[, div]]): map; args: (uint64 top, uint64 div), 0 = all / 1
  Clear,       // clear(@m): map; delete every key
  Zero,        // zero(@m): map; set every value to zero, keep the keys
  PrintValue,  // print(value): args: a 1-tuple with the value
  Time,        // time([fmt]): text: strftime format, "%H:%M:%S\n" by default
  Cat,         // cat(fmt, ...): text: printf format of the path ("%s" for cat($p)); args: its values
  System,      // system(fmt, ...): text: printf format of the command; args: its values
  Join,        // join(argv[, sep]): text: the separator; args: kJoinArgs strings of kJoinArgSize
  HelperError, // -k: text: "file:line:col: WARNING: Failed to HELPER"; args: (int64 error)
  Diagnostic,  // errorf/warnf: text: printf format starting "file:line:col: ERROR: "; args
  Sample,      // sample(stacks...): args: (nsecs, pid, tid, cpu, comm[16], stacks...)
  Marker,      // marker("NAME", ...): text: NAME; args: (start, end, pid, tid, ints..., stacks...)
  // skboutput(path, skb, len, offset): text: the pcap file's path. Its packets come through the
  // perf event array kSkbOutputMap (not the ring buffer), each sample the SkbOutputMeta then
  // offset + len bytes of the packet (runtime/skb_output.h).
  SkbOutput,
};

// skboutput()'s perf event array, and what precedes each packet in its samples.
inline constexpr const char *kSkbOutputMap = "rbt_skb_output";
struct SkbOutputMeta {
  uint64_t action;  // the SkbOutput action's id
  uint64_t nsecs;   // bpf_ktime_get_ns() when sent
  uint64_t len, offset;
};

// join() reads this many strings of an array, each into this many bytes (bpftrace's limits).
constexpr uint32_t kJoinArgs = 16;
constexpr uint32_t kJoinArgSize = 1024;

struct ActionDesc {
  ActionKind kind = ActionKind::Printf;
  std::string text;  // printf/time/system format
  Type args;         // tuple describing the payload after the id (empty tuple if none)
  int map = -1;      // index into Manifest::maps for Print/Clear/Zero
};

// A C enum the script defines: the names its values print as (Type::enum_name).
struct EnumDesc {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> values;  // in the order written
};

// What a probe that does not exist or cannot attach does (bpftrace's missing_probes config).
enum class MissingProbes : uint8_t { Error, Warn, Ignore };

struct Manifest {
  std::vector<ProbeDesc> probes;
  std::vector<MapDesc> maps;
  std::vector<ActionDesc> actions;
  std::vector<StackMapDesc> stack_maps;
  // strftime() formats; a Timestamp value holds an index into this.
  std::vector<std::string> strftime_formats;
  // cgroup_path() filters ("*" without one); a CgroupPath value holds an index into this.
  std::vector<std::string> cgroup_path_filters;
  std::vector<EnumDesc> enums;  // the script's enums that some printed value holds
  std::string seen_pids_name = "seen_pids";
  // A one-entry array of RuntimeConfig the runtime fills before BEGIN (when present).
  std::string config_name = "rbt_config";
  // The per-CPU scratch map of values too large for the BPF stack (when a probe needs one).
  std::string scratch_name = "scratch";
  bool print_maps_on_exit = true;  // config = { print_maps_on_exit = false }
  // config = { str_trunc_trailer = "..." }: what follows a string that may have been cut
  // (Type::may_be_cut).
  std::string str_trunc_trailer = "..";
  // config = { max_cat_bytes = N }: cat() prints at most N bytes of a file (0: rbt's own
  // bound, runtime/cat_file.h, with a warning when a file is cut).
  uint64_t max_cat_bytes = 0;
  // config = { missing_probes = warn|ignore }: a probe that cannot attach is skipped (with a
  // warning, or silently) instead of ending the run.
  MissingProbes missing_probes = MissingProbes::Error;
  std::string ringbuf_name = "events";
  // A u64 in the object's .bss (a memory-mapped array user space reads without a syscall):
  // events the ring buffer had no room for, as the sum of bpf_ringbuf_output's -EAGAIN
  // results (adding the result needs no extra instruction to make a 1). Empty: no events.
  std::string lost_events_name;
};

// The signals the program's self:signal probes wait for (SIGUSR1, SIGUSR2): rbt blocks them
// from the start, as it does SIGINT, and takes them through its signalfd.
std::vector<int> self_signals(const Manifest &m);

}  // namespace rbt
