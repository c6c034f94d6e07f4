#include "byte_codec.h"

#include <cstring>

namespace rbt::cache {

void ByteWriter::little_endian(uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; i++)
    u8(uint8_t(v >> (8 * i)));
}

void ByteWriter::str(std::string_view s) {
  u32(static_cast<uint32_t>(s.size()));
  bytes_.append(s.data(), s.size());
}

void ByteWriter::raw(const void *data, size_t size) {
  bytes_.append(static_cast<const char *>(data), size);
}

bool ByteReader::take(size_t n) {
  if (failed_ || static_cast<size_t>(end_ - p_) < n) {
    failed_ = true;
    return false;
  }
  return true;
}

uint8_t ByteReader::u8() {
  if (!take(1))
    return 0;
  return static_cast<uint8_t>(*p_++);
}

uint64_t ByteReader::little_endian(size_t bytes) {
  uint64_t v = 0;
  if (!take(bytes))
    return 0;
  for (size_t i = 0; i < bytes; i++)
    v |= uint64_t(static_cast<uint8_t>(p_[i])) << (8 * i);
  p_ += bytes;
  return v;
}

uint32_t ByteReader::u32() { return static_cast<uint32_t>(little_endian(4)); }

uint64_t ByteReader::u64() { return little_endian(8); }

std::string ByteReader::str() {
  uint32_t n = u32();
  if (!take(n))
    return {};
  std::string s(p_, n);
  p_ += n;
  return s;
}

uint32_t ByteReader::count(size_t min_item_bytes) {
  uint32_t n = u32();
  if (!failed_ && static_cast<size_t>(end_ - p_) / (min_item_bytes ? min_item_bytes : 1) < n) {
    failed_ = true;
    return 0;
  }
  return n;
}

bool ByteReader::raw(void *out, size_t size) {
  if (!take(size))
    return false;
  memcpy(out, p_, size);
  p_ += size;
  return true;
}

}  // namespace rbt::cache
