#include "core_btf.h"

#include "kernel_btf.h"

#include <bpf/btf.h>
#include <gelf.h>
#include <libelf.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace rbt::runtime {

namespace {

using BtfPtr = std::unique_ptr<btf, void (*)(btf *)>;

// CO-RE matches a local type to the kernel's by its name without a ___flavour suffix.
std::string essential_name(const char *name) {
  std::string s = name ? name : "";
  size_t flavour = s.find("___");
  return flavour == std::string::npos ? s : s.substr(0, flavour);
}

// The member `name` of composite `id` in the kernel's BTF, looked for through anonymous members
// too (the kernel nests fields in anonymous structs and unions): its bit offset and type.
bool find_member(const KernelBtf &b, __u32 id, const std::string &name, __u32 base,
                 __u32 &bit_off, __u32 &type, int depth = 0) {
  const btf_type *t = b.type(id);
  if (!t || !(btf_is_struct(t) || btf_is_union(t)) || depth > 8)
    return false;
  const btf_member *m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); i++, m++) {
    const char *mname = b.name(m->name_off);
    __u32 off = base + btf_member_bit_offset(t, i);
    if (btf_member_bitfield_size(t, i))
      continue;
    if (*mname) {
      if (name == mname) {
        bit_off = off;
        type = m->type;
        return true;
      }
      continue;
    }
    int inner = b.resolve(m->type);
    if (inner > 0 && find_member(b, static_cast<__u32>(inner), name, off, bit_off, type, depth + 1))
      return true;
  }
  return false;
}

struct Field {
  std::string name;
  __u32 bit_off = 0;
  enum Kind { Int, Ptr, Composite } kind = Int;
  std::string int_name;  // Int: the kernel's integer type, by name, size and encoding
  __u32 size = 0, encoding = 0;
  std::string composite;  // Composite: the essential name of a planned struct or union
};

struct Plan {
  std::string name;
  bool is_union = false;
  __u32 size = 0;
  std::vector<Field> fields;
};

}  // namespace

bool has_core_relocations(const std::vector<char> &elf) {
  if (elf_version(EV_CURRENT) == EV_NONE)
    return true;  // cannot tell: let the caller make the BTF
  Elf *e = elf_memory(const_cast<char *>(elf.data()), elf.size());
  if (!e)
    return true;
  size_t strndx = 0;
  bool found = false;
  if (elf_getshdrstrndx(e, &strndx) == 0) {
    for (Elf_Scn *scn = elf_nextscn(e, nullptr); scn; scn = elf_nextscn(e, scn)) {
      GElf_Shdr sh;
      const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, strndx, sh.sh_name) : nullptr;
      if (!name || strcmp(name, ".BTF.ext") != 0)
        continue;
      Elf_Data *data = elf_getdata(scn, nullptr);
      // struct btf_ext_header: magic, version, flags, hdr_len, then four u32 (func and line
      // info), then core_relo_off and core_relo_len. A part starts with its record size.
      __u32 words[8] = {};
      if (data && data->d_size >= sizeof(words))
        memcpy(words, data->d_buf, sizeof(words));
      __u32 hdr_len = words[1];
      found = hdr_len >= sizeof(words) && words[7] > sizeof(__u32);
      break;
    }
  }
  elf_end(e);
  return found;
}

// Calls fn(name, type) for each named struct and union of `local`, by its essential name: all
// of the object that minimal_core_btf reads (and core_btf_key keys on).
template <typename Fn> void for_each_named_composite(const btf *local, Fn fn) {
  for (__u32 id = 1; id < btf__type_cnt(local); id++) {
    const btf_type *t = btf__type_by_id(local, id);
    if (!(btf_is_struct(t) || btf_is_union(t)))
      continue;
    std::string name = essential_name(btf__name_by_offset(local, t->name_off));
    if (!name.empty())
      fn(name, t);
  }
}

std::string core_btf_key(bpf_object *obj) {
  const btf *local = bpf_object__btf(obj);
  if (!local)
    return {};
  std::map<std::string, std::string> composites;  // sorted: the order of types is no input
  for_each_named_composite(local, [&](const std::string &name, const btf_type *t) {
    std::string &text = composites[name + (btf_is_union(t) ? " union" : " struct")];
    const btf_member *m = btf_members(t);
    for (int i = 0; i < btf_vlen(t); i++, m++)
      text += std::string(btf__name_by_offset(local, m->name_off)) + ",";
    text += ";";  // flavours of one type: their member lists one after the other
  });
  std::string key;
  for (const auto &[name, members] : composites)
    key += name + "{" + members + "}\n";
  return key;
}

Result<std::string> minimal_core_btf(bpf_object *obj) {
  const btf *local = bpf_object__btf(obj);
  if (!local)
    return std::string();
  auto opened = KernelBtf::open();
  if (!opened)
    return opened.error();
  const KernelBtf &kernel = **opened;

  // Every named struct or union of the object that the kernel has too, with the members the
  // object declares (flavours of one type merged).
  std::map<std::string, Plan> plans;
  std::map<std::string, __u32> kernel_ids;
  for_each_named_composite(local, [&](const std::string &name, const btf_type *t) {
    int kid = kernel.find(name, btf_is_union(t) ? BTF_KIND_UNION : BTF_KIND_STRUCT);
    if (kid <= 0)
      return;
    Plan &p = plans[name];
    p.name = name;
    p.is_union = btf_is_union(t);
    p.size = kernel.type(static_cast<__u32>(kid))->size;
    kernel_ids[name] = kid;
    const btf_member *m = btf_members(t);
    for (int i = 0; i < btf_vlen(t); i++, m++) {
      std::string mname = btf__name_by_offset(local, m->name_off);
      bool seen = false;
      for (const Field &f : p.fields)
        seen = seen || f.name == mname;
      if (mname.empty() || seen)
        continue;
      Field f;
      f.name = mname;
      __u32 ktype = 0;
      if (!find_member(kernel, static_cast<__u32>(kid), mname, 0, f.bit_off, ktype))
        continue;  // the kernel has no such member: the relocation fails as it would have
      int resolved = kernel.resolve(ktype);
      const btf_type *kt = resolved > 0 ? kernel.type(static_cast<__u32>(resolved)) : nullptr;
      if (!kt)
        continue;
      if (btf_is_int(kt)) {
        f.kind = Field::Int;
        f.int_name = kernel.name(kt->name_off);
        f.size = kt->size;
        f.encoding = btf_int_encoding(kt);
      } else if (btf_is_enum(kt) || btf_is_enum64(kt)) {
        f.kind = Field::Int;
        f.int_name = "rbt_enum" + std::to_string(kt->size);
        f.size = kt->size;
      } else if (btf_is_ptr(kt)) {
        f.kind = Field::Ptr;
      } else if (btf_is_struct(kt) || btf_is_union(kt)) {
        f.kind = Field::Composite;
        f.composite = essential_name(kernel.name(kt->name_off));
      } else {
        continue;  // arrays and the rest: nothing in the stdlib reads them through CO-RE
      }
      p.fields.push_back(std::move(f));
    }
  });
  if (plans.empty())
    return std::string();

  BtfPtr out(btf__new_empty(), btf__free);
  if (!out)
    return make_error("building a BTF", strerror(errno));
  // Integers and `void *` first, so every struct's id is known before any is added: a field
  // may name a struct that comes later (btf__add_field takes any id).
  std::map<std::string, int> ints;
  for (auto &[name, p] : plans)
    for (const Field &f : p.fields)
      if (f.kind == Field::Int && !ints.count(f.int_name))
        ints[f.int_name] = btf__add_int(out.get(), f.int_name.c_str(), static_cast<int>(f.size),
                                        static_cast<int>(f.encoding));
  int void_ptr = btf__add_ptr(out.get(), 0);
  std::map<std::string, int> ids;
  int next = static_cast<int>(btf__type_cnt(out.get()));
  for (auto &[name, p] : plans)
    ids[name] = next++;
  for (auto &[name, p] : plans) {
    int id = p.is_union ? btf__add_union(out.get(), name.c_str(), p.size)
                        : btf__add_struct(out.get(), name.c_str(), p.size);
    if (id != ids[name])
      return make_error("building a BTF", "type ids out of order");
    for (const Field &f : p.fields) {
      int type = f.kind == Field::Int   ? ints[f.int_name]
                 : f.kind == Field::Ptr ? void_ptr
                 : ids.count(f.composite) ? ids[f.composite]
                                          : -1;
      if (type < 0)
        continue;  // a struct member of a type the object does not declare: not read
      if (btf__add_field(out.get(), f.name.c_str(), type, static_cast<int>(f.bit_off), 0) < 0)
        return make_error("building a BTF", "adding field " + f.name + " failed");
    }
  }
  __u32 size = 0;
  const void *raw = btf__raw_data(out.get(), &size);
  if (!raw)
    return make_error("building a BTF", strerror(errno));
  return std::string(static_cast<const char *>(raw), size);
}

}  // namespace rbt::runtime
