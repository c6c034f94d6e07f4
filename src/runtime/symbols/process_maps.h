#pragma once
// A process's executable mappings (/proc/PID/maps), captured while it lives so that its user
// stacks can be symbolized after it exits.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rbt::runtime {

struct Mapping {
  uint64_t start = 0, end = 0, offset = 0;
  std::string path;  // as the process sees it; read through /proc/PID/root
};

// Executable file-backed mappings of `pid`, sorted by address; empty if it is gone.
std::vector<Mapping> read_process_maps(pid_t pid);
// Parses the text of a maps file (exposed for tests).
std::vector<Mapping> parse_process_maps(const std::string &text);

// Whether `pid` still runs rbt's own image: the -c child between fork and exec, whose maps,
// symbols and Ruby-ness are rbt's and say nothing of the program it is about to exec.
bool runs_own_image(pid_t pid);

}  // namespace rbt::runtime
