#pragma once
// exit() takes effect at once, as in bpftrace: it sets a u64 in the object's .bss to
// (1 << 32) | (code & 0xffffffff) before it sends its event. Every probe but END returns at
// once while the flag is set, so no probe body runs after exit(), on any CPU; user space reads
// the flag after each drain, so it stops even when the exit event found the ring buffer full.
// Objects of scripts that never call exit() have no flag.

namespace rbt {

inline constexpr const char *kExitFlagName = "rbt_exit_flag";

}  // namespace rbt
