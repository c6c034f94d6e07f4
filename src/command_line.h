#pragma once
// Parses rbt's command line into Options. Returns the exit status when the command line is
// finished without running a script (--help, --version, --list-tools, -l, a usage error),
// nothing when `opts` holds a script to run.

#include <optional>

#include "options.h"

namespace rbt {

std::optional<int> parse_command_line(int argc, char **argv, Options &opts);

}  // namespace rbt
