#pragma once
// cat()'s file reading. The path comes from the traced system, so the read must never hang
// rbt: a FIFO blocked open() forever, and `cat("/dev/zero")` read for half a minute (then ran
// out of memory) before printing anything.

#include <cstddef>
#include <string>

namespace rbt::runtime {

// At most this much of a file is printed, as bpftrace also stops after a bounded read.
constexpr size_t kMaxCatBytes = 512 * 1024;

struct CatResult {
  std::string text;
  std::string error;       // strerror of a failed open or read ("" when it went well)
  bool truncated = false;  // the file has more than kMaxCatBytes
  bool opened = false;     // false: the error is open()'s (or the path is a directory)
};

// Opens without blocking (a FIFO with no writer is empty, not a hang), refuses a directory,
// and reads what is there now, up to `limit` bytes (kMaxCatBytes, or config max_cat_bytes).
CatResult cat_file(const std::string &path, size_t limit = kMaxCatBytes);

}  // namespace rbt::runtime
