#include "resources.h"

#include <linux/bpf.h>

#include <algorithm>

namespace rbt::codegen {

Resources::Resources(DebugInfo &debug_info, const sema::SemaInfo &sema) : debug_info_(debug_info) {
  for (auto &[name, info] : sema.maps) {
    MapDesc desc;
    desc.name = name;
    // Kernel object names are at most 15 characters: number the maps, keep names in the
    // manifest.
    desc.bpf_name = "m" + std::to_string(manifest_.maps.size());
    desc.key = info.key;
    desc.key_names = info.key_names;
    desc.value = info.value;
    unsigned type = desc.is_array()  ? BPF_MAP_TYPE_PERCPU_ARRAY
                    : desc.per_cpu() ? BPF_MAP_TYPE_PERCPU_HASH
                                     : BPF_MAP_TYPE_HASH;
    uint32_t entries = desc.is_array() ? desc.array_entries() : sema.config.max_map_keys;
    // `let @m = lruhash(N)`: the declared kind and capacity (a keyless aggregation keeps its
    // per-CPU array, which never fills).
    if (auto decl = sema.map_decls.find(name); decl != sema.map_decls.end() && !desc.is_array()) {
      const std::string &kind = decl->second.map_type;
      type = kind == "lruhash"         ? BPF_MAP_TYPE_LRU_HASH
             : kind == "percpulruhash" ? BPF_MAP_TYPE_LRU_PERCPU_HASH
             : kind == "percpuhash"    ? BPF_MAP_TYPE_PERCPU_HASH
                                       : BPF_MAP_TYPE_HASH;
      entries = decl->second.max_entries;
    }
    desc.max_keys = entries;
    map_globals_[name] = debug_info.define_map(desc.bpf_name, type, entries, desc.bpf_key_size(),
                                               desc.bpf_value_size());
    map_index_[name] = manifest_.maps.size();
    manifest_.maps.push_back(std::move(desc));
  }
  manifest_.print_maps_on_exit = sema.config.print_maps_on_exit;
  manifest_.str_trunc_trailer = sema.config.str_trunc_trailer;
  manifest_.max_cat_bytes = sema.config.max_cat_bytes;
  for (const auto &[name, e] : sema.script_enums)  // values print as their enumerators
    manifest_.enums.push_back(e);
  manifest_.missing_probes = sema.config.missing_probes;
  ringbuf_ = debug_info.define_map(manifest_.ringbuf_name, BPF_MAP_TYPE_RINGBUF, kRingbufBytes,
                                   0, 0);
}

llvm::GlobalVariable *Resources::stack_map(bool user, uint32_t depth) {
  auto [it, inserted] = stack_maps_.try_emplace({user, depth}, nullptr);
  if (inserted) {
    StackMapDesc desc{(user ? "ustack_" : "kstack_") + std::to_string(depth), user, depth};
    it->second = debug_info_.define_sized_map(desc.bpf_name, BPF_MAP_TYPE_STACK_TRACE,
                                              kStackMapEntries, 4, 8 * depth);
    manifest_.stack_maps.push_back(std::move(desc));
  }
  return it->second;
}

llvm::GlobalVariable *Resources::map_full_counter(const std::string &map) {
  auto [it, inserted] = map_full_counters_.try_emplace(map, nullptr);
  if (inserted) {
    MapDesc &desc = manifest_.maps[map_index_.at(map)];
    desc.full_counter = "rbt_full_" + desc.bpf_name;
    it->second = debug_info_.define_counter(desc.full_counter);
  }
  return it->second;
}

llvm::GlobalVariable *Resources::lost_events() {
  if (!lost_events_) {
    manifest_.lost_events_name = "rbt_lost_events";
    lost_events_ = debug_info_.define_counter(manifest_.lost_events_name);
  }
  return lost_events_;
}

llvm::GlobalVariable *Resources::exit_flag() {
  if (!exit_flag_)
    exit_flag_ = debug_info_.define_counter(kExitFlagName);
  return exit_flag_;
}

llvm::GlobalVariable *Resources::seen_pids() {
  if (!seen_pids_)
    seen_pids_ = debug_info_.define_map(manifest_.seen_pids_name, BPF_MAP_TYPE_HASH, 16384, 8, 1);
  return seen_pids_;
}

llvm::GlobalVariable *Resources::skb_output() {
  if (!skb_output_)
    skb_output_ = debug_info_.define_sized_map(kSkbOutputMap, BPF_MAP_TYPE_PERF_EVENT_ARRAY, 0, 4, 4);
  return skb_output_;
}

llvm::GlobalVariable *Resources::last_announced_pid() {
  if (!last_announced_pid_)
    last_announced_pid_ =
        debug_info_.define_map("rbt_last_announced", BPF_MAP_TYPE_PERCPU_ARRAY, 1, 4, 8);
  return last_announced_pid_;
}

llvm::GlobalVariable *Resources::config() {
  if (!config_)
    config_ = debug_info_.define_map(manifest_.config_name, BPF_MAP_TYPE_ARRAY, 1, 4,
                                     sizeof(RuntimeConfig));
  return config_;
}

llvm::GlobalVariable *Resources::scratch(llvm::Module &module) {
  if (!scratch_)
    scratch_ = new llvm::GlobalVariable(module, llvm::Type::getInt8Ty(module.getContext()), false,
                                        llvm::GlobalValue::ExternalLinkage, nullptr,
                                        "rbt_scratch_placeholder");
  return scratch_;
}

void Resources::finish_scratch() {
  if (!scratch_)
    return;
  llvm::GlobalVariable *map =
      debug_info_.define_map(manifest_.scratch_name, BPF_MAP_TYPE_PERCPU_ARRAY, scratch_pages_, 4,
                             (scratch_bytes_ + 7) / 8 * 8);
  scratch_->replaceAllUsesWith(map);
  scratch_->eraseFromParent();
  scratch_ = map;
}

const MapDesc &Resources::map_desc(const std::string &name) const {
  return manifest_.maps.at(map_index_.at(name));
}

namespace {
// The index of `s` in `strings`, added on first use.
uint64_t intern(std::vector<std::string> &strings, const std::string &s) {
  auto it = std::find(strings.begin(), strings.end(), s);
  if (it != strings.end())
    return static_cast<uint64_t>(it - strings.begin());
  strings.push_back(s);
  return strings.size() - 1;
}
}  // namespace

uint64_t Resources::strftime_format(const std::string &format) {
  return intern(manifest_.strftime_formats, format);
}

uint64_t Resources::cgroup_path_filter(const std::string &filter) {
  return intern(manifest_.cgroup_path_filters, filter);
}

uint64_t Resources::add_action(ActionDesc action) {
  manifest_.actions.push_back(std::move(action));
  return static_cast<uint64_t>(EventId::FirstAction) + manifest_.actions.size() - 1;
}

}  // namespace rbt::codegen
