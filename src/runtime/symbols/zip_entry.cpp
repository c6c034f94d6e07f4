#include "zip_entry.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "regular_file.h"

namespace rbt::runtime {

namespace {

// Record signatures and fixed sizes from the zip specification (APPNOTE.TXT, 4.3).
constexpr uint32_t kEndOfCentralDir = 0x06054b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr size_t kEndSize = 22, kCentralSize = 46, kLocalSize = 30;
constexpr size_t kMaxComment = 0xffff;  // the end record sits at most this far before the end
constexpr uint16_t kStored = 0;

uint16_t le16(const unsigned char *p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t le32(const unsigned char *p) {
  return static_cast<uint32_t>(le16(p)) | static_cast<uint32_t>(le16(p + 2)) << 16;
}

std::string method_name(uint16_t method) {
  switch (method) {
  case 8: return "deflate";
  case 9: return "deflate64";
  case 12: return "bzip2";
  case 14: return "lzma";
  case 93: return "zstd";
  default: return "method " + std::to_string(method);
  }
}

class Reader {
public:
  explicit Reader(int fd) : fd_(fd) {}
  ~Reader() { close(fd_); }
  bool read(uint64_t offset, size_t n, std::vector<unsigned char> &out) const {
    out.resize(n);
    return pread(fd_, out.data(), n, static_cast<off_t>(offset)) == static_cast<ssize_t>(n);
  }

private:
  int fd_;
};

}  // namespace

std::optional<ArchivePath> split_archive_path(const std::string &path) {
  size_t bang = path.find("!/");
  if (bang == std::string::npos || bang == 0)
    return std::nullopt;
  return ArchivePath{path.substr(0, bang), path.substr(bang + 2)};
}

Result<ZipEntry> find_zip_entry(const std::string &archive, const std::string &entry) {
  const std::string what = "reading " + archive;
  int fd = open_regular_file(archive);
  if (fd < 0) {
    int err = errno;
    return make_error(what, strerror(err), {}, err);
  }
  Reader file(fd);
  struct stat st;
  if (fstat(fd, &st) != 0)
    return make_error(what, strerror(errno));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  auto not_zip = [&](const std::string &why) {
    return make_error(what, "not a zip archive (" + why + ")",
                      "`FILE!/ENTRY` names an entry inside a zip archive");
  };

  // The end record is last but for a comment of up to 64 KiB: search backwards for it.
  if (size < kEndSize)
    return not_zip("too short");
  const uint64_t tail_size = std::min<uint64_t>(size, kEndSize + kMaxComment);
  std::vector<unsigned char> tail;
  if (!file.read(size - tail_size, tail_size, tail))
    return make_error(what, strerror(errno ? errno : EIO));
  std::optional<size_t> end;
  for (size_t i = tail_size - kEndSize + 1; i-- > 0;)
    if (le32(&tail[i]) == kEndOfCentralDir && i + kEndSize + le16(&tail[i + 20]) == tail_size) {
      end = i;
      break;
    }
  if (!end)
    return not_zip("no end of central directory record");
  const unsigned char *e = &tail[*end];
  uint16_t count = le16(e + 10);
  uint32_t dir_size = le32(e + 12), dir_offset = le32(e + 16);
  if (count == 0xffff || dir_size == 0xffffffff || dir_offset == 0xffffffff)
    return make_error(what, "zip64 archives are not supported");
  if (uint64_t{dir_offset} + dir_size > size)
    return not_zip("central directory past the end of the file");

  std::vector<unsigned char> dir;
  if (!file.read(dir_offset, dir_size, dir))
    return make_error(what, strerror(errno ? errno : EIO));
  size_t pos = 0;
  for (uint16_t i = 0; i < count; i++) {
    if (pos + kCentralSize > dir.size() || le32(&dir[pos]) != kCentralHeader)
      return not_zip("damaged central directory");
    const unsigned char *h = &dir[pos];
    uint16_t method = le16(h + 10);
    uint32_t compressed = le32(h + 20), uncompressed = le32(h + 24);
    size_t name_len = le16(h + 28), extra_len = le16(h + 30), comment_len = le16(h + 32);
    uint32_t local = le32(h + 42);
    if (pos + kCentralSize + name_len > dir.size())
      return not_zip("damaged central directory");
    std::string name(reinterpret_cast<const char *>(h + kCentralSize), name_len);
    pos += kCentralSize + name_len + extra_len + comment_len;
    if (name != entry)
      continue;
    if (method != kStored)
      return make_error(what, "entry '" + entry + "' is compressed (" + method_name(method) + ")",
                        "a uprobe needs the entry stored uncompressed, as `zip -0` stores it");
    if (compressed == 0xffffffff || local == 0xffffffff)
      return make_error(what, "zip64 archives are not supported");
    // The data follows the local header, whose name and extra field may differ in length
    // from the central directory's copy.
    std::vector<unsigned char> lh;
    if (!file.read(local, kLocalSize, lh) || le32(lh.data()) != kLocalHeader)
      return not_zip("damaged local header of '" + entry + "'");
    uint64_t data = uint64_t{local} + kLocalSize + le16(&lh[26]) + le16(&lh[28]);
    if (data + uncompressed > size)
      return not_zip("entry '" + entry + "' runs past the end of the file");
    return ZipEntry{data, uncompressed};
  }
  return make_error(what, "no entry '" + entry + "' in the archive",
                    "list the archive's entries with: python3 -m zipfile -l " + archive, ENOENT);
}

}  // namespace rbt::runtime
