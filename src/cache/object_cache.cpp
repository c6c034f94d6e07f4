#include "object_cache.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "cache_key.h"
#include "warnings.h"

namespace rbt::cache {

namespace {

void warn(const std::string &message) {
  if (!warnings_suppressed)
    fprintf(stderr, "rbt: warning: %s\n", message.c_str());
}

void warn(const Error &e) {
  warn(e.what + (e.what.empty() ? "" : ": ") + e.why);
  if (!e.hint.empty())
    fprintf(stderr, "hint: %s\n", e.hint.c_str());
}

}  // namespace

ObjectCache ObjectCache::open(const Options &options, bool report) {
  ObjectCache cache;
  // The dumps print the compiler's stages, so they need a compile.
  for (const char *stage : {"ast", "types", "ir", "ir-opt", "asm"})
    if (options.wants_dump(stage))
      return cache;
  // Only root's cache is trusted, and only root can write it: with capabilities alone rbt
  // compiles every time.
  if (options.no_cache || geteuid() != 0)
    return cache;
  const char *env_dir = getenv("RBT_CACHE_DIR");
  std::string path = env_dir && *env_dir ? env_dir : kDefaultDir;
  if (const char *env_size = getenv("RBT_CACHE_SIZE_MIB"); env_size && *env_size) {
    char *end = nullptr;
    unsigned long long mib = strtoull(env_size, &end, 10);
    if (*end != '\0' || mib > (1ull << 20)) {
      if (report)
        warn("RBT_CACHE_SIZE_MIB: '" + std::string(env_size) +
           "' is not a size in MiB; the object cache stays off");
      return cache;
    }
    cache.max_bytes_ = mib << 20;
  }
  auto key = key_text(options);
  if (!key)
    return cache;  // the compile reports what is wrong (a pid that is gone)
  auto dir = CacheDir::open(path);
  if (!dir) {
    if (report)
      warn(dir.error());
    return cache;
  }
  cache.pid_ = options.pid;
  cache.key_ = sha256(key->data(), key->size());
  cache.name_ = hex(cache.key_) + kEntrySuffix;
  cache.dir_.emplace(std::move(*dir));
  return cache;
}

std::string ObjectCache::side_file(const std::string &name,
                                   const std::function<std::string()> &make) const {
  if (!dir_)
    return {};
  auto bytes = dir_->read(name);
  if (bytes && *bytes && !(*bytes)->empty())
    return dir_->path() + "/" + name;
  std::string made = make();
  if (made.empty() || !dir_->write(name, made))
    return {};
  return dir_->path() + "/" + name;
}

std::string ObjectCache::entry_path() const {
  return dir_ ? dir_->path() + "/" + name_ : std::string();
}

std::optional<CacheEntry> ObjectCache::lookup(std::string &why_not, bool report,
                                              const Resolver &resolves) const {
  if (!dir_)
    return std::nullopt;
  auto bytes = dir_->read(name_);
  if (!bytes || !*bytes) {
    if (!bytes && report)
      warn("ignoring cache entry " + entry_path() + ": " + bytes.error().why);
    why_not = bytes ? "no entry" : "unusable entry";
    return std::nullopt;
  }
  auto entry = decode_entry(**bytes, key_, RBT_VERSION);
  if (!entry) {
    if (report)
      warn("ignoring cache entry " + entry_path() + ": " + entry.error().why);
    why_not = "unusable entry";
    return std::nullopt;
  }
  for (const FileIdentity &input : entry->inputs)
    if (FileIdentity now = identify_file(input.path, input.in_process_root, pid_); now != input) {
      bool other = now.exists && (now.dev != input.dev || now.ino != input.ino);
      why_not = input.path +
                (input.in_process_root ? " in process " + std::to_string(pid_) : std::string()) +
                (input.in_process_root && other ? " is another file" : " changed");
      return std::nullopt;
    }
  if (!entry->resolutions.empty() && !resolves) {
    why_not = "no way to resolve the probes' binaries";
    return std::nullopt;
  }
  for (const auto &[pattern, files] : entry->resolutions)
    if (resolves(pattern) != files) {
      why_not = pattern + " resolves to other files in process " + std::to_string(pid_);
      return std::nullopt;
    }
  dir_->touch(name_);
  return std::move(*entry);
}

void ObjectCache::announce(const CacheEntry &entry, bool verbose) const {
  if (!warnings_suppressed)
    fputs(entry.warnings.c_str(), stderr);
  if (verbose)
    fprintf(stderr, "Loaded %zu programs from cache %s\n", entry.manifest.probes.size(),
            entry_path().c_str());
}

void ObjectCache::store(const CacheEntry &entry) const {
  if (!dir_)
    return;
  std::string bytes = encode_entry(key_, RBT_VERSION, entry);
  if (bytes.size() > max_bytes_)
    return;
  if (auto s = dir_->write(name_, bytes); !s) {
    warn(s.error());
    return;
  }
  dir_->evict(max_bytes_, name_);
}

}  // namespace rbt::cache
