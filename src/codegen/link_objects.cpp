#include "link_objects.h"

#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

namespace rbt::codegen {

namespace {

// Repeats a pread/pwrite at the offset done so far until `size` bytes are through.
template <typename Op> bool whole(size_t size, Op op) {
  for (size_t done = 0; done < size;) {
    ssize_t n = op(done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// A memory-backed file with a path libbpf can open: libbpf 1.1's linker takes file names only.
class MemFile {
public:
  MemFile() : fd_(memfd_create("rbt-bpf-object", MFD_CLOEXEC)) {}
  ~MemFile() {
    if (fd_ >= 0)
      close(fd_);
  }
  MemFile(const MemFile &) = delete;
  MemFile &operator=(const MemFile &) = delete;

  bool ok() const { return fd_ >= 0; }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
  bool write_all(const std::vector<char> &bytes) const {
    return whole(bytes.size(), [&](size_t done) {
      return pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    });
  }
  bool read_all(std::vector<char> &bytes) const {
    off_t size = lseek(fd_, 0, SEEK_END);
    if (size < 0)
      return false;
    bytes.resize(static_cast<size_t>(size));
    return whole(bytes.size(), [&](size_t done) {
      return pread(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    });
  }

private:
  int fd_;
};

// libbpf's linker explains a refusal through libbpf's print callback: collected here for the
// error's detail (-v) rather than printed over the user's output.
std::string g_linker_log;

int collect_linker_log(enum libbpf_print_level level, const char *format, va_list args) {
  if (level == LIBBPF_DEBUG)
    return 0;
  char line[512];
  int n = vsnprintf(line, sizeof line, format, args);
  g_linker_log += line;
  return n;
}

Error link_error(const std::string &why, int err = 0) {
  Error e = make_error("linking the compiled BPF objects", why,
                       "RBT_COMPILE_THREADS=1 compiles one object; please report this with "
                       "the script that caused it",
                       err);
  e.detail = g_linker_log;
  return e;
}

}  // namespace

Result<std::vector<char>> link_objects(const std::vector<std::vector<char>> &objects) {
  // Runs on one thread, after the parts are compiled and before the runtime sets its own.
  g_linker_log.clear();
  libbpf_print_fn_t previous = libbpf_set_print(collect_linker_log);
  struct Restore {
    libbpf_print_fn_t fn;
    ~Restore() { libbpf_set_print(fn); }
  } restore{previous};
  MemFile out;
  if (!out.ok())
    return link_error(std::string("memfd_create: ") + std::strerror(errno), errno);
  bpf_linker *linker = bpf_linker__new(out.path().c_str(), nullptr);
  if (!linker)
    return link_error(std::string("bpf_linker__new: ") + std::strerror(errno), errno);
  Status status = Ok{};
  for (size_t i = 0; i < objects.size() && status; i++) {
    MemFile in;
    if (!in.ok() || !in.write_all(objects[i]))
      status = link_error(std::string("writing a partial object: ") + std::strerror(errno), errno);
    else if (int err = bpf_linker__add_file(linker, in.path().c_str(), nullptr); err)
      status = link_error("libbpf's linker refused part " + std::to_string(i) + ": " +
                              std::strerror(-err), -err);
  }
  if (status)
    if (int err = bpf_linker__finalize(linker); err)
      status = link_error(std::string("bpf_linker__finalize: ") + std::strerror(-err), -err);
  bpf_linker__free(linker);
  if (!status)
    return status.error();
  std::vector<char> elf;
  if (!out.read_all(elf))
    return link_error(std::string("reading the linked object: ") + std::strerror(errno), errno);
  return elf;
}

}  // namespace rbt::codegen
