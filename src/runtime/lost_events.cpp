#include "lost_events.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

namespace rbt::runtime {

BssCounter find_bss_counter(bpf_object *obj, const std::string &name) {
  BssCounter found;
  // libbpf names the .bss map "<object name prefix>.bss"; its BTF value is the section's
  // DATASEC, which gives the counter's offset.
  bpf_map *bss = nullptr, *map;
  bpf_object__for_each_map(map, obj) {
    std::string_view map_name = bpf_map__name(map);
    if (bpf_map__is_internal(map) && map_name.ends_with(".bss"))
      bss = map;
  }
  const btf *types = bpf_object__btf(obj);
  if (!bss || !types)
    return found;
  const btf_type *sec = btf__type_by_id(types, bpf_map__btf_value_type_id(bss));
  if (!sec || !btf_is_datasec(sec))
    return found;
  const btf_var_secinfo *vars = btf_var_secinfos(sec);
  for (uint16_t i = 0; i < btf_vlen(sec); i++) {
    const btf_type *var = btf__type_by_id(types, vars[i].type);
    if (var && name == btf__name_by_offset(types, var->name_off) &&
        vars[i].offset + sizeof(int64_t) <= bpf_map__value_size(bss)) {
      found.fd = bpf_map__fd(bss);
      found.offset = vars[i].offset;
      found.value_size = bpf_map__value_size(bss);
      return found;
    }
  }
  return found;
}

int64_t read_bss_counter(const BssCounter &counter) {
  // A lookup rather than libbpf's mapping of .bss: libbpf 1.1 does not always make the map
  // mmapable, and one syscall per read is cheap.
  if (counter.fd < 0)
    return 0;
  std::vector<char> value(counter.value_size);
  uint32_t key = 0;
  if (bpf_map_lookup_elem(counter.fd, &key, value.data()) != 0)
    return 0;
  int64_t n;
  std::memcpy(&n, value.data() + counter.offset, sizeof n);
  return n;
}

LostEvents::LostEvents(bpf_object *obj, const Manifest &manifest) {
  if (!manifest.lost_events_name.empty())
    counter_ = find_bss_counter(obj, manifest.lost_events_name);
}

uint64_t LostEvents::take_new() {
  if (counter_.fd < 0)
    return 0;
  int64_t sum = read_bss_counter(counter_);
  uint64_t total = static_cast<uint64_t>(-sum) / EAGAIN;  // a sum of -EAGAIN
  uint64_t fresh = total - reported_;
  reported_ = total;
  return fresh;
}

}  // namespace rbt::runtime
