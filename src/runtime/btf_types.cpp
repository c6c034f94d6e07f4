#include "btf_types.h"

#include "kernel_btf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cstdlib>
#include <cstring>

namespace rbt::runtime {

namespace {

constexpr const char *kAnonymousPrefix = "(anonymous)#";

// Follows typedefs and qualifiers to the type that gives a member its shape.
const btf_type *resolve(const btf *b, uint32_t &id) {
  const btf_type *t = btf__type_by_id(b, id);
  while (t && (btf_is_typedef(t) || btf_is_const(t) || btf_is_volatile(t) || btf_is_restrict(t) ||
               btf_is_type_tag(t) || btf_is_decl_tag(t))) {
    id = t->type;
    t = btf__type_by_id(b, id);
  }
  return t;
}

FieldLayout describe(const btf *b, uint32_t type_id, int depth);

void add_members(const btf *b, const btf_type *t, uint32_t base_offset, RecordLayout &out) {
  const btf_member *m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); i++, m++) {
    uint32_t bit_off = btf_member_bit_offset(t, i);
    uint32_t bit_size = btf_member_bitfield_size(t, i);
    const char *name = btf__name_by_offset(b, m->name_off);
    uint32_t id = m->type;
    const btf_type *mt = resolve(b, id);
    if ((!name || !*name) && mt && (btf_is_struct(mt) || btf_is_union(mt))) {
      add_members(b, mt, base_offset + bit_off / 8, out);  // anonymous: flatten
      continue;
    }
    FieldLayout f = describe(b, m->type, 0);
    f.name = name ? name : "";
    f.offset = base_offset + bit_off / 8;
    if (bit_size) {
      f.bit_offset = bit_off % 8;
      f.bit_size = bit_size;
    }
    out.fields.push_back(std::move(f));
  }
}

FieldLayout describe(const btf *b, uint32_t type_id, int depth) {
  FieldLayout f;
  uint32_t id = type_id;
  const btf_type *t = resolve(b, id);
  if (!t)
    return f;
  const char *name = btf__name_by_offset(b, t->name_off);
  f.type_name = name ? name : "";
  if (btf_is_int(t) || btf_is_enum(t) || btf_is_enum64(t)) {
    f.kind = FieldLayout::Kind::Int;
    f.size = t->size;
    f.is_signed = btf_is_int(t) ? (btf_int_encoding(t) & BTF_INT_SIGNED) != 0 : false;
  } else if (btf_is_float(t)) {
    f.kind = FieldLayout::Kind::Float;
    f.size = t->size;
  } else if (btf_is_ptr(t)) {
    f.kind = FieldLayout::Kind::Pointer;
    f.size = 8;
    if (depth < 1)
      f.pointee = std::make_shared<FieldLayout>(describe(b, t->type, depth + 1));
  } else if (btf_is_struct(t) || btf_is_union(t)) {
    f.kind = FieldLayout::Kind::Record;
    f.size = t->size;
    // A member of an unnamed struct or union type (`union { ... } in6_u;`): named by its BTF id
    // so find_struct can lay it out.
    if (f.type_name.empty())
      f.type_name = kAnonymousPrefix + std::to_string(id);
  } else if (btf_is_array(t)) {
    const struct btf_array *a = btf_array(t);
    uint32_t elem = a->type;
    const btf_type *et = resolve(b, elem);
    int64_t elem_size = btf__resolve_size(b, a->type);
    bool chars = et && btf_is_int(et) && et->size == 1;
    f.kind = chars ? FieldLayout::Kind::CharArray : FieldLayout::Kind::Array;
    f.count = a->nelems;
    f.size = static_cast<uint32_t>(elem_size > 0 ? elem_size * a->nelems : 0);
    // Arrays of arrays, of pointers and of structs say what their element is (`int y[2][2]`,
    // `struct rlimit rlim[16]`); an array of integers is described by its size alone.
    if (et && (btf_is_array(et) || btf_is_ptr(et) || btf_is_struct(et) || btf_is_union(et)))
      f.element = std::make_shared<FieldLayout>(describe(b, elem, depth));
  }
  return f;
}

}  // namespace

KernelTypes::~KernelTypes() { btf__free(btf_); }

bool KernelTypes::load() {
  if (!tried_) {
    tried_ = true;
    // From the mapped file (kernel_btf.h): libbpf's own loader reads sysfs 4 KiB at a time.
    if (auto kernel = KernelBtf::open())
      btf_ = btf__new((*kernel)->data(), (*kernel)->size());
    if (libbpf_get_error(btf_))
      btf_ = nullptr;
  }
  return btf_ != nullptr;
}

const RecordLayout *KernelTypes::find_struct(const std::string &name) {
  if (auto it = cache_.find(name); it != cache_.end())
    return it->second.get();
  if (!load())
    return nullptr;
  int id = -1;
  if (name.rfind(kAnonymousPrefix, 0) == 0)
    id = std::atoi(name.c_str() + strlen(kAnonymousPrefix));
  else
    id = btf__find_by_name_kind(btf_, name.c_str(), BTF_KIND_STRUCT);
  if (id < 0)
    id = btf__find_by_name_kind(btf_, name.c_str(), BTF_KIND_UNION);
  if (id < 0)
    return nullptr;
  const btf_type *t = btf__type_by_id(btf_, id);
  if (!t || !(btf_is_struct(t) || btf_is_union(t)))
    return nullptr;
  auto layout = std::make_unique<RecordLayout>();
  layout->name = name;
  layout->size = t->size;
  add_members(btf_, t, 0, *layout);
  return (cache_[name] = std::move(layout)).get();
}

const RecordLayout *KernelTypes::raw_tracepoint_args(const std::string &event) {
  std::string name = "rawtracepoint:" + event;
  if (auto it = cache_.find(name); it != cache_.end())
    return it->second.get();
  if (!load())
    return nullptr;
  // The kernel's __bpf_trace_<event>(void *__data, params...) names the parameters (the
  // prototype of the btf_trace_<event> typedef has their types only).
  int id = btf__find_by_name_kind(btf_, ("__bpf_trace_" + event).c_str(), BTF_KIND_FUNC);
  const btf_type *t = id > 0 ? btf__type_by_id(btf_, static_cast<uint32_t>(id)) : nullptr;
  t = t ? btf__type_by_id(btf_, t->type) : nullptr;
  if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 1)
    return nullptr;
  auto layout = std::make_unique<RecordLayout>();
  layout->name = name;
  const btf_param *p = btf_params(t);
  for (int i = 1; i < btf_vlen(t); i++) {
    FieldLayout f = describe(btf_, p[i].type, 0);
    const char *pname = btf__name_by_offset(btf_, p[i].name_off);
    f.name = pname ? pname : "";
    f.offset = 8 * static_cast<uint32_t>(i - 1);
    if (f.kind == FieldLayout::Kind::Int)
      f.size = 8;
    layout->fields.push_back(std::move(f));
  }
  layout->size = 8 * static_cast<uint32_t>(btf_vlen(t) - 1);
  return (cache_[name] = std::move(layout)).get();
}

std::optional<FieldLayout> KernelTypes::find_var(const std::string &name) {
  if (!load())
    return std::nullopt;
  int id = btf__find_by_name_kind(btf_, name.c_str(), BTF_KIND_VAR);
  const btf_type *t = id > 0 ? btf__type_by_id(btf_, static_cast<uint32_t>(id)) : nullptr;
  if (!t)
    return std::nullopt;
  FieldLayout f = describe(btf_, t->type, 0);
  f.name = name;
  return f;
}

namespace {
// Each enumerator of an enum type (32- or 64-bit) as (name, value); other types have none.
template <typename F>
void each_enumerator(const btf *b, const btf_type *t, F &&f) {
  if (btf_is_enum(t)) {
    const struct btf_enum *e = btf_enum(t);
    for (int i = 0; i < btf_vlen(t); i++, e++)
      f(btf__name_by_offset(b, e->name_off), static_cast<int64_t>(e->val));
  } else if (btf_is_enum64(t)) {
    const struct btf_enum64 *e = btf_enum64(t);
    for (int i = 0; i < btf_vlen(t); i++, e++)
      f(btf__name_by_offset(b, e->name_off), static_cast<int64_t>(btf_enum64_value(e)));
  }
}
}  // namespace

std::vector<std::pair<std::string, int64_t>> KernelTypes::find_enum(const std::string &name) {
  std::vector<std::pair<std::string, int64_t>> values;
  if (!load())
    return values;
  int id = btf__find_by_name_kind(btf_, name.c_str(), BTF_KIND_ENUM);
  if (id < 0)
    id = btf__find_by_name_kind(btf_, name.c_str(), BTF_KIND_ENUM64);
  if (id < 0)
    return values;
  each_enumerator(btf_, btf__type_by_id(btf_, static_cast<uint32_t>(id)),
                  [&](const char *n, int64_t v) { values.emplace_back(n, v); });
  return values;
}

std::optional<int64_t> KernelTypes::find_enum_value(const std::string &name) {
  if (!load())
    return std::nullopt;
  if (enum_values_.empty()) {
    // Every enumerator of the kernel's enums, read once (a few ms over vmlinux's types).
    uint32_t n = btf__type_cnt(btf_);
    for (uint32_t id = 1; id < n; id++)
      each_enumerator(btf_, btf__type_by_id(btf_, id),
                      [&](const char *en, int64_t v) { enum_values_.emplace(en, v); });
  }
  auto it = enum_values_.find(name);
  if (it == enum_values_.end())
    return std::nullopt;
  return it->second;
}

}  // namespace rbt::runtime
