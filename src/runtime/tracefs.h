#pragma once
// tracefs is where tracepoint ids and formats live. Many machines (this one included) do not
// mount it at boot; rbt mounts it where libbpf and the kernel docs expect it.

#include <string>

#include "result.h"

namespace rbt::runtime {

// The tracefs root with a trailing "/events" available, mounting it at /sys/kernel/tracing when
// neither it nor /sys/kernel/debug/tracing is mounted.
Result<std::string> tracefs_root();

}  // namespace rbt::runtime
