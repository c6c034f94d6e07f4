#pragma once
// Opening a file that a traced process may control (its binary through /proc/PID/root, its
// libraries) without letting it hang rbt: a FIFO bind-mounted over a running binary blocked
// symbolization in open() forever, and with it all output and Ctrl-C.

#include <string>

namespace rbt::runtime {

// A read-only, close-on-exec descriptor of `path` if it is a regular file, else -1 with errno
// set (EINVAL for a FIFO, device or socket; EISDIR for a directory). The open never
// waits for a writer (O_NONBLOCK) and never takes a controlling terminal.
int open_regular_file(const std::string &path);

}  // namespace rbt::runtime
