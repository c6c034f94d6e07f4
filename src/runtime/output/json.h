#pragma once
// NDJSON output (-f json): one object a line, {"type": T, "data": D}, as language.md describes.
// The formatting functions return text without touching a FILE, so unit tests call them
// directly; JsonWriter only adds the newline and the file.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "maps.h"
#include "writer.h"

namespace rbt::output {

// `s` as a JSON string literal, quotes included. Control characters are escaped; bytes that
// are not valid UTF-8 become \u00XX (read as Latin-1), so every line stays valid JSON.
std::string json_string(std::string_view s);

// A decimal integer as a JSON number, or as a string when a double cannot hold it exactly.
std::string json_number(const std::string &decimal);

// A value laid out as `type`: integers as numbers, booleans, strings, tuples and arrays as
// arrays, stacks as arrays of frames, buffers as arrays of byte values, and symbols,
// timestamps and addresses as their text.
std::string json_value(const Type &type, const uint8_t *bytes);

// The object key of a map entry: the key's text, tuple elements joined by "," and spaces
// removed (bpftrace's keys).
std::string json_key(const Type &key, const uint8_t *bytes);

// Histogram buckets from the first to the last non-empty one:
// [{"min": a, "max": b, "count": n}, ...], closed intervals; the underflow bucket has no
// "min", the overflow bucket no "max". A hist's counts are divided by `div`.
std::string json_buckets(const Type &type, const std::vector<uint64_t> &buckets,
                         uint64_t div = 1);

// One map as a whole line's object, {"type": "map"|"hist"|"stats", "data": {"@m": ...}}, with
// entries sorted, cut to `top` and divided by `div` as in text. Empty when the map is.
std::string json_map(runtime::MapSnapshot &snapshot, uint64_t top = 0, uint64_t div = 1);

// {"type": "<type>", "data": <data>} where `data` is already JSON.
std::string json_object(std::string_view type, std::string_view data);

class JsonWriter : public Writer {
public:
  JsonWriter(std::FILE *out, bool quiet) : Writer(out), quiet_(quiet) {}
  void attached_probes(size_t count) override;
  void message(MessageKind kind, const std::string &text) override;
  void value(const Type &type, const uint8_t *bytes) override;
  void map(runtime::MapSnapshot &snapshot, uint64_t top, uint64_t div) override;
  void exit_maps_begin() override {}
  void benchmark_result(const std::vector<std::string> &names, size_t index, uint64_t average_ns,
                        uint64_t iters) override;
  void helper_error(const HelperError &e) override;
  void lost_events(uint64_t count) override;
  void map_updates_dropped(const std::string &map, uint64_t count, uint64_t max_keys) override;

private:
  void line(const std::string &object);
  bool quiet_;
};

}  // namespace rbt::output
