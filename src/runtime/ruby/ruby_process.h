#pragma once
// One process seen through rstack's eyes: where its Ruby interpreter is mapped, which version
// it is, and how the BPF walker reaches each thread's execution context (the rbt_ruby_proc
// record of stdlib/bpf/ruby_layouts.h). Found from /proc/PID/maps and the interpreter's ELF,
// read through /proc/PID/root so that processes in containers work.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "result.h"
#include "symbols/elf_file.h"
#include "ruby_layouts.h"  // stdlib/bpf: shared with the BPF walker

namespace rbt::runtime::ruby {

struct RubyProcess {
  pid_t pid = 0;
  std::string binary;     // path as the process sees it: /usr/lib/.../libruby-3.1.so.3.1
  uint64_t load_bias = 0; // run-time address minus link-time address
  std::string version;    // "3.1.2"
  rbt_ruby_proc proc{};   // what BPF reads
  std::shared_ptr<ElfFile> elf;  // kept to name C functions after the process exits
};

enum class InspectOutcome : uint8_t { Ruby, NotRuby, NotYet };

struct Inspection {
  InspectOutcome outcome = InspectOutcome::NotRuby;
  RubyProcess process;  // when Ruby
  Error error;          // when NotRuby: what was found (for -p's message)
  // NotYet because the layout failed its check against the process (set with `error`): may
  // be the process is still starting; an error if it lasts.
  bool layout_mismatch = false;
  // NotRuby because rstack has no layout for this Ruby's version: its stacks print as
  // "[no Ruby frames: unknown Ruby layout]", not as a process without Ruby.
  bool no_layout = false;
  // The process's executable (dev, ino) when the inspection began: an exec during it (a `-c`
  // child, a copy of rbt, running the command) makes the answer one of an earlier image.
  uint64_t exe_dev = 0, exe_ino = 0;
};

// The (dev, ino) of /proc/PID/exe, or {0, 0}.
std::pair<uint64_t, uint64_t> process_exe_identity(pid_t pid);

// What the attach-time check of a layout found (walk of the main thread from user space).
enum class LayoutCheck : uint8_t { Matches, Mismatch, NotYet };
struct LayoutCheckResult {
  LayoutCheck outcome = LayoutCheck::NotYet;
  std::string why;  // Mismatch: what did not decode
  int ruby_frames = 0;
  uint64_t main_ec = 0;  // the execution context the check walked
};

// Walks the main thread's control frames through /proc/PID/mem with layout `l` and checks that
// every Ruby frame's iseq, label and path read as such. NotYet: the VM or its main thread has
// no Ruby frame yet, nothing to judge.
LayoutCheckResult check_layout(pid_t pid, const ElfFile &elf, uint64_t load_bias,
                               const rbt_ruby_layout &l);

// For the lookup without a TLS ec: walks the VM's threads list as the BPF walker does (`vm_ptr`
// is where ruby_current_vm_ptr is) and checks that it comes back to its head, that each thread
// has a pthread_t, and that `main_ec` (check_layout's, 0 if none) is one of theirs.
LayoutCheckResult check_thread_list(pid_t pid, uint64_t vm_ptr, const rbt_ruby_layout &l,
                                    uint64_t main_ec);

// RBT_RUBY_LAYOUT (e.g. "3.1"): the layout to use whatever version the process reports. 0 when
// unset; an error when it names no layout rbt has.
Result<uint32_t> layout_override();

// How BPF finds a thread's execution context: the TLS ec where the Ruby has one, else the
// threads list. Hidden RBT_RUBY_THREAD_LOOKUP=list|tls forces one (list is how the lookup
// Ruby 2.7 needs is tested on a newer Ruby).
enum class ThreadLookup : uint8_t { Auto, Tls, List };
Result<ThreadLookup> thread_lookup_override();

// Inspects `pid`. NotYet: the interpreter is mapped but its TLS module id is not assigned yet
// (the dynamic loader is still running), worth asking again shortly.
Inspection inspect_process(pid_t pid);

// Reads `n` bytes of the process's memory at `addr` (false if unreadable).
bool read_process_memory(pid_t pid, uint64_t addr, void *dst, size_t n);

// When `pid` started, in clock ticks since boot (/proc/PID/stat field 22), as rbt_ruby_proc.start
// wants it; 0 when unknown.
uint64_t process_start_ticks(pid_t pid);

// Index into rbt_ruby_layouts_table for a version code (301), or -1.
int layout_index(uint32_t version_code);

}  // namespace rbt::runtime::ruby
