#pragma once
// gzip for the profile files that are compressed (Firefox, and pprof's .pb.gz): whole buffers
// in memory, with a fixed header (no name, no time), so equal input gives equal bytes.

#include <optional>
#include <string>
#include <string_view>

namespace rbt::profile {

std::string gzip_compress(std::string_view data);
// The decompressed bytes, or nullopt when `data` is not a valid gzip stream.
std::optional<std::string> gzip_decompress(std::string_view data);

}  // namespace rbt::profile
