#pragma once
// The integer macros of the system headers a script #includes (AF_INET, O_CREAT), read with
// the system's C preprocessor (`cpp -dM`), as bpftrace gets them from clang.

#include <string>
#include <vector>

#include "preprocess.h"

namespace rbt {

// Headers that do not exist on this machine (kernel-internal ones without kernel sources) are
// skipped: their types come from BTF, and a macro they would define stays an unknown name.
HeaderMacros read_header_macros(const std::vector<std::string> &headers);

}  // namespace rbt
