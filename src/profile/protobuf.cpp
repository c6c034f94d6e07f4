#include "protobuf.h"

#include <zlib.h>

namespace rbt::profile {

void ProtoWriter::varint(uint64_t value) {
  while (value >= 0x80) {
    out_ += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out_ += static_cast<char>(value);
}

void ProtoWriter::varint_field(uint32_t field, uint64_t value) {
  if (value == 0)
    return;
  varint(static_cast<uint64_t>(field) << 3 | 0);
  varint(value);
}

void ProtoWriter::bytes_field(uint32_t field, std::string_view bytes) {
  varint(static_cast<uint64_t>(field) << 3 | 2);
  varint(bytes.size());
  out_.append(bytes);
}

void ProtoWriter::packed_field(uint32_t field, const std::vector<uint64_t> &values) {
  if (values.empty())
    return;
  ProtoWriter packed;
  for (uint64_t v : values)
    packed.varint(v);
  bytes_field(field, packed.out_);
}

std::string gzip(std::string_view data) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header (zlib writes mtime 0 and no name) instead of zlib's.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return {};
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return rc == Z_STREAM_END ? out : std::string();
}

}  // namespace rbt::profile
