#include "cache_key.h"

#include <elf.h>
#include <fcntl.h>
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

// The GNU build id note of the ELF file `path`, as hex; empty when it has none.
std::string file_build_id(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return {};
  std::string id;
  Elf64_Ehdr eh;
  if (pread(fd, &eh, sizeof eh, 0) == sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
      eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) &&
      eh.e_phnum < 64) {
    std::vector<Elf64_Phdr> phdrs(eh.e_phnum);
    ssize_t want = static_cast<ssize_t>(phdrs.size() * sizeof(Elf64_Phdr));
    if (pread(fd, phdrs.data(), want, static_cast<off_t>(eh.e_phoff)) == want) {
      for (const Elf64_Phdr &ph : phdrs) {
        if (ph.p_type != PT_NOTE || ph.p_filesz > 4096 || !id.empty())
          continue;
        std::string notes(ph.p_filesz, '\0');
        if (pread(fd, notes.data(), notes.size(), static_cast<off_t>(ph.p_offset)) !=
            static_cast<ssize_t>(notes.size()))
          continue;
        for (size_t at = 0; at + sizeof(Elf64_Nhdr) <= notes.size() && id.empty();) {
          Elf64_Nhdr nh;
          memcpy(&nh, notes.data() + at, sizeof nh);
          size_t name = at + sizeof nh, desc = name + ((nh.n_namesz + 3) & ~3u);
          if (desc + nh.n_descsz > notes.size())
            break;
          if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
              notes.compare(name, 4, std::string("GNU\0", 4)) == 0) {
            static const char kDigits[] = "0123456789abcdef";
            for (size_t j = 0; j < nh.n_descsz; j++) {
              uint8_t b = static_cast<uint8_t>(notes[desc + j]);
              id += kDigits[b >> 4];
              id += kDigits[b & 15];
            }
          }
          at = desc + ((nh.n_descsz + 3) & ~3u);
        }
      }
    }
  }
  close(fd);
  return id;
}

}  // namespace

std::string full_binary_path() {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return "rbt-full";
  self[n] = '\0';
  std::string dir(self);
  return dir.substr(0, dir.rfind('/') + 1) + "rbt-full";
}

std::string build_id() {
  // The compiler is rbt-full: its build decides the objects, whichever of the two binaries
  // computes the key.
  std::string full = full_binary_path();
  std::string id = file_build_id(full);
  if (!id.empty())
    return id;
  return "exe " + identity(full);
}

Result<std::string> key_text(const Options &options) {
  // `import "file";`: the imported files' text is not in the key, so such a script is never
  // cached (a changed helper file must be compiled again).
  for (size_t at = options.program_text.find("import"); at != std::string::npos;
       at = options.program_text.find("import", at + 1)) {
    size_t q = options.program_text.find_first_not_of(" \t\r\n", at + 6);
    if (q != std::string::npos && options.program_text[q] == '"')
      return make_error("object cache", "the script imports files");
  }
  std::string k;
  line(k, "cache format", std::to_string(kFormatVersion));
  line(k, "rbt version", RBT_VERSION);
  line(k, "rbt build", build_id());

  line(k, "program name", options.program_name);
  line(k, "program text", options.program_text);
  line(k, "arguments", std::to_string(options.args.size()));
  for (const std::string &a : options.args)
    line(k, "argument", a);
  // getopt() values are compiled in like $1; --include's headers define macros.
  for (const auto &[name, value] : options.named_args)
    line(k, "named argument", name + (value ? "=" + *value : ""));
  for (const std::string &h : options.includes)
    line(k, "include", h);
  if (!options.probe_filter.empty())
    line(k, "probe filter", options.probe_filter);
  line(k, "options", std::string("unsafe=") + (options.unsafe ? "1" : "0") +
                         " command=" + (options.command.empty() ? "0" : "1") +
                         " process=" + (options.pid > 0 ? "1" : "0") +
                         " filter_pid=" + (options.filter_pid_in_probes ? "1" : "0") +
                         " warn_failed_reads=" + (options.warn_failed_reads ? "1" : "0") +
                         " print_maps=" + (options.print_maps_at_exit ? "1" : "0") +
                         " rstack_needs_ruby=" + (options.rstack_needs_ruby ? "1" : "0") +
                         " ringbuf=" + std::to_string(options.ringbuf_bytes));
  if (options.pid > 0) {
    // Not the pid: probes resolve through the process's root, and the object holds the
    // process's own names for files there (ProbeDesc::in_process_root), so another process
    // with the same root shares it. The files it probes are checked through its root on use,
    // and what its probes' binaries resolve to there (its mapped files) is compared.
    std::string root = "/proc/" + std::to_string(options.pid) + "/root";
    FileIdentity id = identify_file(root);
    if (!id.exists)
      return make_error("", "cannot read " + root);
    line(k, "process root", std::to_string(id.dev) + ":" + std::to_string(id.ino));
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
  // `pid`/`tid` are compiled for the pid namespace rbt runs in (a child one's numbers).
  struct stat pidns;
  line(k, "pid namespace",
       stat("/proc/self/ns/pid", &pidns) == 0 ? std::to_string(pidns.st_ino) : "?");
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
