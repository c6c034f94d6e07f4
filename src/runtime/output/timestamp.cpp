#include "timestamp.h"

#include <cinttypes>
#include <cstdio>
#include <ctime>

namespace rbt::output {

namespace {

int64_t clock_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The format with %f, %l and %k replaced by digits of the fraction; %% stays for strftime.
std::string expand_fraction(const std::string &format, uint64_t fraction_ns) {
  std::string out;
  char digits[16];
  for (size_t i = 0; i < format.size(); i++) {
    if (format[i] != '%' || i + 1 == format.size()) {
      out += format[i];
      continue;
    }
    char c = format[++i];
    if (c == 'f')
      snprintf(digits, sizeof(digits), "%06" PRIu64, fraction_ns / 1000);
    else if (c == 'l')
      snprintf(digits, sizeof(digits), "%03" PRIu64, fraction_ns / 1000000);
    else if (c == 'k')
      snprintf(digits, sizeof(digits), "%09" PRIu64, fraction_ns);
    if (c == 'f' || c == 'l' || c == 'k') {
      out += digits;
    } else {
      out += '%';
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string format_timestamp(const std::string &format, uint64_t nsecs) {
  // Wall time minus the clock, measured once: read at each call, the offset moved by the time
  // between the two reads, and two timestamps 123 us apart printed 122 us apart (bpftrace also
  // takes the offset once).
  static const int64_t offset = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
  int64_t wall = offset + static_cast<int64_t>(nsecs);
  if (wall <= 0)
    return "(?)";
  time_t secs = static_cast<time_t>(wall / 1000000000);
  struct tm tm;
  if (!localtime_r(&secs, &tm))
    return "(?)";
  std::string fmt = expand_fraction(format, static_cast<uint64_t>(wall % 1000000000));
  std::string text(4096, '\0');
  size_t n = strftime(text.data(), text.size(), fmt.c_str(), &tm);
  if (n == 0)
    return "(?)";
  text.resize(n);
  return text;
}

}  // namespace rbt::output
