#pragma once
// The words after a script: its positional parameters ($1..$N) and, after `--`, its named
// parameters (--name=value, --flag) that getopt() reads.

#include <optional>
#include <string>
#include <vector>

#include "options.h"

namespace rbt {

// Adds `words` to opts.args and opts.named_args; an error message for a malformed --name.
// getopt_long has already removed the options and the `--`, so a word starting with "--" here
// came after `--`.
std::optional<std::string> add_script_args(const std::vector<std::string> &words, Options &opts);

}  // namespace rbt
