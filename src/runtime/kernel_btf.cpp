#include "kernel_btf.h"

#include <fcntl.h>
#include <linux/btf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rbt::runtime {

namespace {

// Bytes after the common 12-byte record that a type of `kind` with `vlen` entries carries
// (the BTF format, linux/btf.h); -1 for a kind this build does not know.
long trailing_bytes(__u32 kind, __u32 vlen) {
  switch (kind) {
    case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG:
      return 4;
    case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
    case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC: case BTF_KIND_FLOAT:
    case BTF_KIND_TYPE_TAG:
      return 0;
    case BTF_KIND_ARRAY:
      return sizeof(struct btf_array);
    case BTF_KIND_STRUCT: case BTF_KIND_UNION:
      return static_cast<long>(vlen * sizeof(struct btf_member));
    case BTF_KIND_ENUM:
      return static_cast<long>(vlen * sizeof(struct btf_enum));
    case BTF_KIND_FUNC_PROTO:
      return static_cast<long>(vlen * sizeof(struct btf_param));
    case BTF_KIND_DATASEC:
      return static_cast<long>(vlen * sizeof(struct btf_var_secinfo));
    case BTF_KIND_ENUM64:
      return static_cast<long>(vlen * sizeof(struct btf_enum64));
    default:
      return -1;
  }
}

}  // namespace

Result<std::shared_ptr<const KernelBtf>> KernelBtf::open(const std::string &path) {
  std::shared_ptr<KernelBtf> kb(new KernelBtf());
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return make_error("reading the kernel's BTF", path + ": " + strerror(errno),
                      "rbt needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
  struct stat st {};
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    void *p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      kb->data_ = static_cast<const char *>(p);
      kb->size_ = static_cast<size_t>(st.st_size);
      kb->mapped_ = true;
    }
  }
  if (!kb->mapped_) {  // older kernels do not let it be mapped: read it
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
      kb->copy_.append(buf, static_cast<size_t>(n));
    int err = errno;
    if (n < 0) {
      ::close(fd);
      return make_error("reading the kernel's BTF", path + ": " + strerror(err));
    }
    kb->data_ = kb->copy_.data();
    kb->size_ = kb->copy_.size();
  }
  ::close(fd);
  if (auto indexed = kb->index(); !indexed)
    return indexed.error();
  return std::shared_ptr<const KernelBtf>(std::move(kb));
}

KernelBtf::~KernelBtf() {
  if (mapped_)
    munmap(const_cast<char *>(data_), size_);
}

Status KernelBtf::index() {
  auto bad = [](const std::string &why) { return make_error("reading the kernel's BTF", why); };
  btf_header h{};
  if (size_ < sizeof(h))
    return bad("the file is shorter than a BTF header");
  memcpy(&h, data_, sizeof(h));
  if (h.magic != BTF_MAGIC)
    return bad("not BTF of this machine's byte order");
  auto fits = [&](__u64 off, __u64 len) { return h.hdr_len + off + len <= size_; };
  if (!fits(h.type_off, h.type_len) || !fits(h.str_off, h.str_len) || h.str_len == 0)
    return bad("a section runs past the end of the file");
  types_ = data_ + h.hdr_len + h.type_off;
  strings_ = data_ + h.hdr_len + h.str_off;
  types_len_ = h.type_len;
  strings_len_ = h.str_len;
  if (strings_[strings_len_ - 1] != '\0')
    return bad("the string section is not terminated");
  offsets_.reserve(h.type_len / 16);
  for (__u32 off = 0; off < types_len_;) {
    if (types_len_ - off < sizeof(btf_type))
      return bad("a type record is cut short");
    const btf_type *t = reinterpret_cast<const btf_type *>(types_ + off);
    long extra = trailing_bytes(btf_kind(t), btf_vlen(t));
    if (extra < 0)
      return bad("unknown type kind " + std::to_string(btf_kind(t)));
    __u64 next = off + sizeof(btf_type) + static_cast<__u64>(extra);
    if (next > types_len_)
      return bad("a type record is cut short");
    offsets_.push_back(off);
    off = static_cast<__u32>(next);
  }
  return Ok{};
}

const btf_type *KernelBtf::type(__u32 id) const {
  if (id == 0 || id > offsets_.size())
    return nullptr;
  return reinterpret_cast<const btf_type *>(types_ + offsets_[id - 1]);
}

const char *KernelBtf::name(__u32 offset) const {
  return offset < strings_len_ ? strings_ + offset : "";
}

int KernelBtf::find(const std::string &wanted, int kind) const {
  for (__u32 id = 1; id <= offsets_.size(); id++) {
    const btf_type *t = type(id);
    if (static_cast<int>(btf_kind(t)) == kind && wanted == name(t->name_off))
      return static_cast<int>(id);
  }
  return -1;
}

int KernelBtf::resolve(__u32 id) const {
  for (int depth = 0; depth < 32; depth++) {
    const btf_type *t = type(id);
    if (!t)
      return id == 0 ? 0 : -1;
    switch (btf_kind(t)) {
      case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE: case BTF_KIND_CONST:
      case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG:
        id = t->type;
        continue;
      default:
        return static_cast<int>(id);
    }
  }
  return -1;
}

}  // namespace rbt::runtime
