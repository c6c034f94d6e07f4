#pragma once
// Kernel struct layouts from the running kernel's BTF (/sys/kernel/btf/vmlinux), for
// `curtask->field` and casts to kernel struct pointers.

#include <map>
#include <memory>
#include <string>

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

private:
  bool load();
  btf *btf_ = nullptr;
  bool tried_ = false;
  std::map<std::string, std::unique_ptr<RecordLayout>> cache_;
};

}  // namespace rbt::runtime
