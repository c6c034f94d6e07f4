#pragma once
// A file stored inside a zip archive, named `ARCHIVE!/ENTRY` as bpftrace and Android name it:
// APKs and Python wheels keep shared libraries stored (uncompressed) in the zip, and the loader
// maps them straight from it. A uprobe on such a library goes on the zip file itself, at the
// entry's data offset plus the function's offset in the ELF, so all that is needed here is
// where the entry's bytes start; the central directory says where each entry's local header is.

#include <cstdint>
#include <optional>
#include <string>

#include "result.h"

namespace rbt::runtime {

struct ArchivePath {
  std::string archive;  // the zip file
  std::string entry;    // the name inside it, without the leading '/'
};

// `a.zip!/lib/x.so` → {a.zip, lib/x.so}; nullopt when the path has no `!/`.
std::optional<ArchivePath> split_archive_path(const std::string &path);

struct ZipEntry {
  uint64_t data_offset = 0;  // where the entry's (stored) bytes start in the archive
  uint64_t size = 0;
};

// The stored entry `entry` of the zip file `archive`. Errors: not a zip, no such entry, an
// entry that is compressed (its bytes are not in the file as they would be mapped).
Result<ZipEntry> find_zip_entry(const std::string &archive, const std::string &entry);

}  // namespace rbt::runtime
