#pragma once
// Turns the binary a uprobe or USDT probe names into a path, the way a user thinks of it:
// `libc`, `libruby`, `libc.so.6` as the dynamic loader would find them (ld.so.cache, then the
// default directories), a program name through PATH, or a path as given. With a pid the
// process's own view wins (/proc/PID/maps, reached through /proc/PID/root so that processes in
// other mount namespaces — containers — work too).

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "result.h"

namespace rbt::runtime {

// One x86-64 (or native-arch) entry of /etc/ld.so.cache: "libc.so.6" → "/lib/.../libc.so.6".
struct LdCacheEntry {
  std::string soname;
  std::string path;
};

// Native-architecture entries of a glibc-ld.so.cache1.1 file, in file order. An unreadable or
// unknown-format cache yields an empty list (the directory search still works).
std::vector<LdCacheEntry> read_ld_so_cache(const std::string &path = "/etc/ld.so.cache");

// True when `file` (a basename) is the library `name` names: equal to it, or `name` has no
// ".so" and the file is name.so[.N...] or name-VERSION.so[...] (libruby → libruby-3.1.so.3.1).
bool library_name_matches(const std::string &name, const std::string &file);

// True for names that look like libraries rather than programs (libX, X.so, X.so.N).
bool looks_like_library(const std::string &name);

// The path of the library `name` (no '/'), from the ld.so.cache then the default directories.
std::optional<std::string> find_library(const std::string &name);

// The path of program `name` (no '/') on PATH (or the default PATH when unset).
std::optional<std::string> find_program(const std::string &name);

// "/proc/PID/root": the process's view of the file system.
std::string process_root(pid_t pid);

// A path that resolve_binary or mapped_files found inside process pid's root
// ("/proc/PID/root/usr/lib/x.so") as the process names it ("/usr/lib/x.so"); nullopt for a
// path outside that root (or pid <= 0).
std::optional<std::string> path_in_process_root(const std::string &path, pid_t pid);

// What resolve_binaries(pattern, pid) finds, in a form that compares across processes of one
// root: "root:" + the process's name for a file inside its root, else the path. Empty when
// nothing resolves (the probe's expansion then says why).
std::vector<std::string> resolution_in_process(const std::string &pattern, pid_t pid);

// Executable files the process maps, as "/proc/PID/root" + path, deduplicated, in map order.
Result<std::vector<std::string>> mapped_files(pid_t pid);

// Resolves what a probe names (`path`, `lib`, `program`) to a file that exists; pid > 0 looks
// through that process first. Errors name the target and hint at what to give instead.
Result<std::string> resolve_binary(const std::string &name, pid_t pid = -1);

// The files a probe's binary field names: one resolved path, or with a `*` and a pid every
// executable file the process maps whose path (inside the process's root) matches.
Result<std::vector<std::string>> resolve_binaries(const std::string &pattern, pid_t pid);

}  // namespace rbt::runtime
