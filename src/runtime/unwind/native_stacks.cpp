#include "unwind/native_stacks.h"

#include <bpf/bpf.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "symbols/elf_file.h"
#include "symbols/process_maps.h"
#include "unwind/unwind_table.h"

namespace rbt::runtime {

namespace {

int map_fd(bpf_object *obj, const char *name) {
  const bpf_map *m = bpf_object__find_map_by_name(obj, name);
  return m ? bpf_map__fd(m) : -1;
}

std::string read_text(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes `n` values to an array map from index `first`. One batch update: an element per
// syscall would be a syscall per row (libruby has 69k rows).
bool write_array(int fd, uint32_t first, const void *values, size_t value_size, size_t n) {
  std::vector<uint32_t> keys(n);
  for (size_t i = 0; i < n; i++)
    keys[i] = first + static_cast<uint32_t>(i);
  uint32_t count = static_cast<uint32_t>(n);
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  if (bpf_map_update_batch(fd, keys.data(), values, &count, &opts) == 0)
    return true;
  auto *bytes = static_cast<const char *>(values);
  for (size_t i = 0; i < n; i++)
    if (bpf_map_update_elem(fd, &keys[i], bytes + i * value_size, BPF_ANY) != 0)
      return false;
  return true;
}

}  // namespace

std::unique_ptr<NativeStacks> NativeStacks::open(bpf_object *obj, bool verbose) {
  if (map_fd(obj, "rbt_unwind_procs") < 0)
    return nullptr;
  return std::unique_ptr<NativeStacks>(new NativeStacks(obj, verbose));
}

NativeStacks::NativeStacks(bpf_object *obj, bool verbose)
    : verbose_(verbose), rows_fd_(map_fd(obj, "rbt_unwind_rows")),
      buckets_fd_(map_fd(obj, "rbt_unwind_buckets")),
      procs_fd_(map_fd(obj, "rbt_unwind_procs")), unknown_fd_(map_fd(obj, "rbt_unwind_unknown")),
      stacks_fd_(map_fd(obj, "rbt_native_stacks")), epoch_fd_(map_fd(obj, "rbt_unwind_epoch")) {}

// After every write or delete of a record: walkers that remember a record at an older epoch
// look it up again (native_stack.bpf.c).
void NativeStacks::publish_epoch() {
  uint32_t zero = 0;
  bpf_map_update_elem(epoch_fd_, &zero, &generation_, BPF_ANY);
}

const NativeStacks::Binary &NativeStacks::binary(const std::string &path) {
  struct stat st{};
  std::string key = path;
  if (stat(path.c_str(), &st) == 0)
    key = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  auto [it, inserted] = binaries_.try_emplace(key);
  if (!inserted)
    return it->second;
  auto elf = ElfFile::open(path);
  if (!elf)
    return it->second;
  it->second.interpreter = elf->find("ruby_version") != nullptr;
  for (const LoadSegment &seg : elf->segments()) {
    it->second.segments.emplace_back(seg.offset, seg.vaddr);
    it->second.filesz.push_back(seg.filesz);
  }
  auto table = build_unwind_table(path);
  if (!table) {
    if (verbose_)
      fprintf(stderr, "rbt: nstack: %s: %s\n", table.error().what.c_str(),
              table.error().why.c_str());
    return it->second;
  }
  const auto &rows = table->rows;
  if (rows.size() > (1u << RBT_UNWIND_SEARCH_STEPS)) {  // past what BPF's search covers
    if (verbose_)
      fprintf(stderr, "rbt: nstack: %s has too many unwind rows (%zu)\n", path.c_str(),
              rows.size());
    return it->second;
  }
  if (rows.empty() || next_row_ + rows.size() > RBT_UNWIND_MAX_ROWS) {
    if (verbose_ && !rows.empty())
      fprintf(stderr, "rbt: nstack: no room left for the unwind rows of %s\n", path.c_str());
    return it->second;
  }
  if (!write_array(rows_fd_, next_row_, rows.data(), sizeof(rows[0]), rows.size()))
    return it->second;
  it->second.first_row = next_row_;
  it->second.rows = static_cast<uint32_t>(rows.size());
  next_row_ += static_cast<uint32_t>(rows.size());
  ship_buckets(*table, it->second);
  if (verbose_)
    fprintf(stderr, "rbt: nstack: %zu unwind rows for %s\n", rows.size(), path.c_str());
  return it->second;
}

void NativeStacks::ship_buckets(const UnwindTable &table, Binary &b) {
  UnwindTable::Buckets index = table.buckets();
  size_t n = index.first_row.size();
  if (buckets_fd_ < 0 || n == 0 || next_bucket_ + n > RBT_UNWIND_MAX_BUCKETS)
    return;  // the walker searches all of the binary's rows instead
  if (!write_array(buckets_fd_, next_bucket_, index.first_row.data(), sizeof(uint32_t), n))
    return;
  b.first_bucket = next_bucket_;
  b.buckets = static_cast<uint32_t>(n);
  b.bucket_base = index.base;
  next_bucket_ += static_cast<uint32_t>(n);
}

void NativeStacks::add_process(pid_t pid, bool anew) {
  if (runs_own_image(pid))
    return;  // reading rbt's CFI would only delay the rows of the program it is about to exec
  std::string text = read_text("/proc/" + std::to_string(pid) + "/maps");
  if (text.empty())
    return;
  auto [last, inserted] = last_maps_.try_emplace(pid);
  if (!inserted && !anew && last->second.text == text)
    return;  // nothing new mapped: the unknown pc is not in a file (vdso, JIT code)
  last->second.text = text;
  auto proc = std::make_unique<rbt_unwind_proc>();
  for (const Mapping &m : parse_process_maps(text)) {
    if (proc->count >= RBT_UNWIND_MAX_MAPPINGS)
      break;
    std::string path = "/proc/" + std::to_string(pid) + "/root" + m.path;
    if (!is_elf_file(path))
      continue;
    const Binary &b = binary(path);
    if (!b.rows)
      continue;
    // The mapping's file offset → the binary's vaddr, through the segment holding it.
    std::optional<uint64_t> vaddr;
    for (size_t i = 0; i < b.segments.size() && !vaddr; i++)
      if (m.offset >= b.segments[i].first && m.offset < b.segments[i].first + b.filesz[i])
        vaddr = m.offset - b.segments[i].first + b.segments[i].second;
    if (!vaddr)
      continue;
    proc->maps[proc->count++] = {m.start, m.end, m.start - *vaddr, b.first_row, b.rows,
                                 b.interpreter, b.first_bucket, b.buckets, b.bucket_base};
  }
  std::sort(proc->maps, proc->maps + proc->count,
            [](const rbt_unwind_mapping &a, const rbt_unwind_mapping &b) { return a.start < b.start; });
  std::vector<rbt_unwind_mapping> mappings(proc->maps, proc->maps + proc->count);
  auto same = [](const rbt_unwind_mapping &a, const rbt_unwind_mapping &b) {
    return memcmp(&a, &b, sizeof(a)) == 0;
  };
  if (!inserted && !anew &&
      std::equal(mappings.begin(), mappings.end(), last->second.mappings.begin(),
                 last->second.mappings.end(), same))
    return;  // only mappings without code rbt unwinds changed
  last->second.mappings = std::move(mappings);
  proc->generation = ++generation_;
  uint32_t key = static_cast<uint32_t>(pid);
  bpf_map_update_elem(procs_fd_, &key, proc.get(), BPF_ANY);
  publish_epoch();
  if (on_remapped)
    on_remapped(pid);
}

void NativeStacks::forget_exited() {
  for (auto it = last_maps_.begin(); it != last_maps_.end();) {
    if (kill(it->first, 0) != 0 && errno == ESRCH) {
      uint32_t key = static_cast<uint32_t>(it->first);
      bpf_map_delete_elem(procs_fd_, &key);
      ++generation_;
      publish_epoch();
      it = last_maps_.erase(it);
    } else {
      ++it;
    }
  }
}

void NativeStacks::poll() {
  // Records of exited processes go, or a system-wide script fills rbt_unwind_procs (1024
  // processes): every 10th poll, about every 100 ms.
  if (++polls_ % 10 == 0)
    forget_exited();
  std::vector<std::pair<uint32_t, bool>> seen;
  uint32_t key, next;
  void *prev = nullptr;
  while (bpf_map_get_next_key(unknown_fd_, prev, &next) == 0) {
    uint64_t when = 0;
    bpf_map_lookup_elem(unknown_fd_, &next, &when);
    seen.emplace_back(next, when == RBT_UNWIND_ASK_ANEW);
    key = next;
    prev = &key;
  }
  for (auto [pid, anew] : seen) {
    add_process(static_cast<pid_t>(pid), anew);
    // Only now: samples taken while it was read would have asked again.
    bpf_map_delete_elem(unknown_fd_, &pid);
  }
}

std::optional<NativeStack> NativeStacks::stack(uint64_t id) const {
  if (id == 0)
    return std::nullopt;
  auto raw = std::make_unique<rbt_native_stack>();
  if (bpf_map_lookup_elem(stacks_fd_, &id, raw.get()) != 0)
    return std::nullopt;
  NativeStack s;
  s.pid = static_cast<pid_t>(raw->tgid);
  s.stop = raw->stop;
  s.functions = raw->functions != 0;
  uint32_t n = std::min<uint32_t>(raw->count, RBT_NATIVE_MAX_DEPTH);
  s.pcs.assign(raw->pcs, raw->pcs + n);
  return s;
}

}  // namespace rbt::runtime
