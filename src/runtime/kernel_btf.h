#pragma once
// The running kernel's BTF (/sys/kernel/btf/vmlinux), read in place. libbpf's
// btf__load_vmlinux_btf() reads the 5.5 MB file through sysfs 4 KiB at a time (25-35 ms here)
// and then parses and checks all of its 127k types (30-40 ms), which was a quarter of a cold
// start of every tool using rstack; the minimal BTF for CO-RE (core_btf.h) needs a handful of
// structs out of it. This maps the file (kernels since 6.x allow it; older ones are read) and
// indexes the types in one pass, checking only what it reads.

#include <bpf/btf.h>

#include <memory>
#include <string>
#include <vector>

#include "result.h"

namespace rbt::runtime {

class KernelBtf {
 public:
  // The running kernel's BTF, or an error saying why there is none.
  static Result<std::shared_ptr<const KernelBtf>> open(
      const std::string &path = "/sys/kernel/btf/vmlinux");
  ~KernelBtf();
  KernelBtf(const KernelBtf &) = delete;
  KernelBtf &operator=(const KernelBtf &) = delete;

  // The type with `id`, or nullptr (id 0 is void and has no record).
  const btf_type *type(__u32 id) const;
  // The string at `offset` of the string section; "" when out of range.
  const char *name(__u32 offset) const;
  // The id of the first type of `kind` named `name`, or -1.
  int find(const std::string &name, int kind) const;
  // `id` with typedefs and qualifiers (const, volatile, restrict, type tags) stripped: 0 for
  // void, -1 when the chain is broken or too long.
  int resolve(__u32 id) const;
  __u32 count() const { return static_cast<__u32>(offsets_.size()); }

  // The raw bytes (for btf__new when a caller needs all of libbpf's BTF API).
  const void *data() const { return data_; }
  size_t size() const { return size_; }

 private:
  KernelBtf() = default;
  Status index();

  const char *data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::string copy_;  // the bytes when the file could not be mapped
  const char *types_ = nullptr;
  const char *strings_ = nullptr;
  __u32 types_len_ = 0, strings_len_ = 0;
  std::vector<__u32> offsets_;  // offsets_[id - 1]: where type id's record starts in types_
};

}  // namespace rbt::runtime
