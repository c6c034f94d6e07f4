#include "ruby/ruby_discovery.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ruby/ruby_elf.h"
#include "ruby/ruby_process.h"
#include "ruby/ruby_symbols.h"
#include "symbols/library_resolver.h"
#include "symbols/process_maps.h"

namespace rbt::runtime::ruby {

namespace {

// Functions every Ruby process runs once, after the dynamic loader relocated libruby's GOT and
// gave it its TLS module id, before its VM runs any Ruby code (Ruby's main: ruby_init, which
// calls ruby_setup; embedders call either). Two, so an inlined call still meets one.
const char *const kProbeSymbols[2] = {"ruby_setup", "ruby_init"};

std::string basename_of(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool file_id(const std::string &path, uint64_t &dev, uint64_t &ino) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return false;
  dev = st.st_dev;
  ino = st.st_ino;
  return true;
}

// The per-file facts BPF needs, from the ELF: empty `why` on success.
std::string binary_facts(const ElfFile &elf, const RubyElfFacts &f, rbt_ruby_binary &out) {
  auto code = ruby_version_code(f.version);
  auto forced = layout_override();
  if (forced && *forced)
    code = *forced;
  int layout = code ? layout_index(*code) : -1;
  if (layout < 0)
    return "Ruby '" + f.version + "' has no layout in rbt";
  out.layout = static_cast<uint32_t>(layout);
  const rbt_ruby_layout &l = rbt_ruby_layouts_table[layout];
  auto lookup = thread_lookup_override();
  bool by_list = (lookup && *lookup == ThreadLookup::List) || !f.has_tls_ec;
  if (by_list) {
    if (!f.vm_ptr_value || !l.threads_head)
      return "no thread-local ruby_current_ec and no ruby_current_vm_ptr";
    out.tls_source = RBT_RUBY_TLS_NONE;
    out.vm_ptr_vaddr = f.vm_ptr_value;
  } else {
    out.got_vaddr = f.got_vaddr;
    switch (f.access) {
    case TlsAccess::DtvModule:
      out.tls_source = RBT_RUBY_TLS_FROM_GOT_MODID;
      out.tls_offset = static_cast<int64_t>(f.ec_value);
      break;
    case TlsAccess::GotTpOffset:
      out.tls_source = RBT_RUBY_TLS_FROM_GOT_TPOFF;
      break;
    case TlsAccess::GotTlsDesc:
      out.tls_source = RBT_RUBY_TLS_FROM_GOT_DESC;
      break;
    case TlsAccess::LocalExec: {
      uint64_t block = (f.tls_memsz + f.tls_align - 1) / f.tls_align * f.tls_align;
      out.tls_source = RBT_RUBY_TLS_CONSTANT;
      out.tls_offset = static_cast<int64_t>(f.ec_value) - static_cast<int64_t>(block);
      break;
    }
    }
  }
  bool any = false;
  for (int i = 0; i < 2; i++) {
    const ElfSymbol *s = elf.find(kProbeSymbols[i]);
    out.probe_vaddr[i] = s && s->type == SymbolType::Func ? s->value : 0;
    any = any || out.probe_vaddr[i];
  }
  if (!any)
    return "neither ruby_setup nor ruby_init to probe";
  return {};
}

}  // namespace

void RubyDiscovery::judge_execs() {
  if (execs_fd_ < 0 || exes_fd_ < 0)
    return;
  uint32_t key, next;
  std::vector<uint32_t> tgids;
  void *prev = nullptr;
  while (bpf_map_get_next_key(execs_fd_, prev, &next) == 0) {
    tgids.push_back(next);
    key = next;
    prev = &key;
  }
  for (uint32_t tgid : tgids) {
    rbt_ruby_exec_file e{};
    bool got = bpf_map_lookup_elem(execs_fd_, &tgid, &e) == 0;
    bpf_map_delete_elem(execs_fd_, &tgid);
    if (!got || !judged_.insert({e.id.ino, e.id.dev}).second)
      continue;
    std::string path(e.path, strnlen(e.path, sizeof(e.path)));
    if (path.empty() || path[0] != '/') {
      judged_.erase({e.id.ino, e.id.dev});
      continue;
    }
    // The file as the process sees it, else as the host does: the same inode either way.
    std::optional<std::string> found;
    for (std::string candidate : {"/proc/" + std::to_string(tgid) + "/root" + path, path}) {
      struct stat st;
      if (stat(candidate.c_str(), &st) == 0 && st.st_ino == e.id.ino) {
        found = candidate;
        break;
      }
    }
    auto elf = found ? ElfFile::open(*found) : Result<ElfFile>(make_error("", ""));
    if (!elf) {
      judged_.erase({e.id.ino, e.id.dev});  // not seen well this time: judge a later exec
      continue;
    }
    if (may_run_ruby(*elf))
      continue;
    uint32_t verdict = RBT_RUBY_EXE_NOT_RUBY;
    bpf_map_update_elem(exes_fd_, &e.id, &verdict, BPF_ANY);
    if (verbose_)
      fprintf(stderr, "rbt: rstack: %s runs no Ruby: its processes are not inspected\n",
              found->c_str());
  }
}

std::unique_ptr<RubyDiscovery> RubyDiscovery::open(bpf_object *obj, bool verbose) {
  if (!bpf_object__find_program_by_name(obj, "rbt_ruby_discover"))
    return nullptr;
  std::unique_ptr<RubyDiscovery> d(new RubyDiscovery(obj, verbose));
  const bpf_map *m = bpf_object__find_map_by_name(obj, "rbt_ruby_binaries");
  d->binaries_fd_ = m ? bpf_map__fd(m) : -1;
  m = bpf_object__find_map_by_name(obj, "rbt_ruby_exes");
  d->exes_fd_ = m ? bpf_map__fd(m) : -1;
  m = bpf_object__find_map_by_name(obj, "rbt_ruby_execs");
  d->execs_fd_ = m ? bpf_map__fd(m) : -1;
  return d;
}

RubyDiscovery::~RubyDiscovery() {
  for (bpf_link *l : links_)
    bpf_link__destroy(l);
}

int RubyDiscovery::add(const std::string &path, uint64_t dev, uint64_t ino) {
  auto note = [&](const std::string &why) {
    if (verbose_)
      fprintf(stderr, "rbt: rstack: not probing %s: %s\n", path.c_str(), why.c_str());
    rejected_.emplace_back(dev, ino);
    return -1;
  };
  if (binaries_.size() >= RBT_RUBY_MAX_BINARIES)
    return note("more than " + std::to_string(RBT_RUBY_MAX_BINARIES) + " Ruby files");
  auto opened = ElfFile::open(path);
  if (!opened)
    return note(opened.error().why);
  Binary b;
  b.path = path;
  b.dev = dev;
  b.ino = ino;
  b.elf = std::make_shared<ElfFile>(std::move(*opened));
  auto facts = read_ruby_elf_facts(*b.elf);
  if (!facts)
    return note(facts.error().why);
  b.version = facts->version;
  if (std::string why = binary_facts(*b.elf, *facts, b.facts); !why.empty())
    return note(why);
  b.facts.global_symbols_vaddr = global_symbols_vaddr(*b.elf);
  uint32_t index = static_cast<uint32_t>(binaries_.size());
  if (bpf_map_update_elem(binaries_fd_, &index, &b.facts, BPF_ANY) != 0)
    return note(std::string("cannot fill rbt_ruby_binaries: ") + strerror(errno));
  bpf_program *prog = bpf_object__find_program_by_name(obj_, "rbt_ruby_discover");
  int attached = 0;
  for (uint64_t which = 0; which < 2; which++) {
    auto offset = b.facts.probe_vaddr[which] ? b.elf->vaddr_to_offset(b.facts.probe_vaddr[which])
                                             : std::nullopt;
    if (!offset)
      continue;
    LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = index | which << 16);
    bpf_link *link = bpf_program__attach_uprobe_opts(prog, -1, path.c_str(), *offset, &opts);
    if (!link)
      continue;
    links_.push_back(link);
    attached++;
  }
  if (!attached)
    return note(std::string("attaching its early uprobe: ") + strerror(errno));
  if (verbose_)
    fprintf(stderr, "rbt: rstack: probing Ruby %s in %s (file %d)%s\n", b.version.c_str(),
            path.c_str(), index,
            b.facts.global_symbols_vaddr ? ", symbol table located" : ", symbol table unknown");
  binaries_.push_back(std::move(b));
  return static_cast<int>(index);
}

int RubyDiscovery::binary_for(const std::string &path) {
  uint64_t dev, ino;
  if (!file_id(path, dev, ino))
    return -1;
  for (size_t i = 0; i < binaries_.size(); i++)
    if (binaries_[i].dev == dev && binaries_[i].ino == ino)
      return static_cast<int>(i);
  for (auto &r : rejected_)
    if (r.first == dev && r.second == ino)
      return -1;
  return add(path, dev, ino);
}

void RubyDiscovery::set_global_symbols(uint32_t index, uint64_t vaddr) {
  if (index >= binaries_.size() || binaries_[index].facts.global_symbols_vaddr == vaddr)
    return;
  binaries_[index].facts.global_symbols_vaddr = vaddr;
  bpf_map_update_elem(binaries_fd_, &index, &binaries_[index].facts, BPF_ANY);
}

Status RubyDiscovery::attach(std::vector<pid_t> &running) {
  for (const char *name : {"rbt_ruby_exec", "rbt_ruby_fork"}) {
    bpf_link *link = bpf_program__attach(bpf_object__find_program_by_name(obj_, name));
    if (!link)
      return make_error(std::string("attaching rstack's ") + name + " program", strerror(errno),
                        "rstack needs raw tracepoints sched_process_exec and sched_process_fork");
    links_.push_back(link);
  }
  // Files running processes map: libruby, or an executable named ruby* with the interpreter
  // linked in. Through /proc/PID/root, so a file only a container sees is found too.
  DIR *proc = opendir("/proc");
  const pid_t self = getpid();
  for (dirent *e; proc && (e = readdir(proc)) != nullptr;) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || pid == self)
      continue;
    std::string root = "/proc/" + std::string(e->d_name) + "/root";
    char exe[4096];
    ssize_t n = readlink(("/proc/" + std::string(e->d_name) + "/exe").c_str(), exe,
                         sizeof(exe) - 1);
    std::string exe_path = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
    bool ruby = false;
    for (auto &m : read_process_maps(static_cast<pid_t>(pid))) {
      std::string base = basename_of(m.path);
      if (library_name_matches("libruby", base) ||
          (m.path == exe_path && base.find("ruby") != std::string::npos))
        ruby = binary_for(root + m.path) >= 0 || ruby;
    }
    if (ruby)
      running.push_back(static_cast<pid_t>(pid));
  }
  if (proc)
    closedir(proc);
  // Files no process maps yet: every libruby the dynamic loader would find, and `ruby` on PATH
  // (when the interpreter is linked into it).
  for (auto &entry : read_ld_so_cache())
    if (library_name_matches("libruby", basename_of(entry.soname)))
      binary_for(entry.path);
  if (auto lib = find_library("libruby"))
    binary_for(*lib);
  if (auto prog = find_program("ruby")) {
    char real[4096];
    if (realpath(prog->c_str(), real)) {
      auto elf = ElfFile::open(real);
      if (elf && elf->find("ruby_version"))
        binary_for(real);
    }
  }
  return Ok{};
}

}  // namespace rbt::runtime::ruby
