#pragma once
// Which of a probe's expansions share one BPF program attached by one uprobe_multi link
// (Linux 6.6+, BPF_TRACE_UPROBE_MULTI): a wildcard uprobe or uretprobe (`uprobe:bin:f*`) that
// matched several functions of one binary. One program and one link instead of one each, as
// bpftrace attaches them; `probe` and `func` then come from the attach cookie
// (Lowering::per_attach_string). The runtime makes the link (runtime/attach/uprobe_multi.cpp).

#include <vector>

#include "manifest.h"

namespace rbt::codegen {

// At most this many functions per program: `probe`/`func` are a switch over the cookie, whose
// code grows with the group (a libc wildcard matches thousands).
constexpr size_t kUprobeMultiMaxGroup = 64;

// The expansions of one probe, in order, split into runs that may share a program: runs of
// two or more uprobes (or uretprobes) of the same binary; every other desc alone.
std::vector<std::vector<ProbeDesc>> uprobe_groups(const std::vector<ProbeDesc> &descs,
                                                  bool kernel_has_uprobe_multi);

}  // namespace rbt::codegen
