#pragma once
// A binary's unwind table: its .eh_frame CFI compiled into compact rows (pc → how to find the
// caller's CFA, return address and rbp), the form a BPF walker can binary-search. Built once
// per file with libdw's CFI reader; the rows are described in stdlib/bpf/native_unwind.h.

#include <cstdint>
#include <string>
#include <vector>

#include "native_unwind.h"
#include "result.h"

namespace rbt::runtime {

struct UnwindTable {
  // Sorted by pc; each row holds from its pc up to the next row's. Gaps between the CFI's
  // ranges are RBT_UNWIND_STOP rows, and the last row is one (past the last covered pc).
  std::vector<rbt_unwind_row> rows;

  // The row covering `vaddr` (as linked), or null below the first row.
  const rbt_unwind_row *find(uint64_t vaddr) const;

  // The bucket index BPF looks in before searching rows (native_unwind.h,
  // RBT_UNWIND_BUCKET_SHIFT): bucket i covers the code from (base + i) << shift, and holds the
  // index of the row covering its first byte (0 when no row does). Buckets run from the first
  // row's to the last row's.
  struct Buckets {
    uint32_t base = 0;
    std::vector<uint32_t> first_row;
  };
  Buckets buckets() const;
};

// Reads `path`'s .eh_frame (through .eh_frame_hdr's table of FDEs). Fails for a file without
// them, or with code above 4 GiB.
Result<UnwindTable> build_unwind_table(const std::string &path);

// The start of every function the file's CFI describes (its FDEs), sorted: where functions
// begin in a stripped binary, whose static functions have no symbol. Empty when unreadable.
std::vector<uint64_t> cfi_function_starts(const std::string &path);

// "rsp+8 rbp=c-16" style text of a row, for tests and -d output (readelf's frames-interp
// spelling: c-16 = CFA-16, u = unchanged).
std::string describe_row(const rbt_unwind_row &row);

}  // namespace rbt::runtime
