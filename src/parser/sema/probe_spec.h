#pragma once
// Parses an attach point's text ("t:syscalls:sys_enter_openat", "profile:hz:99") into a
// ProbeDesc: the probe kind with aliases resolved, its target and function, and its rate.
// Only syntax is checked here; whether the target exists is the runtime's business.

#include <string>

#include "manifest.h"

namespace rbt::sema {

struct ProbeSpecResult {
  ProbeDesc probe;
  std::string error;  // non-empty on failure, e.g. "unknown probe type 'foo'"
};

ProbeSpecResult parse_probe_spec(const std::string &text);

// Whether the probe runs in the context of a process (so pid/comm/ustack mean something).
bool is_return_probe(ProbeKind kind);
bool has_arguments(ProbeKind kind);
// Whether the probe's context is the interrupted or probed registers (pt_regs): kprobes,
// uprobes, USDT and perf events (profile, software, hardware).
bool has_registers(ProbeKind kind);

}  // namespace rbt::sema
