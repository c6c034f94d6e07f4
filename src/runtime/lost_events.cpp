#include "lost_events.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace rbt::runtime {

LostEvents::LostEvents(bpf_object *obj, const Manifest &manifest) {
  if (manifest.lost_events_name.empty())
    return;
  // libbpf names the .bss map "<object name prefix>.bss"; the counter is its only variable.
  bpf_map *map;
  bpf_object__for_each_map(map, obj) {
    std::string_view name = bpf_map__name(map);
    if (bpf_map__is_internal(map) && name.ends_with(".bss"))
      fd_ = bpf_map__fd(map);
  }
}

uint64_t LostEvents::take_new() {
  // A lookup rather than libbpf's mapping of .bss: libbpf 1.1 does not always make the map
  // mmapable, and one syscall per drain is cheap.
  uint32_t key = 0;
  int64_t sum = 0;
  if (fd_ < 0 || bpf_map_lookup_elem(fd_, &key, &sum) != 0)
    return 0;
  uint64_t total = static_cast<uint64_t>(-sum) / EAGAIN;  // a sum of -EAGAIN
  uint64_t fresh = total - reported_;
  reported_ = total;
  return fresh;
}

}  // namespace rbt::runtime
