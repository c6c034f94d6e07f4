// The stdlib tools run by name (`rbt rubyprofile -p PID`): where they are installed, their
// one-line purposes for --list-tools, and the default arguments a tool declares.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace rbt {

// Directories searched for NAME.rbt, first match wins: $RBT_TOOLS_DIR, the build tree
// (<dir of rbt>/share/rbt/stdlib) and the install prefix (<dir of rbt>/../share/rbt/stdlib).
std::vector<std::string> tool_dirs();

// The path of tool NAME, if one is installed.
std::optional<std::string> find_tool(const std::string &name);

// Installed tool names close to NAME (typos, a missing "ruby" prefix), best first.
std::vector<std::string> close_tool_names(const std::string &name);

// Prints each tool's name and purpose (the first line of its header comment); returns how
// many it found.
int list_tools(FILE *out);

// A tool's default arguments, from its header line `// defaults: A B ...`: the values of
// $1, $2, ... when the command line gives fewer.
std::vector<std::string> tool_defaults(const std::string &script_text);

// Whether a tool's header says `// needs: -p PID or -c COMMAND`: tools that set USDT
// semaphores (which slow every process they reach) attach to one process only.
bool tool_needs_target(const std::string &script_text);

// The positional a tool's header names as a syscall (`// syscall: $1`): 1 for $1, 0 if none.
// rbt replaces a name given there by its number (syscall_number).
size_t tool_syscall_argument(const std::string &script_text);

// The number of syscall NAME on this architecture (from asm/unistd_64.h at build time).
std::optional<long> syscall_number(const std::string &name);

}  // namespace rbt
