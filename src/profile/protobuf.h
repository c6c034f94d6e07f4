#pragma once
// Just enough of the protobuf wire format to write a message by hand: varints, and
// length-delimited fields (strings, packed repeated numbers, nested messages). pprof's
// profile.proto is small and stable, so rbt needs no protobuf library or generated code.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rbt::profile {

class ProtoWriter {
public:
  // Field `field` as a varint (int64/uint64/bool; negative int64 as ten bytes, as protobuf
  // does). Zero is skipped: proto3 leaves default values out.
  void varint_field(uint32_t field, uint64_t value);
  void int_field(uint32_t field, int64_t value) {
    varint_field(field, static_cast<uint64_t>(value));
  }
  // A length-delimited field: a string, or a message already encoded.
  void bytes_field(uint32_t field, std::string_view bytes);
  // A packed repeated varint field (empty: nothing written).
  void packed_field(uint32_t field, const std::vector<uint64_t> &values);

  const std::string &bytes() const { return out_; }
  std::string take() { return std::move(out_); }

private:
  void varint(uint64_t value);
  std::string out_;
};


}  // namespace rbt::profile
