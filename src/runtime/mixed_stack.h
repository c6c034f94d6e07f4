#pragma once
// The mixed stack: one stack from Ruby down to the kernel, merged from three raw stacks of the
// same event. Ruby frames at the root; under each C method's Ruby frame the native frames that
// C function ran (C extensions, libc), found by the cfunc's address among the native frames;
// the interpreter's own frames (libruby: vm_exec_core, vm_call_cfunc, rb_vm_*, ...) dropped;
// kernel frames at the leaf. Pure logic on addresses and flags, no BPF and no symbol reading,
// so a printer and a profile writer share it and unit tests can state every case.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rbt::runtime {

struct MixedRubyFrame {
  uint64_t cfunc = 0;  // a C method frame: its C function's address in the process; 0: Ruby code
};

struct MixedNativeFrame {
  uint64_t function = 0;     // start address of the function the frame's pc is in; 0: unknown
  bool interpreter = false;  // in the Ruby interpreter's binary (libruby, or a static ruby)
};

// The raw stacks one mixed stack is merged from, by id: rstack(native)'s value carries all
// three; `rbt record`'s sample() and marker() carry them as separate rstack, nstack and kstack
// values. Absent stacks: ruby or native 0 (never an id), kernel negative.
struct MixedStackIds {
  uint64_t ruby = 0;
  uint64_t native = 0;
  int64_t kernel = -1;
  int32_t pid = 0;
};

enum class MixedSource : uint8_t { Ruby, Native, Kernel };

// One frame of the merged stack: which input stack it comes from and its index there.
struct MixedRef {
  MixedSource source;
  size_t index;
  bool operator==(const MixedRef &) const = default;
};

// All inputs leaf first (as walked: rstack's frames, the user stack, the kernel stack), and so
// is the result. Rules, root to leaf:
//  - a C method's Ruby frame is anchored at the first native frame (after the previous anchor)
//    whose function is its cfunc; its segment runs from there to the next anchor;
//  - interpreter frames are dropped everywhere (an anchor in libruby too: its Ruby frame says it);
//  - a segment's frames up to its last interpreter frame (the C function, its helpers, up to
//    the rb_yield/rb_funcall that runs Ruby again) follow their C method's Ruby frame; frames
//    after that last interpreter frame ran under the Ruby code it ran, so they follow the Ruby
//    frames without an anchor that come next (before the next C method's, or at the leaf);
//  - before the first anchor, frames up to the last interpreter frame are the process's or
//    thread's launch (_start, __libc_start_main, start_thread), beneath every Ruby frame:
//    dropped; the ones after it are placed as a segment's tail;
//  - no Ruby frames (not a Ruby thread): the native frames as they are;
//  - all kernel frames last (at the leaf).
std::vector<MixedRef> merge_mixed_stack(std::span<const MixedRubyFrame> ruby,
                                        std::span<const MixedNativeFrame> native,
                                        size_t kernel_frames);

}  // namespace rbt::runtime
