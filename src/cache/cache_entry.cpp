#include "cache_entry.h"

#include <sys/stat.h>

#include <cstring>

#include "byte_codec.h"
#include "manifest_codec.h"

namespace rbt::cache {

namespace {

constexpr char kMagic[8] = {'R', 'B', 'T', 'C', 'A', 'C', 'H', 'E'};
constexpr size_t kVersionBytes = 16;

uint64_t nanoseconds(const timespec &t) {
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

Error unusable(std::string why) { return make_error("", std::move(why)); }

}  // namespace

FileIdentity identify_file(const std::string &path) {
  FileIdentity id;
  id.path = path;
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return id;
  id.exists = true;
  id.dev = st.st_dev;
  id.ino = st.st_ino;
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = nanoseconds(st.st_mtim);
  id.ctime_ns = nanoseconds(st.st_ctim);
  return id;
}

FileIdentity identify_file(const std::string &path, bool in_process_root, int pid) {
  if (!in_process_root)
    return identify_file(path);
  FileIdentity id = identify_file("/proc/" + std::to_string(pid) + "/root" + path);
  id.path = path;
  id.in_process_root = true;
  return id;
}

std::string encode_entry(const Digest &key, const std::string &version, const CacheEntry &entry) {
  ByteWriter payload;
  payload.u32(static_cast<uint32_t>(entry.inputs.size()));
  for (const FileIdentity &f : entry.inputs) {
    payload.str(f.path);
    payload.u8(f.in_process_root);
    payload.u8(f.exists);
    payload.u64(f.dev);
    payload.u64(f.ino);
    payload.u64(f.size);
    payload.u64(f.mtime_ns);
    payload.u64(f.ctime_ns);
  }
  payload.u32(static_cast<uint32_t>(entry.resolutions.size()));
  for (const auto &[pattern, files] : entry.resolutions) {
    payload.str(pattern);
    payload.u32(static_cast<uint32_t>(files.size()));
    for (const std::string &f : files)
      payload.str(f);
  }
  payload.str(entry.warnings);
  payload.u32(entry.parts);
  write_manifest(payload, entry.manifest);
  payload.str(std::string_view(entry.elf.data(), entry.elf.size()));

  ByteWriter out;
  out.raw(kMagic, sizeof kMagic);
  out.u32(kFormatVersion);
  char v[kVersionBytes] = {};
  memcpy(v, version.data(), std::min(version.size(), kVersionBytes));
  out.raw(v, sizeof v);
  out.raw(key.data(), key.size());
  out.u64(payload.bytes().size());
  Digest sum = sha256(payload.bytes().data(), payload.bytes().size());
  out.raw(sum.data(), sum.size());
  out.raw(payload.bytes().data(), payload.bytes().size());
  return out.take();
}

Result<CacheEntry> decode_entry(const std::string &bytes, const Digest &key,
                                const std::string &version) {
  if (bytes.size() < kHeaderSize)
    return unusable("truncated (" + std::to_string(bytes.size()) + " bytes, shorter than its header)");
  ByteReader header(bytes.data(), kHeaderSize);
  char magic[sizeof kMagic];
  header.raw(magic, sizeof magic);
  if (memcmp(magic, kMagic, sizeof magic) != 0)
    return unusable("not an rbt cache entry (bad magic)");
  uint32_t format = header.u32();
  char v[kVersionBytes + 1] = {};
  header.raw(v, kVersionBytes);
  if (format != kFormatVersion || std::string(v) != version.substr(0, kVersionBytes))
    return unusable("written by another rbt (version " + std::string(v) + ", format " +
                    std::to_string(format) + "; this is " + version + ", format " +
                    std::to_string(kFormatVersion) + ")");
  Digest stored_key;
  header.raw(stored_key.data(), stored_key.size());
  if (stored_key != key)
    return unusable("its key is not the one it was looked up by (a foreign entry)");
  uint64_t size = header.u64();
  Digest sum;
  header.raw(sum.data(), sum.size());
  if (size != bytes.size() - kHeaderSize)
    return unusable("truncated or padded (payload of " + std::to_string(bytes.size() - kHeaderSize) +
                    " bytes, header says " + std::to_string(size) + ")");
  const char *payload = bytes.data() + kHeaderSize;
  if (sha256(payload, size) != sum)
    return unusable("checksum mismatch (corrupt)");

  ByteReader r(payload, size);
  CacheEntry entry;
  uint32_t n = r.count(46);
  for (uint32_t i = 0; i < n && !r.failed(); i++) {
    FileIdentity f;
    f.path = r.str();
    f.in_process_root = r.u8() != 0;
    f.exists = r.u8() != 0;
    f.dev = r.u64();
    f.ino = r.u64();
    f.size = r.u64();
    f.mtime_ns = r.u64();
    f.ctime_ns = r.u64();
    entry.inputs.push_back(std::move(f));
  }
  n = r.count(8);
  for (uint32_t i = 0; i < n && !r.failed(); i++) {
    std::string pattern = r.str();
    std::vector<std::string> files(r.count(4));
    for (std::string &f : files)
      f = r.str();
    entry.resolutions[pattern] = std::move(files);
  }
  entry.warnings = r.str();
  entry.parts = r.u32();
  auto manifest = read_manifest(r);
  std::string elf = r.str();
  if (!manifest || r.failed() || r.left() != 0)
    return unusable("its contents do not decode");
  entry.manifest = std::move(*manifest);
  entry.elf.assign(elf.begin(), elf.end());
  return entry;
}

}  // namespace rbt::cache
