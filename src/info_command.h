#pragma once
// `rbt --info`: rbt's build and what this machine offers the probe kinds, as bpftrace's --info
// lists its build and the kernel's features.

#include <cstdio>

namespace rbt {

// Prints the report to `out`; returns the exit status (0).
int print_info(std::FILE *out);

}  // namespace rbt
