#pragma once
// exit() sets a u64 in the object's .bss to (1 << 32) | (code & 0xffffffff) before it sends
// its event; user space reads the flag after each drain, so the run ends even when the exit
// event found the ring buffer full. As bpftrace's exit() ("as if a SIGTERM was received"), it
// is asynchronous: the action that calls it ends there, and other probes keep running until
// rbt detaches (bpftrace's runtime tests count 221 calls of a function whose uretprobe calls
// exit(): intcast "Sum casted retval"). Objects of scripts that never call exit() have no flag.

namespace rbt {

inline constexpr const char *kExitFlagName = "rbt_exit_flag";

}  // namespace rbt
