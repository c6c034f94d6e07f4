#pragma once
// The BPF objects a program needs beside its code: one map per script map, the ring buffer for
// events, and the printf formats. Creates their globals and records them in the Manifest.

#include <llvm/IR/Module.h>

#include <algorithm>
#include <map>
#include <string>

#include "debug_info.h"
#include "exit_flag.h"
#include "manifest.h"
#include "sema/sema.h"

namespace rbt::codegen {

constexpr uint64_t kDefaultMapEntries = 4096;
constexpr uint64_t kRingbufBytes = 1 << 20;
constexpr uint64_t kStackMapEntries = 4096;
// One entry of the per-CPU scratch map: the kernel caps per-CPU values at 32 KiB.
constexpr uint64_t kScratchPageBytes = 32768;
// Values up to kStackValueMax bytes stay on the stack while the function's slots fit in
// kStackBudget; the rest of the 512 bytes is left to LLVM's spills and the stdlib's frames,
// which inline into the probe with locals of their own (two string compares and three USDT
// arguments took over 130 bytes, and a budget of 384 overflowed the stack).
constexpr uint64_t kStackValueMax = 128;
constexpr uint64_t kStackBudget = 256;

class Resources {
public:
  Resources(DebugInfo &debug_info, const sema::SemaInfo &sema);

  llvm::GlobalVariable *map_global(const std::string &name) { return map_globals_.at(name); }
  const MapDesc &map_desc(const std::string &name) const;
  llvm::GlobalVariable *ringbuf() { return ringbuf_; }
  // The counter of updates `map` refused because it was full (MapDesc::full_counter), made on
  // first use.
  llvm::GlobalVariable *map_full_counter(const std::string &map);
  // The lost-events counter (Manifest::lost_events_name), made on first use.
  llvm::GlobalVariable *lost_events();
  // The exit flag (exit_flag.h), made on first use.
  llvm::GlobalVariable *exit_flag();
  // The stack trace map for kernel or user stacks of `depth` frames, made on first use.
  llvm::GlobalVariable *stack_map(bool user, uint32_t depth);
  // pid → 1 for processes whose memory map user space was told to capture (ustack).
  llvm::GlobalVariable *seen_pids();
  // skboutput()'s perf event array (kSkbOutputMap; libbpf sizes it to the CPUs).
  llvm::GlobalVariable *skb_output();
  // Per CPU, the pid this CPU announced or found in seen_pids last (announce_process).
  llvm::GlobalVariable *last_announced_pid();
  // The RuntimeConfig map, made on first use.
  llvm::GlobalVariable *config();
  // The per-CPU array holding values too large for the BPF stack (long strings, their events
  // and keys). Each probe owns whole entries ("pages"), so probes that interrupt each other on
  // one CPU never share bytes. Until finish_scratch() knows how many pages of what size the
  // probes took, the map is a placeholder global.
  llvm::GlobalVariable *scratch(llvm::Module &module);
  uint32_t add_scratch_page() { return scratch_pages_++; }
  void note_scratch_bytes(uint64_t used) { scratch_bytes_ = std::max(scratch_bytes_, used); }
  // Defines the real scratch map (if any probe used one) in place of the placeholder.
  void finish_scratch();

  // Registers an action (printf, print, clear, ...); returns the event id that triggers it.
  uint64_t add_action(ActionDesc action);
  // The index of a strftime() format in the manifest, added on first use.
  uint64_t strftime_format(const std::string &format);
  // The index of a cgroup_path() filter in the manifest, likewise.
  uint64_t cgroup_path_filter(const std::string &filter);
  int map_index(const std::string &name) const { return static_cast<int>(map_index_.at(name)); }
  // Records one program serving one probe.
  void add_probe(ProbeDesc probe) { manifest_.probes.push_back(std::move(probe)); }

  Manifest take_manifest() { return std::move(manifest_); }

private:
  Manifest manifest_;
  std::map<std::string, llvm::GlobalVariable *> map_globals_;
  std::map<std::string, size_t> map_index_;
  llvm::GlobalVariable *ringbuf_ = nullptr;
  llvm::GlobalVariable *skb_output_ = nullptr;
  llvm::GlobalVariable *lost_events_ = nullptr;
  llvm::GlobalVariable *exit_flag_ = nullptr;
  std::map<std::string, llvm::GlobalVariable *> map_full_counters_;
  llvm::GlobalVariable *seen_pids_ = nullptr;
  llvm::GlobalVariable *last_announced_pid_ = nullptr;
  llvm::GlobalVariable *config_ = nullptr;
  llvm::GlobalVariable *scratch_ = nullptr;  // the placeholder until finish_scratch()
  uint32_t scratch_pages_ = 0;
  uint64_t scratch_bytes_ = 0;
  std::map<std::pair<bool, uint32_t>, llvm::GlobalVariable *> stack_maps_;
  DebugInfo &debug_info_;
};

}  // namespace rbt::codegen
