#include "gzip.h"

#include <zlib.h>

namespace rbt::profile {

std::string gzip_compress(std::string_view data) {
  z_stream zs{};
  // 15 + 16: a gzip wrapper; zlib writes mtime 0 and no name, so output is deterministic.
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, data.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef *>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::optional<std::string> gzip_decompress(std::string_view data) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK)
    return std::nullopt;
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[1 << 16];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef *>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return std::nullopt;
    }
    out.append(buf, sizeof(buf) - zs.avail_out);
  } while (rc != Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

}  // namespace rbt::profile
