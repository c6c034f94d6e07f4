#pragma once
// Probe expansion: what the user wrote → the concrete probes to attach, decided on this
// machine. Resolves library and program names to paths (`uprobe:libruby:...` →
// `/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1`), expands `*` in tracepoint categories and
// events, uprobe symbols, USDT providers and names, and binaries mapped by `-p PID`. The
// compiler stays deterministic; this runs between type checking and code generation.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "manifest.h"
#include "result.h"

namespace rbt::runtime {

// Concrete probes for `probe`, each with its canonical `name`, in a stable order. USDT probes
// always carry func = "provider:probe"; uprobes on an address carry func = "" and the address
// (an ELF virtual address) in `offset`. Probes of other kinds, and probes without wildcards,
// pass through with only their target resolved. pid > 0 resolves through that process (-p):
// a file found inside its root is named as the process names it (in_process_root), so that
// names and the compiled object do not depend on the pid.
// A pattern matching nothing is an error naming the probe.
Result<std::vector<ProbeDesc>> expand_probe(const ProbeDesc &probe, pid_t pid);

// The file a uprobe or USDT probe attaches to: with ProbeDesc::in_process_root, its target
// inside process pid's root (/proc/PID/root + target), else the target as it is.
std::string probe_file(const ProbeDesc &probe, pid_t pid);

// The address of `uprobe:binary:0x4a0` (or decimal `1184`), given the probe's func field; symbols
// never start with a digit.
std::optional<uint64_t> parse_uprobe_address(const std::string &func);

// True when `text` holds a `*` wildcard.
bool has_wildcard(const std::string &text);

}  // namespace rbt::runtime
