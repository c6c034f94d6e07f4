#pragma once
// `rbt -l [pattern]`: what can be probed here, one probe name per line, as bpftrace prints it.
// With `verbose` (-lv), tracepoints show their fields and USDT probes their argument count and
// semaphore.

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <vector>

#include "result.h"

namespace rbt::runtime {

// Lists the probes whose full names match the fnmatch(3) `pattern` (all built-in ones when it
// is empty). uprobe/usdt patterns name a binary or library (`uprobe:/bin/bash:*`,
// `usdt:libruby:*`); with pid > 0, `uprobe:*`/`usdt:*` cover every file the process maps.
// Several comma-separated patterns list one after the other; `struct NAME` lists a kernel
// struct's definition (list_kernel_struct).
Status list_probes(const std::string &pattern, pid_t pid, bool verbose, std::FILE *out);

// `struct task_struct`: its definition from the kernel's BTF, as bpftrace prints it:
// "vmlinux: struct task_struct {", a member a line, "};". (listing_struct.cpp)
Status list_kernel_struct(const std::string &name, std::FILE *out);

// `-lv rawtracepoint:EVENT`: the event's arguments as the kernel's BTF declares them
// (__bpf_trace_EVENT), "struct task_struct *prev" each, without the leading `void *__data`;
// none when the kernel's BTF does not have it. (listing_struct.cpp)
std::vector<std::string> raw_tracepoint_args(const std::string &event);

}  // namespace rbt::runtime
