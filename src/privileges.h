#pragma once
// Whether this process may load BPF programs and open perf events at all, checked before any
// work so an unprivileged user is told what is missing instead of the kernel's bare EPERM.

#include "result.h"

namespace rbt {

// Ok with CAP_SYS_ADMIN, or with both CAP_BPF and CAP_PERFMON in the effective set; else an
// error naming the missing capabilities, with a hint.
Status check_tracing_privileges();

}  // namespace rbt
