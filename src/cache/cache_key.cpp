#include "cache_key.h"

#include <elf.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "cache_entry.h"

extern char **environ;

namespace rbt::cache {

namespace {

// Environment variables that cannot change the compiled object (where the cache is, how many
// threads compile, the attach marker the tests wait for).
constexpr const char *kNotInKey[] = {"RBT_CACHE_DIR", "RBT_CACHE_SIZE_MIB", "RBT_COMPILE_THREADS",
                                     "RBT_ATTACH_MARKER"};
constexpr const char *kLibraryDirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                        "/lib", "/usr/lib"};

// Length-prefixed, so that no two different sets of inputs print the same text.
void line(std::string &out, const std::string &name, const std::string &value) {
  out += name + " " + std::to_string(value.size()) + ": " + value + "\n";
}

std::string identity(const std::string &path) {
  FileIdentity id = identify_file(path);
  if (!id.exists)
    return "absent";
  return std::to_string(id.dev) + ":" + std::to_string(id.ino) + ":" + std::to_string(id.size) +
         ":" + std::to_string(id.mtime_ns) + ":" + std::to_string(id.ctime_ns);
}

std::optional<std::string> read_small_file(const char *path) {
  std::ifstream in(path);
  if (!in)
    return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Loaded modules by name and size (their tracepoints and BTF); reference counts and states
// change all the time without changing either.
std::string modules() {
  std::ifstream in("/proc/modules");
  std::string out, name, size, rest;
  while (in >> name >> size && std::getline(in, rest))
    out += name + " " + size + ",";
  return out;
}

int find_build_id(dl_phdr_info *info, size_t, void *data) {
  if (info->dlpi_name && info->dlpi_name[0])  // the executable comes first, with no name
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE)
      continue;
    auto *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
    const char *end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      auto *nh = reinterpret_cast<const ElfW(Nhdr) *>(p);
      const char *name = p + sizeof *nh;
      const char *desc = name + ((nh->n_namesz + 3) & ~3u);
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
          desc + nh->n_descsz <= end) {
        static const char kDigits[] = "0123456789abcdef";
        auto *out = static_cast<std::string *>(data);
        for (size_t j = 0; j < nh->n_descsz; j++) {
          uint8_t b = static_cast<uint8_t>(desc[j]);
          *out += kDigits[b >> 4];
          *out += kDigits[b & 15];
        }
        return 1;
      }
      p = desc + ((nh->n_descsz + 3) & ~3u);
    }
  }
  return 1;
}

}  // namespace

std::string build_id() {
  std::string id;
  dl_iterate_phdr(find_build_id, &id);
  if (!id.empty())
    return id;
  return "exe " + identity("/proc/self/exe");
}

Result<std::string> key_text(const Options &options) {
  std::string k;
  line(k, "cache format", std::to_string(kFormatVersion));
  line(k, "rbt version", RBT_VERSION);
  line(k, "rbt build", build_id());

  line(k, "program name", options.program_name);
  line(k, "program text", options.program_text);
  line(k, "arguments", std::to_string(options.args.size()));
  for (const std::string &a : options.args)
    line(k, "argument", a);
  line(k, "options", std::string("unsafe=") + (options.unsafe ? "1" : "0") +
                         " command=" + (options.command.empty() ? "0" : "1") +
                         " pid=" + std::to_string(options.pid) +
                         " filter_pid=" + (options.filter_pid_in_probes ? "1" : "0") +
                         " warn_failed_reads=" + (options.warn_failed_reads ? "1" : "0") +
                         " print_maps=" + (options.print_maps_at_exit ? "1" : "0") +
                         " rstack_needs_ruby=" + (options.rstack_needs_ruby ? "1" : "0") +
                         " ringbuf=" + std::to_string(options.ringbuf_bytes));
  if (options.pid > 0) {
    // A pid names another process once the first has exited: its start time tells them apart.
    std::string stat_path = "/proc/" + std::to_string(options.pid) + "/stat";
    auto stat = read_small_file(stat_path.c_str());
    size_t paren = stat ? stat->rfind(')') : std::string::npos;
    if (paren == std::string::npos)
      return make_error("", "cannot read " + stat_path);
    std::istringstream fields(stat->substr(paren + 2));
    std::string field, start;
    for (int i = 3; i <= 22 && fields >> field; i++)
      if (i == 22)
        start = field;
    line(k, "process start", start);
  }

  std::vector<std::string> env;
  for (char **e = environ; *e; e++) {
    std::string var = *e;
    std::string name = var.substr(0, var.find('='));
    bool keyed = name.rfind("BPFTRACE_", 0) == 0 || name.rfind("RBT_", 0) == 0 || name == "PATH";
    for (const char *skip : kNotInKey)
      keyed = keyed && name != skip;
    if (keyed)
      env.push_back(var);
  }
  std::sort(env.begin(), env.end());
  for (const std::string &var : env)
    line(k, "env", var);
  char cwd[PATH_MAX];
  line(k, "cwd", getcwd(cwd, sizeof cwd) ? cwd : "?");

  utsname u{};
  uname(&u);
  line(k, "kernel", std::string(u.sysname) + " " + u.release + " " + u.version + " " + u.machine);
  auto boot = read_small_file("/proc/sys/kernel/random/boot_id");
  if (!boot)
    return make_error("", "cannot read /proc/sys/kernel/random/boot_id");
  line(k, "boot", *boot);
  line(k, "kernel btf", identity("/sys/kernel/btf/vmlinux"));
  line(k, "modules", modules());

  line(k, "ld.so.cache", identity("/etc/ld.so.cache"));
  for (const char *dir : kLibraryDirs)
    line(k, "library dir", std::string(dir) + " " + identity(dir));
  const char *path = getenv("PATH");
  std::stringstream dirs(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    line(k, "program dir", dir + " " + identity(dir.empty() ? "." : dir));
  return k;
}

}  // namespace rbt::cache
