#include "stacks.h"

#include <bpf/bpf.h>

#include "unwind/unwind_table.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace rbt::runtime {

StackPrinter::StackPrinter(const Manifest &manifest, bpf_object *obj)
    : manifest_(manifest), obj_(obj) {}

void StackPrinter::capture_process(pid_t pid) {
  auto maps = read_process_maps(pid);
  if (maps.empty())
    return;
  // Mappings seen before and not overlapped by today's stay: stacks taken before an exec or a
  // dlclose still name their frames (today's mappings come first, so they win).
  auto &known = processes_[pid];
  for (const Mapping &old : known) {
    bool replaced = false;
    for (const Mapping &m : maps)
      replaced |= old.start < m.end && m.start < old.end;
    if (!replaced)
      maps.push_back(old);
  }
  known = std::move(maps);
  for (auto &m : known)
    elf(m.path, pid);  // open now: the file may be gone (or its /proc/PID/root) later
}

const ElfFile *StackPrinter::elf(const std::string &path, pid_t pid) {
  auto [it, inserted] = elves_.try_emplace(path);
  if (inserted) {
    auto f = ElfFile::open("/proc/" + std::to_string(pid) + "/root" + path);
    if (!f)
      f = ElfFile::open(path);
    if (f)
      it->second = std::make_unique<ElfFile>(std::move(*f));
  }
  return it->second.get();
}

namespace {
bool mapped(const std::vector<Mapping> &maps, uint64_t addr) {
  for (const Mapping &m : maps)
    if (addr >= m.start && addr < m.end)
      return true;
  return false;
}

std::string hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

std::string StackPrinter::user_frame(pid_t pid, uint64_t addr, StackMode mode) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) {
    capture_process(pid);  // still alive, perhaps
    it = processes_.find(pid);
  }
  std::string sym, module;
  // An address outside the captured map: the process has changed its mappings since (it was
  // captured before its exec, or it loaded a library). Capture it again, 20 ms apart at first;
  // each capture that still does not map the address doubles the wait (up to 2 s), since a
  // stack walked without frame pointers yields addresses no capture will ever map.
  if (it != processes_.end() && !mapped(it->second, addr)) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    Recapture &r = recaptured_[pid];
    if (r.at == 0 || now - r.at > r.wait_ns) {
      r.at = now;
      capture_process(pid);
      it = processes_.find(pid);
      bool resolved = it != processes_.end() && mapped(it->second, addr);
      r.wait_ns = resolved ? kFirstWait : std::min<int64_t>(r.wait_ns * 2, kLongestWait);
    }
  }
  if (it != processes_.end()) {
    for (const Mapping &m : it->second) {
      if (addr < m.start || addr >= m.end)
        continue;
      module = m.path;
      if (const ElfFile *f = elf(m.path, pid))
        if (auto vaddr = f->offset_to_vaddr(addr - m.start + m.offset))
          if (auto s = f->symbolize(*vaddr))
            sym = *s;
      break;
    }
  }
  if (mode == StackMode::BuildId && !module.empty()) {
    // As the kernel reports a build-id stack: the file's GNU build id, the offset in the file.
    const ElfFile *f = elf(module, pid);
    if (f && !f->build_id().empty())
      for (const Mapping &m : it->second)
        if (addr >= m.start && addr < m.end) {
          char buf[32];
          snprintf(buf, sizeof(buf), " 0x%llx", static_cast<unsigned long long>(addr - m.start + m.offset));
          return f->build_id() + buf;
        }
  }
  if (mode == StackMode::Perf) {
    char buf[32];
    snprintf(buf, sizeof(buf), "\t%llx ", static_cast<unsigned long long>(addr));
    return buf + (sym.empty() ? "[unknown]" : sym) + " (" + (module.empty() ? "[unknown]" : module) + ")";
  }
  return sym.empty() ? hex(addr) : sym;
}

std::optional<uint64_t> StackPrinter::cfi_function(const std::string &path, pid_t pid,
                                                   uint64_t vaddr) {
  auto [it, inserted] = cfi_functions_.try_emplace(path);
  if (inserted) {
    it->second = cfi_function_starts("/proc/" + std::to_string(pid) + "/root" + path);
    if (it->second.empty())
      it->second = cfi_function_starts(path);
  }
  auto up = std::upper_bound(it->second.begin(), it->second.end(), vaddr);
  if (up == it->second.begin())
    return std::nullopt;
  return *(up - 1);
}

StackPrinter::UserFunction StackPrinter::user_function(pid_t pid, uint64_t addr) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) {
    capture_process(pid);
    it = processes_.find(pid);
  }
  UserFunction out;
  out.text = hex(addr);
  if (it == processes_.end())
    return out;
  for (const Mapping &m : it->second) {
    if (addr < m.start || addr >= m.end)
      continue;
    out.module = m.path;
    const ElfFile *f = elf(m.path, pid);
    auto vaddr = f ? f->offset_to_vaddr(addr - m.start + m.offset) : std::nullopt;
    const ElfSymbol *s = vaddr ? f->symbol_at(*vaddr) : nullptr;
    if (s) {
      out.function = addr - (*vaddr - s->value);
      out.text = s->name + "+" + std::to_string(*vaddr - s->value);
    } else {
      // A stripped binary's static function: where it is, and where it starts by its CFI (a
      // C method's function is found by that address in the mixed stack).
      if (vaddr)
        if (auto start = cfi_function(m.path, pid, *vaddr))
          out.function = addr - (*vaddr - *start);
      char buf[32];
      snprintf(buf, sizeof(buf), "+0x%llx",
               static_cast<unsigned long long>(vaddr ? *vaddr : addr - m.start + m.offset));
      out.text = m.path.substr(m.path.rfind('/') + 1) + buf;
    }
    break;
  }
  return out;
}

std::string StackPrinter::symbol(bool user, uint64_t addr, pid_t pid) {
  if (user)
    return user_frame(pid, addr, StackMode::Bpftrace);
  auto sym = kernel_.symbolize(addr);
  return sym ? *sym : hex(addr);
}

std::vector<std::string> StackPrinter::frames(const Type &type, const uint8_t *value) {
  std::vector<std::string> out;
  uint64_t pid;
  memcpy(&pid, value + 8, 8);
  bool user = type.stack_kind == StackKind::User;
  for (uint64_t addr : addresses(type, value)) {
    if (type.stack_mode == StackMode::Raw) {
      char buf[24];
      snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(addr));
      out.push_back(buf);
    } else if (user) {
      out.push_back(user_frame(static_cast<pid_t>(pid), addr, type.stack_mode));
    } else {
      auto sym = kernel_.symbolize(addr);
      std::string s = sym ? *sym : hex(addr);
      if (type.stack_mode == StackMode::Perf) {
        char buf[32];
        snprintf(buf, sizeof(buf), "\t%llx ", static_cast<unsigned long long>(addr));
        s = buf + s + " ([kernel.kallsyms])";
      }
      out.push_back(s);
    }
  }
  return out;
}

std::vector<uint64_t> StackPrinter::addresses(const Type &type, const uint8_t *value) {
  int64_t id;
  memcpy(&id, value, 8);
  if (id < 0)
    return {};  // the kernel could not take this stack (e.g. -EFAULT)
  bool user = type.stack_kind == StackKind::User;
  const StackMapDesc *desc = nullptr;
  for (auto &s : manifest_.stack_maps)
    if (s.user == user && s.depth == type.stack_depth)
      desc = &s;
  if (!desc)
    return {};
  const bpf_map *map = bpf_object__find_map_by_name(obj_, desc->bpf_name.c_str());
  std::vector<uint64_t> addrs(desc->depth);
  uint32_t key = static_cast<uint32_t>(id);
  if (!map || bpf_map_lookup_elem(bpf_map__fd(map), &key, addrs.data()) != 0)
    return {};
  size_t n = 0;
  while (n < addrs.size() && addrs[n])
    n++;
  addrs.resize(n);
  return addrs;
}

namespace {
// "vfs_read+5" → "vfs_read": a profile's frame is the function, wherever in it the sample was.
std::string without_offset(std::string sym) {
  size_t plus = sym.rfind('+');
  if (plus != std::string::npos && plus > 0)
    sym.resize(plus);
  return sym;
}
}  // namespace

profile::Frame StackPrinter::user_record(pid_t pid, uint64_t addr) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) {
    capture_process(pid);
    it = processes_.find(pid);
  }
  profile::Frame f{profile::FrameKind::Native, "", "", 0, ""};
  if (it != processes_.end()) {
    for (const Mapping &m : it->second) {
      if (addr < m.start || addr >= m.end)
        continue;
      f.module = m.path;
      if (const ElfFile *e = elf(m.path, pid))
        if (auto vaddr = e->offset_to_vaddr(addr - m.start + m.offset))
          if (auto s = e->symbolize(*vaddr))
            f.name = without_offset(*s);
      break;
    }
  }
  if (f.name.empty())
    f.name = hex(addr);
  return f;
}

std::vector<profile::Frame> StackPrinter::frame_records(const Type &type, const uint8_t *value) {
  std::vector<profile::Frame> out;
  uint64_t pid;
  memcpy(&pid, value + 8, 8);
  bool user = type.stack_kind == StackKind::User;
  for (uint64_t addr : addresses(type, value)) {
    if (user) {
      out.push_back(user_record(static_cast<pid_t>(pid), addr));
    } else {
      auto sym = kernel_.symbolize(addr);
      out.push_back(profile::Frame{profile::FrameKind::Kernel,
                                   sym ? without_offset(*sym) : hex(addr), "", 0, "[kernel]"});
    }
  }
  return out;
}

}  // namespace rbt::runtime
