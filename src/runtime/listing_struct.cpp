// `rbt -lv 'struct task_struct'`: a kernel struct's definition from the running kernel's BTF;
// `rbt -lv 'rawtracepoint:EVENT'`: the event's arguments, from the same.

#include <bpf/btf.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "listing.h"

namespace rbt::runtime {

namespace {
void print_to(void *ctx, const char *fmt, va_list args) {
  vfprintf(static_cast<std::FILE *>(ctx), fmt, args);
}

void append_to(void *ctx, const char *fmt, va_list args) {
  char buf[512];
  int n = vsnprintf(buf, sizeof(buf), fmt, args);
  if (n > 0)
    static_cast<std::string *>(ctx)->append(buf, std::min<size_t>(n, sizeof(buf) - 1));
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

std::vector<std::string> raw_tracepoint_args(const std::string &event) {
  // Loaded once: `-lv 'rawtracepoint:*'` asks for every event.
  static std::unique_ptr<btf, void (*)(btf *)> kernel(btf__load_vmlinux_btf(), btf__free);
  std::vector<std::string> args;
  if (!kernel)
    return args;
  // Each event's btf_trace_EVENT typedef gives its arguments' types; a __bpf_trace_EVENT
  // function (an event that is its own class) gives their names too. One pass over the types
  // finds them all (a lookup by name is a scan of every type).
  static std::unordered_map<std::string, uint32_t> protos = [] {
    std::unordered_map<std::string, uint32_t> found, named;
    for (uint32_t i = 1; kernel && i < btf__type_cnt(kernel.get()); i++) {
      const btf_type *t = btf__type_by_id(kernel.get(), i);
      if (!btf_is_func(t) && !btf_is_typedef(t))
        continue;
      const char *name = btf__name_by_offset(kernel.get(), t->name_off);
      const char *prefix = btf_is_func(t) ? "__bpf_trace_" : "btf_trace_";
      if (name && strncmp(name, prefix, strlen(prefix)) == 0)
        (btf_is_func(t) ? named : found)[name + strlen(prefix)] = i;
    }
    for (auto &[event, id] : named)
      if (found.count(event))
        found[event] = id;
    return found;
  }();
  auto it = protos.find(event);
  int id = it != protos.end() ? static_cast<int>(it->second) : -1;
  const btf_type *t = id > 0 ? btf__type_by_id(kernel.get(), static_cast<uint32_t>(id)) : nullptr;
  while (t && (btf_is_func(t) || btf_is_typedef(t) || btf_is_ptr(t)))
    t = btf__type_by_id(kernel.get(), t->type);
  if (!t || !btf_is_func_proto(t))
    return args;
  // One btf_dump for all events (making one sizes it by every type of the kernel's BTF),
  // writing into `text`.
  static std::string text;
  static std::unique_ptr<btf_dump, void (*)(btf_dump *)> dump(
      btf_dump__new(kernel.get(), append_to, &text, nullptr), btf_dump__free);
  const btf_param *p = btf_params(t);
  for (uint16_t i = 1; dump && i < btf_vlen(t); i++) {  // [0] is the tracepoint's void *__data
    LIBBPF_OPTS(btf_dump_emit_type_decl_opts, opts);
    opts.field_name = btf__name_by_offset(kernel.get(), p[i].name_off);
    text.clear();
    btf_dump__emit_type_decl(dump.get(), p[i].type, &opts);
    args.push_back(text);
  }
  return args;
}

}  // namespace rbt::runtime
