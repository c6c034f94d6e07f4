// `rbt -lv 'struct task_struct'`: a kernel struct's definition from the running kernel's BTF.

#include <bpf/btf.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <memory>

#include "listing.h"

namespace rbt::runtime {

namespace {
void print_to(void *ctx, const char *fmt, va_list args) {
  vfprintf(static_cast<std::FILE *>(ctx), fmt, args);
}
}  // namespace

Status list_kernel_struct(const std::string &spelled, std::FILE *out) {
  bool is_union = spelled.rfind("union ", 0) == 0;
  std::string name = spelled.substr(spelled.find(' ') + 1);
  std::unique_ptr<btf, void (*)(btf *)> kernel(btf__load_vmlinux_btf(), btf__free);
  if (!kernel) {
    int err = errno;
    return make_error("listing '" + spelled + "'", "the kernel's BTF cannot be read: " +
                                                        std::string(strerror(err)),
                      "this needs /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF)", err);
  }
  int id = btf__find_by_name_kind(kernel.get(), name.c_str(), is_union ? BTF_KIND_UNION
                                                                        : BTF_KIND_STRUCT);
  if (id < 0)
    return make_error("listing '" + spelled + "'", "the kernel's BTF has no " + spelled,
                      "struct names are as in the kernel's sources: struct task_struct", ENOENT);
  std::unique_ptr<btf_dump, void (*)(btf_dump *)> dump(
      btf_dump__new(kernel.get(), print_to, out, nullptr), btf_dump__free);
  if (!dump)
    return make_error("listing '" + spelled + "'", strerror(errno), {}, errno);
  fprintf(out, "vmlinux: %s {\n", spelled.c_str());
  const btf_type *t = btf__type_by_id(kernel.get(), static_cast<uint32_t>(id));
  const btf_member *m = btf_members(t);
  for (uint16_t i = 0; i < btf_vlen(t); i++, m++) {
    LIBBPF_OPTS(btf_dump_emit_type_decl_opts, opts);
    opts.field_name = btf__name_by_offset(kernel.get(), m->name_off);
    opts.indent_level = 1;
    fputc('\t', out);
    btf_dump__emit_type_decl(dump.get(), m->type, &opts);
    if (uint32_t bits = btf_member_bitfield_size(t, i))
      fprintf(out, ":%u", bits);
    fputs(";\n", out);
  }
  fputs("};\n", out);
  return Ok{};
}

}  // namespace rbt::runtime
