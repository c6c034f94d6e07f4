#include "ruby/ruby_process.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ruby/ruby_elf.h"
#include "ruby/ruby_symbols.h"
#include "symbols/library_resolver.h"
#include "symbols/process_maps.h"

namespace rbt::runtime::ruby {

namespace {

std::string basename_of(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The mapping that holds the interpreter: libruby if the process maps one, else an executable
// mapping whose file has a ruby_version symbol (a statically linked ruby).
const Mapping *interpreter_mapping(const std::vector<Mapping> &maps, pid_t pid,
                                   std::shared_ptr<ElfFile> &elf) {
  for (auto &m : maps)
    if (library_name_matches("libruby", basename_of(m.path))) {
      auto opened = ElfFile::open("/proc/" + std::to_string(pid) + "/root" + m.path);
      if (opened) {
        elf = std::make_shared<ElfFile>(std::move(*opened));
        return &m;
      }
    }
  if (!maps.empty()) {
    // The main program is the first executable mapping of /proc/PID/exe's file.
    char exe[4096];
    ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), exe, sizeof(exe) - 1);
    std::string exe_path = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
    for (auto &m : maps)
      if (m.path == exe_path) {
        auto opened = ElfFile::open("/proc/" + std::to_string(pid) + "/root" + m.path);
        if (opened && opened->find("ruby_version")) {
          elf = std::make_shared<ElfFile>(std::move(*opened));
          return &m;
        }
        break;
      }
  }
  return nullptr;
}

// Load bias from one executable mapping: where the segment holding its file offset landed.
uint64_t load_bias(const ElfFile &elf, const Mapping &m) {
  for (auto &seg : elf.segments())
    if (seg.executable && m.offset >= seg.offset && m.offset < seg.offset + seg.filesz)
      return m.start - (seg.vaddr + (m.offset - seg.offset));
  return m.start - m.offset;
}

}  // namespace

bool read_process_memory(pid_t pid, uint64_t addr, void *dst, size_t n) {
  int fd = open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t got = pread(fd, dst, n, static_cast<off_t>(addr));
  close(fd);
  return got == static_cast<ssize_t>(n);
}

int layout_index(uint32_t version_code) {
  for (size_t i = 0; i < RBT_RUBY_LAYOUT_COUNT; i++)
    if (rbt_ruby_layouts_table[i].version == version_code)
      return static_cast<int>(i);
  return -1;
}

Inspection inspect_process(pid_t pid) {
  Inspection out;
  std::string what = "inspecting process " + std::to_string(pid) + " for rstack";
  auto maps = read_process_maps(pid);
  if (maps.empty()) {
    out.error = make_error(what, "no such process, or its memory map is unreadable");
    return out;
  }
  std::shared_ptr<ElfFile> elf;
  const Mapping *m = interpreter_mapping(maps, pid, elf);
  if (!m) {
    // Right after exec the dynamic loader may not have mapped libruby yet.
    out.outcome = InspectOutcome::NotRuby;
    out.error = make_error(what, "it runs " + basename_of(maps.front().path) +
                                     ", which maps no libruby and has no ruby_version symbol");
    return out;
  }
  auto facts = read_ruby_elf_facts(*elf);
  if (!facts) {
    out.error = facts.error();
    out.error.context(what);
    return out;
  }
  RubyProcess &p = out.process;
  p.pid = pid;
  p.binary = m->path;
  p.elf = elf;
  p.load_bias = load_bias(*elf, *m);
  p.version = facts->version;
  auto code = ruby_version_code(p.version);
  int layout = code ? layout_index(*code) : -1;
  if (layout < 0) {
    out.error = make_error(what,
                           "found Ruby '" + p.version + "' in " + p.binary +
                               ", a version rstack has no layout for",
                           "supported: Ruby 3.0 to 3.4 (2.7 lacks the thread-local ec)");
    return out;
  }
  if (*code < 300) {
    out.error = make_error(what, "found Ruby " + p.version + " in " + p.binary +
                                     ": Ruby 2.7 has no thread-local ruby_current_ec");
    return out;
  }
  p.proc.layout = static_cast<uint32_t>(layout);
  uint64_t got = p.load_bias + facts->got_vaddr;
  switch (facts->access) {
  case TlsAccess::DtvModule: {
    uint64_t modid = 0;
    if (!read_process_memory(pid, got, &modid, sizeof(modid))) {
      out.error = make_error(what, "cannot read its GOT at 0x" + std::to_string(got) + ": " +
                                       strerror(errno));
      return out;
    }
    if (modid == 0) {  // not relocated yet
      out.outcome = InspectOutcome::NotYet;
      return out;
    }
    p.proc.tls_kind = RBT_RUBY_TLS_DTV;
    p.proc.tls_modid = modid;
    p.proc.tls_offset = static_cast<int64_t>(facts->ec_value);
    break;
  }
  case TlsAccess::GotTpOffset:
  case TlsAccess::GotTlsDesc: {
    uint64_t words[2] = {};
    if (!read_process_memory(pid, got, words, sizeof(words)) ||
        (words[0] == 0 && words[1] == 0)) {
      out.outcome = InspectOutcome::NotYet;
      return out;
    }
    p.proc.tls_kind = RBT_RUBY_TLS_TPOFF;
    p.proc.tls_offset = static_cast<int64_t>(
        facts->access == TlsAccess::GotTpOffset ? words[0] : words[1]);
    break;
  }
  case TlsAccess::LocalExec: {
    uint64_t align = facts->tls_align;
    uint64_t block = (facts->tls_memsz + align - 1) / align * align;
    p.proc.tls_kind = RBT_RUBY_TLS_TPOFF;
    p.proc.tls_offset = static_cast<int64_t>(facts->ec_value) - static_cast<int64_t>(block);
    break;
  }
  }
  p.proc.global_symbols = find_global_symbols(pid, *elf, p.load_bias, *code);
  out.outcome = InspectOutcome::Ruby;
  return out;
}

}  // namespace rbt::runtime::ruby
