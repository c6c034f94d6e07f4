#pragma once
// The compiled-object cache as the driver uses it: look up the object for this run's inputs
// before compiling, store it after. A cache problem never stops rbt: an unusable entry is
// reported (a warning) and compiled again, an unsafe or unwritable directory turns the cache
// off for the run. Location: RBT_CACHE_DIR, else /var/cache/rbt; size: RBT_CACHE_SIZE_MIB
// (default 64) before the least recently used entries go.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cache_dir.h"
#include "cache_entry.h"
#include "options.h"

namespace rbt::cache {

constexpr const char *kDefaultDir = "/var/cache/rbt";
constexpr uint64_t kDefaultSizeMiB = 64;

class ObjectCache {
public:
  // The cache for `options`; off with --no-cache, for the dumps that show the compile's own
  // stages, without root, or when the directory is unsafe (warned when `report`).
  static ObjectCache open(const Options &options, bool report = true);

  bool enabled() const { return dir_.has_value(); }
  // The entry an earlier run stored for these inputs, if it is whole, this build's and every
  // binary it depends on is unchanged (with -p, seen through that process's root). With -p,
  // each probe's binary must resolve through the process as the entry recorded:
  // `resolves(pattern)` says what it resolves to now (runtime::resolution_in_process; the
  // cache links no runtime). `why_not` says what happened otherwise (for -v); an
  // unusable entry is warned about when `report`.
  using Resolver = std::function<std::vector<std::string>(const std::string &pattern)>;
  std::optional<CacheEntry> lookup(std::string &why_not, bool report = true,
                                   const Resolver &resolves = {}) const;
  // Says that `entry` is used: the compile's warnings again, and with -v where it came from.
  void announce(const CacheEntry &entry, bool verbose) const;
  void store(const CacheEntry &entry) const;
  std::string entry_path() const;
  // The path of side entry `name` (runtime/core_btf.h's minimal kernel BTF), written from
  // `make`'s bytes when absent; "" when the cache is off, or `make` gives nothing.
  std::string side_file(const std::string &name, const std::function<std::string()> &make) const;

private:
  std::optional<CacheDir> dir_;
  Digest key_{};
  std::string name_;
  uint64_t max_bytes_ = kDefaultSizeMiB << 20;
  int pid_ = -1;  // -p
};

}  // namespace rbt::cache
