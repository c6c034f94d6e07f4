#include "tseries.h"

#include <algorithm>
#include <ctime>

#include "json.h"

namespace rbt::output {

using runtime::MapEntry;
using runtime::MapSnapshot;

std::vector<std::vector<TSeriesPoint>> tseries_points(const MapSnapshot &snap) {
  const Type &t = snap.desc->value;
  // The window: the last `intervals` epochs up to the latest written. Unsigned, as bpftrace's:
  // when the latest epoch is below `intervals` (zero() leaves epoch 0) the window is empty.
  uint64_t last = 0;
  for (const MapEntry &e : snap.entries)
    if (e.value.size() >= 16)
      last = std::max(last, e.u64(e.value.size() / 8 - 2));
  uint64_t first = last - t.tseries_intervals + 1;
  std::vector<std::vector<TSeriesPoint>> out;
  for (const MapEntry &e : snap.entries) {
    std::vector<TSeriesPoint> points;
    uint64_t from = last;  // the key's first epoch in the window
    size_t pairs = e.value.size() / 16;
    for (size_t i = 0; i < pairs; i++)
      if (e.u64(2 * i) >= first)
        from = std::min(from, e.u64(2 * i));
    if (first <= last) {
      size_t i = 0;
      for (uint64_t epoch = std::max(first, from);; epoch++) {
        while (i < pairs && e.u64(2 * i) < epoch)
          i++;
        TSeriesPoint p{epoch * t.tseries_interval_ns, std::nullopt};
        if (i < pairs && e.u64(2 * i) == epoch)
          p.value = e.u64(2 * i + 1);
        points.push_back(p);
        if (epoch == last)
          break;
      }
    }
    out.push_back(std::move(points));
  }
  return out;
}

namespace {

using Wide = __int128;  // holds every int64 and uint64 value

Wide as_number(const Type &t, uint64_t v) {
  return t.is_signed ? Wide(static_cast<int64_t>(v)) : Wide(v);
}

std::string decimal(Wide v) {
  if (v < 0)
    return std::to_string(static_cast<int64_t>(v));
  return std::to_string(static_cast<uint64_t>(v));
}

std::string pad_right(std::string s, size_t width) {
  if (s.size() < width)
    s.append(width - s.size(), ' ');
  return s;
}

std::string pad_left(const std::string &s, size_t width) {
  return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
}

// How finely the times print: whole seconds, or with 3, 6 or 9 decimals.
struct TimeUnit {
  const char *suffix;  // after "hh:mm:ss"
  int digits;
};

TimeUnit time_unit(uint64_t interval_ns) {
  if (interval_ns >= 1000000000ull)
    return {"", 0};
  if (interval_ns >= 1000000ull)
    return {".ms", 3};
  if (interval_ns >= 1000ull)
    return {".\u03bcs", 6};
  return {".ns", 9};
}

// "10:41:46.700": local time, as bpftrace prints the graph's rows.
std::string local_time(uint64_t ns, int digits) {
  time_t secs = static_cast<time_t>(ns / 1000000000ull);
  struct tm tm;
  localtime_r(&secs, &tm);
  char buf[64];
  strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  std::string s = buf;
  if (digits) {
    uint64_t frac = ns % 1000000000ull;
    for (int i = digits; i < 9; i++)
      frac /= 10;
    std::string f = std::to_string(frac);
    s += "." + std::string(digits - f.size(), '0') + f;
  }
  return s;
}

}  // namespace

std::string format_tseries(const Type &t, const std::vector<TSeriesPoint> &points) {
  if (points.empty())
    return "<no data>";
  constexpr int kWidth = 53;    // the graph's columns, its borders included
  constexpr size_t kLabel = 21;  // the min label's width under/over the graph
  bool any = false;
  Wide min = 0, max = 0;
  for (const TSeriesPoint &p : points) {
    if (!p.value)
      continue;
    Wide v = as_number(t, *p.value);
    min = any ? std::min(min, v) : v;
    max = any ? std::max(max, v) : v;
    any = true;
  }
  if (min == max) {  // room on both sides of a flat line, within the type's range
    // A flat line at 0 sits on the left edge (0 to 1), as bpftrace draws it.
    if (min != 0 && min > (t.is_signed ? Wide(INT64_MIN) : Wide(0)))
      min--;
    if (max < (t.is_signed ? Wide(INT64_MAX) : Wide(UINT64_MAX)))
      max++;
  }
  uint64_t interval = points.size() > 1
                          ? (points.back().start_ns - points.front().start_ns) / (points.size() - 1)
                          : 0;
  TimeUnit unit = time_unit(interval);
  std::string time_format = std::string("hh:mm:ss") + unit.suffix;
  size_t time_width = 8 + (unit.digits ? 1 + unit.digits : 0);
  std::string bounds = pad_right(decimal(min), kLabel) + pad_left(decimal(max), kWidth - kLabel);
  std::string out = std::string(time_width + 1, ' ') + bounds + "\n";
  out += pad_right(time_format, time_width + 1) + "|" + std::string(kWidth - 2, '_') + "|\n";
  int zero = 0;  // the column of 0 when the range spans it
  if (min < 0 && max > 0)
    zero = static_cast<int>(static_cast<float>(kWidth) * static_cast<float>(min) /
                            static_cast<float>(min - max));
  for (const TSeriesPoint &p : points) {
    std::string row(kWidth, ' ');
    row[0] = row[kWidth - 1] = '|';
    if (zero > 0)
      row[zero] = '.';
    out += local_time(p.start_ns, unit.digits) + " ";
    if (!p.value) {
      out += row + " -\n";
      continue;
    }
    Wide v = as_number(t, *p.value);
    int column = kWidth / 2;
    if (min != max)
      column = static_cast<int>(static_cast<float>(kWidth - 1) * static_cast<float>(min - v) /
                                static_cast<float>(min - max));
    row[std::clamp(column, 0, kWidth - 1)] = '*';
    out += row + " " + decimal(v) + "\n";
  }
  std::string bottom(kWidth, '_');
  bottom[0] = bottom[kWidth - 1] = 'v';
  out += std::string(time_width + 1, ' ') + bottom + "\n";
  out += std::string(time_width + 1, ' ') + bounds + "\n";
  return out;
}

std::string json_tseries(const Type &t, const std::vector<TSeriesPoint> &points) {
  std::string out = "[";
  for (const TSeriesPoint &p : points) {
    if (!p.value)
      continue;
    // UTC with nanoseconds, as bpftrace writes a time point in JSON.
    time_t secs = static_cast<time_t>(p.start_ns / 1000000000ull);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char buf[64];
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    std::string ns = std::to_string(p.start_ns % 1000000000ull);
    std::string start = std::string(buf) + "." + std::string(9 - ns.size(), '0') + ns;
    out += (out.size() > 1 ? ",{" : "{") + std::string("\"interval_start\":") +
           json_string(start) + ",\"value\":" + json_number(decimal(as_number(t, *p.value))) + "}";
  }
  return out + "]";
}

}  // namespace rbt::output
