#pragma once
// Little-endian fixed-width fields and length-prefixed strings, for cache entries. The reader
// never trusts the bytes: a field that would run past the end (a truncated or corrupt entry)
// sets failed() and yields zeros, so decoding ends in one check instead of a crash.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rbt::cache {

class ByteWriter {
public:
  void u8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { little_endian(v, 4); }
  void u64(uint64_t v) { little_endian(v, 8); }
  void str(std::string_view s);
  void raw(const void *data, size_t size);
  const std::string &bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

private:
  void little_endian(uint64_t v, size_t bytes);

  std::string bytes_;
};

class ByteReader {
public:
  ByteReader(const char *data, size_t size) : p_(data), end_(data + size) {}
  uint8_t u8();
  uint32_t u32();
  uint64_t u64();
  std::string str();
  // A count of items that each take at least `min_item_bytes`: more than the bytes left can
  // hold is corruption, caught before anything is allocated for them.
  uint32_t count(size_t min_item_bytes = 1);
  bool raw(void *out, size_t size);
  size_t left() const { return failed_ ? 0 : static_cast<size_t>(end_ - p_); }
  bool failed() const { return failed_; }
  void fail() { failed_ = true; }

private:
  bool take(size_t n);
  uint64_t little_endian(size_t bytes);

  const char *p_;
  const char *end_;
  bool failed_ = false;
};

}  // namespace rbt::cache
