#pragma once
// Turns stack values ({stack id, pid}) into frame lines: reads the stack trace maps and
// symbolizes kernel addresses with kallsyms and user addresses with the process's memory map,
// captured when the process was first seen (EventId::NewProcess), so stacks of exited
// processes still print as symbols.

#include <bpf/libbpf.h>
#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "manifest.h"
#include "profile.h"
#include "symbols/elf_file.h"
#include "symbols/kernel_symbols.h"
#include "symbols/process_maps.h"

namespace rbt::runtime {

class StackPrinter {
public:
  StackPrinter(const Manifest &manifest, bpf_object *obj);

  void capture_process(pid_t pid);
  // The symbol `addr` falls in, or its hex value.
  std::string symbol(bool user, uint64_t addr, pid_t pid);
  // A user address: its function (symbol start in the process, 0 when no symbol covers it), the
  // "sym+off" text (or "module+0xoff" without a symbol, or hex outside any mapping) and the
  // mapping's path as the process sees it.
  struct UserFunction {
    uint64_t function = 0;
    std::string text, module;
  };
  UserFunction user_function(pid_t pid, uint64_t addr);
  // One line per frame, leaf first, as `type.stack_mode` says.
  std::vector<std::string> frames(const Type &type, const uint8_t *value);
  // The same stack as structured frames for the profile formats, leaf first: the function's
  // name without its offset (so samples in one function merge) and the binary it is in.
  std::vector<profile::Frame> frame_records(const Type &type, const uint8_t *value);

private:
  std::string user_frame(pid_t pid, uint64_t addr, StackMode mode);
  // The stack's addresses, leaf first (empty when the kernel could not take it).
  std::vector<uint64_t> addresses(const Type &type, const uint8_t *value);
  profile::Frame user_record(pid_t pid, uint64_t addr);
  const ElfFile *elf(const std::string &path, pid_t pid);
  // The CFI's function start at or below vaddr in the file, or nullopt.
  std::optional<uint64_t> cfi_function(const std::string &path, pid_t pid, uint64_t vaddr);

  const Manifest &manifest_;
  bpf_object *obj_;
  KernelSymbols kernel_;
  std::map<pid_t, std::vector<Mapping>> processes_;
  // When each process's map was captured again, and how long to wait before the next time.
  static constexpr int64_t kFirstWait = 20000000, kLongestWait = 2000000000;  // ns
  struct Recapture {
    int64_t at = 0;
    int64_t wait_ns = kFirstWait;
  };
  std::map<pid_t, Recapture> recaptured_;
  std::map<std::string, std::unique_ptr<ElfFile>> elves_;  // null: not readable
  std::map<std::string, std::vector<uint64_t>> cfi_functions_;
};

}  // namespace rbt::runtime
