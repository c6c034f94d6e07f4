#pragma once
// Kernel struct layouts from the running kernel's BTF (/sys/kernel/btf/vmlinux), for
// `curtask->field` and casts to kernel struct pointers.

#include <map>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "record_layout.h"

struct btf;

namespace rbt::runtime {

class KernelTypes {
public:
  KernelTypes() = default;
  ~KernelTypes();
  KernelTypes(const KernelTypes &) = delete;
  KernelTypes &operator=(const KernelTypes &) = delete;

  // The struct (or union) named `name`, or null when the kernel has no BTF or no such type.
  // Anonymous struct/union members are flattened, as C lets you name their fields directly.
  const RecordLayout *find_struct(const std::string &name);
  // The value of an enumerator of a kernel enum (TCP_SYN_SENT, SKB_DROP_REASON_...), as
  // bpftrace resolves such names from BTF.
  std::optional<int64_t> find_enum_value(const std::string &name);
  // The type of the kernel variable `name` (its BTF VAR: per-CPU variables), for
  // percpu_kaddr().
  std::optional<FieldLayout> find_var(const std::string &name);
  // The enumerators of the kernel's `enum name`, in order; empty when BTF has no such enum.
  std::vector<std::pair<std::string, int64_t>> find_enum(const std::string &name);
  // `args` of rawtracepoint:event: the parameters of the kernel's __bpf_trace_<event> (after its
  // `void *__data`), each a u64 of the context at 8 * its position, named as the kernel names
  // it; an integer is read as the whole u64 (the context allows no narrower loads). Null when
  // the kernel's BTF has no such tracepoint.
  const RecordLayout *raw_tracepoint_args(const std::string &event);

private:
  bool load();
  btf *btf_ = nullptr;
  bool tried_ = false;
  std::map<std::string, std::unique_ptr<RecordLayout>> cache_;
  std::map<std::string, int64_t> enum_values_;
};

}  // namespace rbt::runtime
