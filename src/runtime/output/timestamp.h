#pragma once
// The text of strftime(format, nsecs) values, which the BPF side records as bare nanoseconds.

#include <cstdint>
#include <string>

namespace rbt::output {

// `nsecs` on the clock of the nsecs builtin (CLOCK_MONOTONIC) as local wall time, formatted by
// strftime(3) with bpftrace's extensions for the fraction of the second: %f microseconds
// (6 digits), %l milliseconds (3), %k nanoseconds (9). "(?)" when nothing can be formatted,
// as bpftrace prints.
std::string format_timestamp(const std::string &format, uint64_t nsecs);

}  // namespace rbt::output
