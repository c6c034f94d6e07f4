#include "protobuf.h"


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

}  // namespace rbt::profile
