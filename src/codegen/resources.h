#pragma once
// The BPF objects a program needs beside its code: one map per script map, the ring buffer for
// events, and the printf formats. Creates their globals and records them in the Manifest.

#include <llvm/IR/Module.h>

#include <map>
#include <string>

#include "debug_info.h"
#include "manifest.h"
#include "sema/sema.h"

namespace rbt::codegen {

constexpr uint64_t kDefaultMapEntries = 4096;
constexpr uint64_t kRingbufBytes = 1 << 20;
constexpr uint64_t kStackMapEntries = 4096;

class Resources {
public:
  Resources(DebugInfo &debug_info, const sema::SemaInfo &sema);

  llvm::GlobalVariable *map_global(const std::string &name) { return map_globals_.at(name); }
  const MapDesc &map_desc(const std::string &name) const;
  llvm::GlobalVariable *ringbuf() { return ringbuf_; }
  // The stack trace map for kernel or user stacks of `depth` frames, made on first use.
  llvm::GlobalVariable *stack_map(bool user, uint32_t depth);
  // pid → 1 for processes whose memory map user space was told to capture (ustack).
  llvm::GlobalVariable *seen_pids();
  // The RuntimeConfig map, made on first use.
  llvm::GlobalVariable *config();

  // Registers an action (printf, print, clear, ...); returns the event id that triggers it.
  uint64_t add_action(ActionDesc action);
  int map_index(const std::string &name) const { return static_cast<int>(map_index_.at(name)); }
  // Records one program serving one probe.
  void add_probe(ProbeDesc probe) { manifest_.probes.push_back(std::move(probe)); }

  Manifest take_manifest() { return std::move(manifest_); }

private:
  Manifest manifest_;
  std::map<std::string, llvm::GlobalVariable *> map_globals_;
  std::map<std::string, size_t> map_index_;
  llvm::GlobalVariable *ringbuf_ = nullptr;
  llvm::GlobalVariable *seen_pids_ = nullptr;
  llvm::GlobalVariable *config_ = nullptr;
  std::map<std::pair<bool, uint32_t>, llvm::GlobalVariable *> stack_maps_;
  DebugInfo &debug_info_;
};

}  // namespace rbt::codegen
