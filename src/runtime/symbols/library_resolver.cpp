#include "library_resolver.h"

#include <dirent.h>
#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "elf_file.h"
#include "zip_entry.h"

namespace rbt::runtime {

namespace {

// glibc's cache layout (sysdeps/generic/dl-cache.h), as facts: a 48-byte header, then
// 24-byte entries whose key/value are offsets of NUL-terminated strings from the header.
constexpr char kNewMagic[] = "glibc-ld.so.cache1.1";
constexpr char kOldMagic[] = "ld.so-1.7.0";
constexpr size_t kNewHeaderSize = 48, kNewEntrySize = 24, kOldEntrySize = 12;
constexpr uint32_t kTypeMask = 0x00ff, kElfLibc6 = 0x0003, kArchMask = 0xff00;
#if defined(__x86_64__)
constexpr uint32_t kNativeArch = 0x0300;  // FLAG_X8664_LIB64
#elif defined(__aarch64__)
constexpr uint32_t kNativeArch = 0x0a00;  // FLAG_AARCH64_LIB64
#else
constexpr uint32_t kNativeArch = 0x0000;
#endif

// Where the dynamic loader looks when the cache does not know a library.
const char *const kDefaultLibDirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                       "/lib", "/usr/lib"};

uint32_t u32_at(const std::string &b, size_t off) {
  uint32_t v;
  memcpy(&v, b.data() + off, 4);
  return v;
}

std::string string_at(const std::string &b, size_t base, uint32_t off) {
  size_t start = base + off;
  if (start >= b.size())
    return {};
  size_t end = b.find('\0', start);
  return b.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// 0: not this library; 3: exact name; 2: name.so[.N]; 1: name-VERSION.so[.N]. Higher wins, so
// `libc` prefers libc.so.6 over libc-client.so.
int match_rank(const std::string &name, const std::string &file) {
  if (file == name)
    return 3;
  if (name.find(".so") != std::string::npos || file.compare(0, name.size(), name) != 0)
    return 0;
  std::string rest = file.substr(name.size());
  if (rest == ".so" || rest.rfind(".so.", 0) == 0)
    return 2;
  if (rest.size() > 1 && rest[0] == '-' && rest.find(".so") != std::string::npos)
    return 1;
  return 0;
}

std::string basename_of(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool exists(const std::string &path) { return access(path.c_str(), F_OK) == 0; }

std::string proc_root(pid_t pid) { return process_root(pid); }

}  // namespace

std::string process_root(pid_t pid) { return "/proc/" + std::to_string(pid) + "/root"; }

std::optional<std::string> path_in_process_root(const std::string &path, pid_t pid) {
  if (pid <= 0)
    return std::nullopt;
  std::string root = process_root(pid);
  if (path.size() <= root.size() || path.compare(0, root.size(), root) != 0 ||
      path[root.size()] != '/')
    return std::nullopt;
  return path.substr(root.size());
}

std::vector<LdCacheEntry> read_ld_so_cache(const std::string &path) {
  std::vector<LdCacheEntry> out;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return out;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string b = ss.str();

  // An old-format cache may carry the new format after its own entries, 8-aligned.
  size_t base = 0;
  if (b.compare(0, sizeof kOldMagic - 1, kOldMagic) == 0) {
    if (b.size() < 16)
      return out;
    size_t old_end = 16 + size_t(u32_at(b, 12)) * kOldEntrySize;
    base = (old_end + 7) & ~size_t(7);
  }
  if (b.size() < base + kNewHeaderSize || b.compare(base, sizeof kNewMagic - 1, kNewMagic) != 0)
    return out;
  uint32_t nlibs = u32_at(b, base + 20);
  if (base + kNewHeaderSize + size_t(nlibs) * kNewEntrySize > b.size())
    return out;
  for (uint32_t i = 0; i < nlibs; i++) {
    size_t e = base + kNewHeaderSize + size_t(i) * kNewEntrySize;
    uint32_t flags = u32_at(b, e);
    if ((flags & kTypeMask) != kElfLibc6 || (flags & kArchMask) != kNativeArch)
      continue;
    LdCacheEntry entry{string_at(b, base, u32_at(b, e + 4)), string_at(b, base, u32_at(b, e + 8))};
    if (!entry.soname.empty() && !entry.path.empty())
      out.push_back(std::move(entry));
  }
  return out;
}

bool library_name_matches(const std::string &name, const std::string &file) {
  return match_rank(name, file) > 0;
}

bool looks_like_library(const std::string &name) {
  return name.rfind("lib", 0) == 0 || name.find(".so") != std::string::npos;
}

std::optional<std::string> find_library(const std::string &name) {
  std::string best;
  int best_rank = 0;
  for (auto &e : read_ld_so_cache()) {
    int rank = match_rank(name, e.soname);
    if (rank > best_rank && exists(e.path)) {
      best = e.path;
      best_rank = rank;
    }
  }
  if (best_rank > 0)
    return best;

  for (const char *dir : kDefaultLibDirs) {
    DIR *d = opendir(dir);
    if (!d)
      continue;
    std::set<std::string> names;  // sorted, so the choice does not depend on readdir order
    while (dirent *ent = readdir(d))
      if (match_rank(name, ent->d_name) > 0)
        names.insert(ent->d_name);
    closedir(d);
    for (auto &n : names) {
      std::string path = std::string(dir) + "/" + n;
      int rank = match_rank(name, n);
      // libc.so and friends are linker scripts for the static linker, not libraries.
      if (rank > best_rank && is_elf_file(path)) {
        best = path;
        best_rank = rank;
      }
    }
    if (best_rank > 0)
      return best;
  }
  return std::nullopt;
}

std::optional<std::string> find_program(const std::string &name) {
  const char *env = getenv("PATH");
  std::string path_var = env && *env ? env : "/usr/local/bin:/usr/bin:/bin";
  std::stringstream ss(path_var);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty())
      dir = ".";
    std::string candidate = dir + "/" + name;
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return std::nullopt;
}

std::vector<std::string> resolution_in_process(const std::string &pattern, pid_t pid) {
  std::vector<std::string> out;
  auto files = resolve_binaries(pattern, pid);
  if (!files)
    return out;
  for (const std::string &f : *files) {
    auto inside = path_in_process_root(f, pid);
    out.push_back(inside ? "root:" + *inside : f);
  }
  return out;
}

Result<std::vector<std::string>> mapped_files(pid_t pid) {
  std::string maps = "/proc/" + std::to_string(pid) + "/maps";
  std::ifstream in(maps);
  if (!in)
    return make_error("reading " + maps, "no process with pid " + std::to_string(pid),
                      "check the pid (the process may have exited)", ESRCH);
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::string line;
  while (std::getline(in, line)) {
    // address perms offset dev inode path
    std::istringstream fields(line);
    std::string addr, perms, offset, dev, inode, path;
    fields >> addr >> perms >> offset >> dev >> inode;
    std::getline(fields >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] != '/' ||
        path.find(" (deleted)") != std::string::npos)
      continue;
    if (seen.insert(path).second)
      out.push_back(proc_root(pid) + path);
  }
  return out;
}

Result<std::string> resolve_binary(const std::string &name, pid_t pid) {
  const std::string hint =
      "give the file's full path, a program on PATH, or a library as the dynamic loader names "
      "it (libc, libruby, libc.so.6)";
  if (name.empty())
    return make_error("", "no binary given", hint);

  if (name.find('/') != std::string::npos) {
    std::string path = pid > 0 && name[0] == '/' ? proc_root(pid) + name : name;
    // `ARCHIVE!/ENTRY`: the archive must exist; its entry is looked up when it is read.
    auto in_archive = exists(path) ? std::nullopt : split_archive_path(path);
    if (!exists(in_archive ? in_archive->archive : path))
      return make_error("", name + ": no such file", "give the binary's full path", ENOENT);
    if (in_archive) {  // a missing or compressed entry is the script's mistake: say it here
      if (auto entry = find_zip_entry(in_archive->archive, in_archive->entry); !entry)
        return make_error("", name + ": " + entry.error().why, entry.error().hint, entry.error().err);
    }
    return path;
  }

  if (pid > 0) {
    auto files = mapped_files(pid);
    if (!files)
      return files.error();
    std::string best;
    int best_rank = 0;
    for (auto &f : *files) {
      int rank = match_rank(name, basename_of(f));
      if (rank > best_rank) {
        best = f;
        best_rank = rank;
      }
    }
    if (best_rank > 0)
      return best;
  }

  std::optional<std::string> found;
  if (looks_like_library(name))
    found = find_library(name);
  else if (!(found = find_program(name)))
    found = find_library(name);
  if (!found)
    return make_error("", "no library or program named '" + name + "'", hint, ENOENT);
  // A process in another mount namespace sees its own files: use them when they exist.
  if (pid > 0 && exists(proc_root(pid) + *found))
    return proc_root(pid) + *found;
  return *found;
}

namespace {
// A path with a wildcard, without a process: the ELF files it matches on the file system, as
// bpftrace lists and attaches `uprobe:/usr/bin/*:main` (directories and scripts are skipped).
Result<std::vector<std::string>> matching_files(const std::string &pattern) {
  glob_t g{};
  int rc = glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> out;
  std::set<std::pair<dev_t, ino_t>> seen;  // a library and its symlinks are one file: once
  for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++) {
    struct stat st{};
    if (stat(g.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode) && is_elf_file(g.gl_pathv[i]) &&
        seen.emplace(st.st_dev, st.st_ino).second)
      out.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  if (out.empty())
    return make_error("", "no ELF file matches " + pattern,
                      "check the path, or add -p PID to match the files a process maps");
  return out;  // glob sorts them
}
}  // namespace

Result<std::vector<std::string>> resolve_binaries(const std::string &pattern, pid_t pid) {
  if (pattern.find('*') == std::string::npos) {
    auto path = resolve_binary(pattern, pid);
    if (!path)
      return path.error();
    return std::vector<std::string>{*path};
  }
  if (pid <= 0 && pattern.find('/') != std::string::npos)
    return matching_files(pattern);
  if (pid <= 0)
    return make_error("", "a wildcard in the binary needs a process to look in",
                      "add -p PID, or give a path (uprobe:/usr/lib/*/libruby*.so*:...)");
  auto files = mapped_files(pid);
  if (!files)
    return files.error();
  std::string root = proc_root(pid);
  std::vector<std::string> out;
  for (auto &f : *files)
    if (fnmatch(pattern.c_str(), f.c_str() + root.size(), 0) == 0)
      out.push_back(f);
  return out;
}

}  // namespace rbt::runtime
