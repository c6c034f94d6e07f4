#pragma once
// What nsecs(sw_tai) and pid(curr_ns)/tid(curr_ns) need from user space, measured before
// tracing starts and handed to the programs through RuntimeConfig.

#include <ctime>

#include <cstdint>

namespace rbt::runtime {

// A clock_gettime(2) reading in nanoseconds.
uint64_t clock_ns(clockid_t clock);

// CLOCK_TAI - CLOCK_BOOTTIME in nanoseconds, read between two CLOCK_BOOTTIME readings (the
// "triple sandwich"), the tightest of a few tries.
uint64_t tai_offset_ns();

// rbt's pid namespace as bpf_get_ns_current_pid_tgid identifies it: the kernel's dev_t of the
// nsfs device and the inode of /proc/self/ns/pid. False if that file cannot be read.
bool current_pid_namespace(uint64_t &dev, uint64_t &ino);

}  // namespace rbt::runtime
