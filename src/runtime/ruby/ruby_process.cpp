#include "ruby/ruby_process.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <vector>

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

std::string known_layouts() {
  std::string out;
  for (size_t i = 0; i < RBT_RUBY_LAYOUT_COUNT; i++)
    out += (out.empty() ? "" : ", ") + std::to_string(rbt_ruby_layouts_table[i].version / 100) +
           "." + std::to_string(rbt_ruby_layouts_table[i].version % 100);
  return out;
}

std::string version_text(uint32_t code) {
  return std::to_string(code / 100) + "." + std::to_string(code % 100);
}

// Reads of the target for check_layout; 0 for anything unreadable.
struct Mem {
  pid_t pid;
  uint64_t u64(uint64_t addr) const {
    uint64_t v = 0;
    if (!addr || (addr & 7) || !read_process_memory(pid, addr, &v, 8))
      return 0;
    return v;
  }
};

// Whether `str` is a Ruby String of 1 to 4096 bytes whose first 255 look like text. Empty on
// success, else what is wrong.
std::string check_string(const Mem &m, const rbt_ruby_layout &l, uint64_t str) {
  uint64_t flags = m.u64(str);
  if ((flags & 0x1f) != RBT_RUBY_T_STRING)
    return "not a String (flags 0x" + [&] {
      char b[32];
      snprintf(b, sizeof(b), "%llx", static_cast<unsigned long long>(flags));
      return std::string(b);
    }() + ")";
  uint64_t ptr, len;
  if (flags & RBT_RUBY_STRING_NOEMBED) {
    ptr = m.u64(str + l.rstring_heap_ptr);
    len = m.u64(str + l.rstring_len);
  } else {
    ptr = str + l.rstring_embed;
    len = l.rstring_embed_len_in_flags ? (flags >> 14) & 0x1f : m.u64(str + l.rstring_len) & 0xffffffff;
  }
  if (len == 0 || len > 4096 || !ptr)
    return "a String of implausible length " + std::to_string(len);
  std::string bytes(std::min<uint64_t>(len, 255), '\0');
  if (!read_process_memory(m.pid, ptr, bytes.data(), bytes.size()))
    return "a String whose bytes are unreadable";
  for (unsigned char c : bytes)
    if (c < 0x20 && c != '\t')
      return "a String with control bytes";
  return {};
}

}  // namespace

LayoutCheckResult check_layout(pid_t pid, const ElfFile &elf, uint64_t load_bias,
                               const rbt_ruby_layout &l) {
  LayoutCheckResult out;
  Mem m{pid};
  const ElfSymbol *vm_sym = elf.find("ruby_current_vm_ptr");
  if (!vm_sym)
    return out;  // nothing to start from: unchecked
  uint64_t vm = m.u64(load_bias + vm_sym->value);
  if (!vm)
    return out;  // the VM is not up yet
  // The main thread: the first pointer among the VM's first words whose thread.ec looks like an
  // execution context of this layout: a VM stack whose control frames end exactly at its top.
  uint64_t ec = 0, stack = 0, size = 0, cfp = 0;
  for (uint64_t i = 0; i < 64 && !ec; i++) {
    uint64_t th = m.u64(vm + i * 8);
    uint64_t e = th ? m.u64(th + l.thread_ec) : 0;
    if (!e)
      continue;
    uint64_t s = m.u64(e + l.ec_vm_stack), n = m.u64(e + l.ec_vm_stack_size),
             c = m.u64(e + l.ec_cfp);
    if (!s || n < 256 || n > (1u << 26) || c < s || c >= s + n * 8 ||
        (s + n * 8 - c) % l.cfp_size != 0)
      continue;
    ec = e, stack = s, size = n, cfp = c;
  }
  out.main_ec = ec;
  if (!ec) {
    out.outcome = LayoutCheck::Mismatch;
    out.why = "no thread of its VM has an execution context where this layout puts it "
              "(thread.ec at " + std::to_string(l.thread_ec) + ", control frames of " +
              std::to_string(l.cfp_size) + " bytes)";
    return out;
  }
  uint64_t end = stack + size * 8 - 2 * static_cast<uint64_t>(l.cfp_size);
  std::vector<uint8_t> buf(l.cfp_size);
  for (int n = 0; cfp <= end && n < 256; cfp += l.cfp_size, n++) {
    if (!read_process_memory(pid, cfp, buf.data(), buf.size()))
      break;
    uint64_t pc, iseq;
    memcpy(&pc, buf.data() + l.cfp_pc, 8);
    memcpy(&iseq, buf.data() + l.cfp_iseq, 8);
    if (!pc || !iseq)
      continue;
    std::string where = "control frame " + std::to_string(n) + ": ";
    uint64_t flags = m.u64(iseq);
    if ((flags & 0x1f) != RBT_RUBY_T_IMEMO || ((flags >> RBT_RUBY_FL_USHIFT) & 0x0f) != 7) {
      out.outcome = LayoutCheck::Mismatch;
      out.why = where + "its iseq is not an instruction sequence";
      return out;
    }
    uint64_t loc = m.u64(iseq + l.iseq_body) + l.body_location;
    if (auto bad = check_string(m, l, m.u64(loc + l.loc_label)); !bad.empty()) {
      out.outcome = LayoutCheck::Mismatch;
      out.why = where + "its label is " + bad;
      return out;
    }
    uint64_t path = m.u64(loc + l.loc_pathobj);
    if ((m.u64(path) & 0x1f) == RBT_RUBY_T_ARRAY)
      path = m.u64((m.u64(path) & RBT_RUBY_ARRAY_EMBED) ? path + l.rarray_embed
                                                      : m.u64(path + l.rarray_heap_ptr));
    if (auto bad = check_string(m, l, path); !bad.empty()) {
      out.outcome = LayoutCheck::Mismatch;
      out.why = where + "its path is " + bad;
      return out;
    }
    out.ruby_frames++;
  }
  out.outcome = out.ruby_frames ? LayoutCheck::Matches : LayoutCheck::NotYet;
  return out;
}

LayoutCheckResult check_thread_list(pid_t pid, uint64_t vm_ptr, const rbt_ruby_layout &l,
                                    uint64_t main_ec) {
  LayoutCheckResult out;
  Mem m{pid};
  uint64_t vm = m.u64(vm_ptr);
  uint64_t owner = vm && l.vm_main_ractor ? m.u64(vm + l.vm_main_ractor) : vm;
  if (!owner)
    return out;  // the VM (or its main ractor) is not up yet
  uint64_t head = owner + l.threads_head;
  uint64_t node = m.u64(head);
  if (!node)
    return out;
  auto mismatch = [&](std::string why) {
    out.outcome = LayoutCheck::Mismatch;
    out.why = "its threads list (at " + std::to_string(l.threads_head) + " in the " +
              (l.vm_main_ractor ? "main ractor" : "VM") + "): " + why;
    return out;
  };
  bool main_seen = false;
  int threads = 0;
  for (; node != head; node = m.u64(node + 0)) {
    if (!node || ++threads > RBT_RUBY_MAX_THREADS)
      return mismatch(node ? "longer than " + std::to_string(RBT_RUBY_MAX_THREADS) + " threads"
                           : "a node links to nothing");
    uint64_t th = node - l.thread_node;
    uint64_t id = l.thread_nt ? m.u64(m.u64(th + l.thread_nt) + l.thread_native_id)
                              : m.u64(th + l.thread_native_id);
    uint64_t ec = m.u64(th + l.thread_ec);
    if (!ec)
      return mismatch("thread " + std::to_string(threads) + " has no execution context");
    if (!id || (id & 7))
      return mismatch("thread " + std::to_string(threads) + " has no pthread_t");
    main_seen = main_seen || ec == main_ec;
  }
  if (threads == 0 || (main_ec && !main_seen))
    return mismatch("the main thread is not in it");
  out.outcome = LayoutCheck::Matches;
  return out;
}

Result<ThreadLookup> thread_lookup_override() {
  const char *env = getenv("RBT_RUBY_THREAD_LOOKUP");
  if (!env || !*env)
    return ThreadLookup::Auto;
  if (strcmp(env, "list") == 0)
    return ThreadLookup::List;
  if (strcmp(env, "tls") == 0)
    return ThreadLookup::Tls;
  return make_error("RBT_RUBY_THREAD_LOOKUP=" + std::string(env), "is neither 'list' nor 'tls'",
                    "unset it: rstack uses the thread-local ec where the Ruby has one");
}

Result<uint32_t> layout_override() {
  const char *env = getenv("RBT_RUBY_LAYOUT");
  if (!env || !*env)
    return 0u;
  auto code = ruby_version_code(env);
  if (!code || layout_index(*code) < 0)
    return make_error("RBT_RUBY_LAYOUT=" + std::string(env),
                      "names no Ruby layout rbt has (known: " + known_layouts() + ")",
                      "unset it, or give one of those versions");
  return *code;
}

uint64_t process_start_ticks(pid_t pid) {
  if (sysconf(_SC_CLK_TCK) != 1000000000 / static_cast<long>(RBT_RUBY_NS_PER_TICK))
    return 0;  // BPF divides by RBT_RUBY_NS_PER_TICK: do not compare what it cannot match
  FILE *f = fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "re");
  if (!f)
    return 0;
  char buf[1024];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *p = strrchr(buf, ')');  // comm may hold spaces and parentheses
  unsigned long long ticks = 0;
  // After ")": state (field 3) ... starttime (field 22).
  if (!p || sscanf(p + 1,
                   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
                   "%*d %llu",
                   &ticks) != 1)
    return 0;
  return ticks;
}

bool read_process_memory(pid_t pid, uint64_t addr, void *dst, size_t n) {
  // One syscall per read (inspecting a process makes hundreds of small ones); /proc/PID/mem
  // also reads pages the process cannot, so it stays the fallback.
  iovec local{dst, n};
  iovec remote{reinterpret_cast<void *>(addr), n};
  if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n))
    return true;
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

namespace {

// Where the thread-local ruby_current_ec is for BPF (proc.tls_*). NotYet: the dynamic loader
// has not relocated it yet.
InspectOutcome tls_anchor(pid_t pid, const RubyElfFacts &facts, uint64_t load_bias,
                          rbt_ruby_proc &proc, const std::string &what, Error &error) {
  uint64_t got = load_bias + facts.got_vaddr;
  switch (facts.access) {
  case TlsAccess::DtvModule: {
    uint64_t modid = 0;
    if (!read_process_memory(pid, got, &modid, sizeof(modid))) {
      error = make_error(what, "cannot read its GOT at 0x" + std::to_string(got) + ": " +
                                   strerror(errno));
      return InspectOutcome::NotRuby;
    }
    if (modid == 0)  // not relocated yet
      return InspectOutcome::NotYet;
    proc.tls_kind = RBT_RUBY_TLS_DTV;
    proc.tls_modid = modid;
    proc.tls_offset = static_cast<int64_t>(facts.ec_value);
    break;
  }
  case TlsAccess::GotTpOffset:
  case TlsAccess::GotTlsDesc: {
    uint64_t words[2] = {};
    if (!read_process_memory(pid, got, words, sizeof(words)) ||
        (words[0] == 0 && words[1] == 0))
      return InspectOutcome::NotYet;
    proc.tls_kind = RBT_RUBY_TLS_TPOFF;
    proc.tls_offset = static_cast<int64_t>(
        facts.access == TlsAccess::GotTpOffset ? words[0] : words[1]);
    break;
  }
  case TlsAccess::LocalExec: {
    uint64_t align = facts.tls_align;
    uint64_t block = (facts.tls_memsz + align - 1) / align * align;
    proc.tls_kind = RBT_RUBY_TLS_TPOFF;
    proc.tls_offset = static_cast<int64_t>(facts.ec_value) - static_cast<int64_t>(block);
    break;
  }
  }
  return InspectOutcome::Ruby;
}

}  // namespace

std::pair<uint64_t, uint64_t> process_exe_identity(pid_t pid) {
  struct stat st{};
  std::string exe = "/proc/" + std::to_string(pid) + "/exe";
  if (stat(exe.c_str(), &st) != 0)
    return {0, 0};
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

Inspection inspect_process(pid_t pid) {
  Inspection out;
  std::tie(out.exe_dev, out.exe_ino) = process_exe_identity(pid);
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
  p.proc.start = process_start_ticks(pid);
  p.binary = m->path;
  p.elf = elf;
  p.load_bias = load_bias(*elf, *m);
  p.version = facts->version;
  auto code = ruby_version_code(p.version);
  auto forced = layout_override();
  if (!forced) {
    out.error = forced.error();
    out.error.context(what);
    return out;
  }
  if (*forced)
    code = *forced;
  int layout = code ? layout_index(*code) : -1;
  if (layout < 0) {
    out.no_layout = true;
    out.error = make_error(what,
                           "found Ruby '" + p.version + "' in " + p.binary +
                               ", a version rstack has no layout for",
                           "supported: Ruby " + known_layouts() +
                               "; RBT_RUBY_LAYOUT=X.Y tries the layout of one of them "
                               "(checked against the process when it is inspected)");
    return out;
  }
  p.proc.layout = static_cast<uint32_t>(layout);
  const rbt_ruby_layout &l = rbt_ruby_layouts_table[layout];
  auto lookup = thread_lookup_override();
  if (!lookup) {
    out.error = lookup.error();
    out.error.context(what);
    return out;
  }
  if (*lookup == ThreadLookup::Tls && !facts->has_tls_ec) {
    out.error = make_error(what,
                           "Ruby " + p.version + " in " + p.binary +
                               " has no thread-local ruby_current_ec (RBT_RUBY_THREAD_LOOKUP=tls)",
                           "unset RBT_RUBY_THREAD_LOOKUP: its threads list is used instead");
    return out;
  }
  bool by_list = *lookup == ThreadLookup::List || !facts->has_tls_ec;
  if (by_list && (!facts->vm_ptr_value || !l.threads_head)) {
    out.error = make_error(what, "found Ruby " + p.version + " in " + p.binary +
                                     (facts->has_tls_ec ? "" : ", which has no thread-local "
                                                               "ruby_current_ec") +
                                     ", and no ruby_current_vm_ptr symbol to find its threads "
                                     "by");
    return out;
  }
  if (by_list) {
    p.proc.tls_kind = RBT_RUBY_THREAD_LIST;
    p.proc.vm_ptr = p.load_bias + facts->vm_ptr_value;
  } else if (InspectOutcome o = tls_anchor(pid, *facts, p.load_bias, p.proc, what, out.error);
             o != InspectOutcome::Ruby) {
    out.outcome = o;
    return out;
  }
  // Design §1/§3: walk the main thread once with the layout before trusting it.
  LayoutCheckResult check = check_layout(pid, *elf, p.load_bias, l);
  if (by_list && check.outcome != LayoutCheck::Mismatch)
    if (auto list = check_thread_list(pid, p.proc.vm_ptr, l, check.main_ec);
        list.outcome == LayoutCheck::Mismatch)
      check = list;
  if (check.outcome == LayoutCheck::Mismatch) {
    std::string which = *forced ? "the layout for Ruby " + version_text(*code) +
                                      " (RBT_RUBY_LAYOUT)"
                                : "the layout for Ruby " + version_text(*code);
    out.outcome = InspectOutcome::NotYet;
    out.layout_mismatch = true;
    out.error = make_error(what,
                           which + " does not match this process (Ruby '" + p.version + "' in " +
                               p.binary + "): " + check.why,
                           "its Ruby may be built with other options than the distribution's; "
                           "RBT_RUBY_LAYOUT=X.Y picks another layout (known: " +
                               known_layouts() + ")");
    return out;
  }
  p.proc.global_symbols = find_global_symbols(pid, *elf, p.load_bias, *code);
  out.outcome = InspectOutcome::Ruby;
  return out;
}

}  // namespace rbt::runtime::ruby
