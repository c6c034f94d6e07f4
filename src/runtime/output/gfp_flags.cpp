#include "gfp_flags.h"

#include <bpf/btf.h>

#include <cstdio>
#include <map>
#include <utility>
#include <vector>

namespace rbt::output {

namespace {

// The bit of each __GFP_ flag. Their positions depend on the kernel's configuration (KASAN,
// lockdep and slab extensions add bits in the middle), so the kernel's own enum (___GFP_*_BIT
// in its BTF) decides; Linux 6.x's defaults where it has none.
std::map<std::string, int> flag_bits() {
  static const char *const kNames[] = {
      "DMA",     "HIGHMEM", "DMA32",        "MOVABLE",        "RECLAIMABLE", "HIGH",
      "IO",      "FS",      "ZERO",         "UNUSED",         "DIRECT_RECLAIM",
      "KSWAPD_RECLAIM",     "WRITE",        "NOWARN",         "RETRY_MAYFAIL", "NOFAIL",
      "NORETRY", "MEMALLOC", "COMP",        "NOMEMALLOC",     "HARDWALL",    "THISNODE",
      "ACCOUNT", "ZEROTAGS", "NO_OBJ_EXT"};
  std::map<std::string, int> bits;
  for (int i = 0; i < static_cast<int>(sizeof(kNames) / sizeof(kNames[0])); i++)
    bits[kNames[i]] = i;
  btf *kernel = btf__load_vmlinux_btf();
  if (!kernel)
    return bits;
  std::map<std::string, int> from_btf;
  for (uint32_t id = 1; id < btf__type_cnt(kernel); id++) {
    const btf_type *t = btf__type_by_id(kernel, id);
    if (!btf_is_enum(t))
      continue;
    const struct btf_enum *e = btf_enum(t);
    for (int i = 0; i < btf_vlen(t); i++, e++) {
      std::string name = btf__name_by_offset(kernel, e->name_off);
      if (name.rfind("___GFP_", 0) == 0 && name.size() > 11 &&
          name.compare(name.size() - 4, 4, "_BIT") == 0)
        from_btf[name.substr(7, name.size() - 11)] = static_cast<int>(e->val);
    }
  }
  btf__free(kernel);
  if (!from_btf.empty())
    bits = std::move(from_btf);
  return bits;
}

// The names in the order the kernel's include/trace/events/mmflags.h matches them: compound
// masks first, so that GFP_KERNEL is named before its parts are.
std::vector<std::pair<uint64_t, std::string>> flag_names() {
  std::map<std::string, int> bits = flag_bits();
  auto f = [&](const char *name) -> uint64_t {
    auto it = bits.find(name);
    return it == bits.end() ? 0 : 1ull << it->second;
  };
  uint64_t reclaim = f("DIRECT_RECLAIM") | f("KSWAPD_RECLAIM");
  uint64_t kernel = reclaim | f("IO") | f("FS");
  uint64_t user = kernel | f("HARDWALL");
  uint64_t highuser = user | f("HIGHMEM");
  uint64_t highuser_movable = highuser | f("MOVABLE") | f("SKIP_KASAN");
  uint64_t transhuge_light =
      (highuser_movable | f("COMP") | f("NOMEMALLOC") | f("NOWARN")) & ~reclaim;
  std::vector<std::pair<uint64_t, std::string>> names = {
      {transhuge_light | f("DIRECT_RECLAIM"), "GFP_TRANSHUGE"},
      {transhuge_light, "GFP_TRANSHUGE_LIGHT"},
      {highuser_movable, "GFP_HIGHUSER_MOVABLE"},
      {highuser, "GFP_HIGHUSER"},
      {user, "GFP_USER"},
      {kernel | f("ACCOUNT"), "GFP_KERNEL_ACCOUNT"},
      {kernel, "GFP_KERNEL"},
      {reclaim | f("IO"), "GFP_NOFS"},
      {f("HIGH") | f("KSWAPD_RECLAIM"), "GFP_ATOMIC"},
      {reclaim, "GFP_NOIO"},
      {f("KSWAPD_RECLAIM") | f("NOWARN"), "GFP_NOWAIT"},
      {f("DMA"), "GFP_DMA"},
      {f("HIGHMEM"), "__GFP_HIGHMEM"},
      {f("DMA32"), "GFP_DMA32"},
  };
  for (const char *single : {"HIGH", "IO", "FS", "ZERO", "DIRECT_RECLAIM", "KSWAPD_RECLAIM",
                             "WRITE", "NOWARN", "RETRY_MAYFAIL", "NOFAIL", "NORETRY", "MEMALLOC",
                             "COMP", "NOMEMALLOC", "HARDWALL", "THISNODE", "ACCOUNT", "ZEROTAGS",
                             "SKIP_ZERO", "SKIP_KASAN", "NO_OBJ_EXT"})
    names.push_back({f(single), std::string("__GFP_") + single});
  return names;
}

}  // namespace

std::string gfp_flags_text(uint64_t flags) {
  if (flags == 0)
    return "0";
  static const std::vector<std::pair<uint64_t, std::string>> names = flag_names();
  std::string out;
  uint64_t left = flags;
  for (auto &[mask, name] : names) {
    if (mask == 0 || (left & mask) != mask)
      continue;
    out += (out.empty() ? "" : "|") + name;
    left &= ~mask;
  }
  if (left) {
    char hex[24];
    snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(left));
    out += (out.empty() ? "" : "|") + std::string(hex);
  }
  return out;
}

}  // namespace rbt::output
