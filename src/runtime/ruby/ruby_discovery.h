#pragma once
// User space's half of rstack's discovery (design: docs/rstack-discovery.md): finds the Ruby
// interpreters on the machine (libruby files and ruby executables that running processes map,
// the system's libruby through the dynamic loader's cache, `ruby` on PATH), computes each
// file's facts once (rbt_ruby_binary) and attaches an early uprobe to it, plus the fork and
// exec programs. From then on BPF writes the per-process facts itself
// (stdlib/bpf/ruby_discovery.h): no round trip per process, one per new file.

#include <bpf/libbpf.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "result.h"
#include "ruby_layouts.h"  // stdlib/bpf: shared with the BPF walker
#include "symbols/elf_file.h"

namespace rbt::runtime::ruby {

class RubyDiscovery {
public:
  struct Binary {
    std::string path;  // as opened (may be /proc/PID/root/...)
    uint64_t dev = 0, ino = 0;
    std::shared_ptr<ElfFile> elf;
    std::string version;
    rbt_ruby_binary facts{};
  };

  // Null when the object has no discovery programs (it does not use rstack).
  static std::unique_ptr<RubyDiscovery> open(bpf_object *obj, bool verbose);
  ~RubyDiscovery();  // detaches everything it attached

  // Attaches the exec and fork programs and an early uprobe on every Ruby file found; appends
  // the pids of running processes that map one to `running` (for user space to inspect now).
  Status attach(std::vector<pid_t> &running);
  // The index of the Ruby file at `path` (by device and inode), adding and attaching it first
  // when it is new: a file first seen after the attach. -1 when it cannot be probed.
  int binary_for(const std::string &path);
  const Binary *binary(uint32_t index) const {
    return index < binaries_.size() ? &binaries_[index] : nullptr;
  }
  // Judges the executable files processes exec'd since the last call (rbt_ruby_execs): one
  // that neither is a Ruby nor links libruby gets a verdict in BPF, and its processes are
  // known not to be Ruby from their exec on, without asking user space again.
  void judge_execs();
  // Where the file keeps ruby_global_symbols, found from one of its processes: every later
  // process of the file gets it from BPF.
  void set_global_symbols(uint32_t index, uint64_t vaddr);

private:
  RubyDiscovery(bpf_object *obj, bool verbose) : obj_(obj), verbose_(verbose) {}
  int add(const std::string &path, uint64_t dev, uint64_t ino);

  bpf_object *obj_;
  bool verbose_;
  int binaries_fd_ = -1;
  std::vector<Binary> binaries_;
  std::vector<std::pair<uint64_t, uint64_t>> rejected_;  // files that are no Ruby rstack probes
  std::vector<bpf_link *> links_;
  int exes_fd_ = -1, execs_fd_ = -1;
  std::set<std::pair<uint64_t, uint32_t>> judged_;  // kernel file ids judged (either way)
};

}  // namespace rbt::runtime::ruby
