#pragma once
// tracefs is where tracepoint ids and formats live. Many machines (this one included) do not
// mount it at boot; rbt mounts it where libbpf and the kernel docs expect it.

#include <bpf/libbpf.h>

#include <string>

#include "result.h"

namespace rbt::runtime {

// The tracefs root with a trailing "/events" available, mounting it at /sys/kernel/tracing when
// neither it nor /sys/kernel/debug/tracing is mounted.
Result<std::string> tracefs_root();

// Whether any program of `obj` calls bpf_trace_printk or bpf_trace_vprintk (debugf).
bool calls_trace_printk(bpf_object *obj);

// debugf's lines go to the trace buffer, which users and bpftrace's tests read at
// /sys/kernel/debug/tracing/trace: rbt mounts debugfs at /sys/kernel/debug when a program calls
// debugf and it is not mounted (the kernel then mounts tracefs under it). Best effort: a
// failure only means the lines are read at /sys/kernel/tracing/trace instead.
void mount_debugfs_for_debugf();

}  // namespace rbt::runtime
