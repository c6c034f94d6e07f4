#pragma once
// The user-space half of nstack (stdlib/bpf/native_stack.bpf.c): ships each binary's unwind
// rows to BPF once, keeps each process's executable mappings in rbt_unwind_procs (read from
// /proc/PID/maps when a probe first meets the process, and again when it meets a pc outside
// them, e.g. after a dlopen), and reads walked stacks back as pcs for the printer.

#include <bpf/libbpf.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "native_unwind.h"

namespace rbt::runtime {

struct UnwindTable;

struct NativeStack {
  pid_t pid = 0;
  std::vector<uint64_t> pcs;  // leaf first: where the thread was, then return addresses
  uint32_t stop = RBT_NATIVE_STOP_END;
  bool functions = false;  // pcs are function starts (RBT_NATIVE_FUNCTIONS): print no offsets
};

class NativeStacks {
public:
  // Null when the object does not use nstack (it has no rbt_unwind_procs map).
  static std::unique_ptr<NativeStacks> open(bpf_object *obj, bool verbose);

  // Reads the process's mappings now and gives BPF their rows (-p, and what poll() finds); an
  // unchanged maps file is skipped unless `anew` (BPF met another image under the pid).
  void add_process(pid_t pid, bool anew = false);
  // Maps the processes the probes met since the last call.
  void poll();
  // The stack of an id rbt_nstack returned; nullopt for 0 or an id not in the map.
  std::optional<NativeStack> stack(uint64_t id) const;
  // Called after a process's mappings were read again (a library loaded since).
  std::function<void(pid_t)> on_remapped;

private:
  NativeStacks(bpf_object *obj, bool verbose);
  struct Binary {
    uint32_t first_row = 0, rows = 0;  // rows == 0: no usable CFI (or no room left)
    uint32_t interpreter = 0;  // 1: it defines ruby_version (libruby, or a static ruby)
    uint32_t first_bucket = 0, buckets = 0, bucket_base = 0;  // buckets == 0: none
    std::vector<std::pair<uint64_t, uint64_t>> segments;  // PT_LOAD (file offset, vaddr)
    std::vector<uint64_t> filesz;
  };
  // The rows of the file at `path` (as rbt can open it), built and shipped on first use.
  const Binary &binary(const std::string &path);
  // Ships the table's bucket index after the rows (none when it does not fit).
  void ship_buckets(const UnwindTable &table, Binary &b);

  bool verbose_;
  int rows_fd_, buckets_fd_, procs_fd_, unknown_fd_, stacks_fd_, epoch_fd_;
  uint32_t next_row_ = 0;
  uint32_t next_bucket_ = 0;
  uint32_t generation_ = 0;  // rbt_unwind_proc.generation: unique per update (and delete)
  uint64_t polls_ = 0;
  void forget_exited();  // drops the records of processes that have exited
  void publish_epoch();  // generation_ into rbt_unwind_epoch
  std::map<std::string, Binary> binaries_;  // by "dev:inode"
  // What was last read of each process: the maps text, to skip an unchanged file, and the
  // mappings written, to skip a rewrite when only mappings without rows moved (the heap, a
  // malloc'd arena): a rewrite gives a new generation, which empties BPF's row cache of the
  // process, and a Ruby process that allocates remaps on nearly every 10 ms look.
  struct Seen {
    std::string text;
    std::vector<rbt_unwind_mapping> mappings;
  };
  std::map<pid_t, Seen> last_maps_;
};

}  // namespace rbt::runtime
