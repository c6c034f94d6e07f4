#include "lost_events.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace rbt::runtime {

LostEvents::LostEvents(bpf_object *obj, const Manifest &manifest) {
  if (manifest.lost_events_name.empty())
    return;
  // libbpf names the .bss map "<object name prefix>.bss"; its BTF value is the section's
  // DATASEC, which gives the counter's offset.
  bpf_map *bss = nullptr, *map;
  bpf_object__for_each_map(map, obj) {
    std::string_view name = bpf_map__name(map);
    if (bpf_map__is_internal(map) && name.ends_with(".bss"))
      bss = map;
  }
  const btf *types = bpf_object__btf(obj);
  if (!bss || !types)
    return;
  const btf_type *sec = btf__type_by_id(types, bpf_map__btf_value_type_id(bss));
  if (!sec || !btf_is_datasec(sec))
    return;
  const btf_var_secinfo *vars = btf_var_secinfos(sec);
  for (uint16_t i = 0; i < btf_vlen(sec); i++) {
    const btf_type *var = btf__type_by_id(types, vars[i].type);
    if (var && manifest.lost_events_name == btf__name_by_offset(types, var->name_off) &&
        vars[i].offset + sizeof(int64_t) <= bpf_map__value_size(bss)) {
      fd_ = bpf_map__fd(bss);
      offset_ = vars[i].offset;
      value_.resize(bpf_map__value_size(bss));
      return;
    }
  }
}

uint64_t LostEvents::take_new() {
  // A lookup rather than libbpf's mapping of .bss: libbpf 1.1 does not always make the map
  // mmapable, and one syscall per drain is cheap.
  uint32_t key = 0;
  if (fd_ < 0 || bpf_map_lookup_elem(fd_, &key, value_.data()) != 0)
    return 0;
  int64_t sum;
  std::memcpy(&sum, value_.data() + offset_, sizeof sum);
  uint64_t total = static_cast<uint64_t>(-sum) / EAGAIN;  // a sum of -EAGAIN
  uint64_t fresh = total - reported_;
  reported_ = total;
  return fresh;
}

}  // namespace rbt::runtime
