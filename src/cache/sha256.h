#pragma once
// SHA-256 (FIPS 180-4), for the object cache: the key that names an entry and the checksum of
// its payload. Small and dependency-free so that a cache hit needs no crypto library.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rbt::cache {

using Digest = std::array<uint8_t, 32>;

class Sha256 {
public:
  Sha256();
  void update(const void *data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  Digest finish();

private:
  void block(const uint8_t *p);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

Digest sha256(const void *data, size_t size);
std::string hex(const Digest &digest);

}  // namespace rbt::cache
