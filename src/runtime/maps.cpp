#include "maps.h"

#include <bpf/bpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <set>

namespace rbt::runtime {

uint64_t MapEntry::u64(size_t index) const {
  uint64_t v = 0;
  if ((index + 1) * 8 <= value.size())
    memcpy(&v, value.data() + index * 8, 8);
  return v;
}

size_t bucket_count(const Type &value) { return histogram_buckets(value); }

namespace {

uint64_t load_u64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

uint32_t load_u32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

void store_u64(std::vector<uint8_t> &out, size_t index, uint64_t v) {
  if (out.size() < (index + 1) * 8)
    out.resize((index + 1) * 8);
  memcpy(out.data() + index * 8, &v, 8);
}

// Folds the per-CPU copies of one aggregation value into one.
std::vector<uint8_t> merge_cpus(const Type &t, const uint8_t *values, size_t stride, int ncpus) {
  std::vector<uint8_t> out;
  uint64_t a = 0, b = 0;
  bool have = false;
  for (int cpu = 0; cpu < ncpus; cpu++) {
    const uint8_t *v = values + cpu * stride;
    switch (t.kind) {
    case TypeKind::Min:
    case TypeKind::Max: {
      if (!load_u64(v + 8))
        break;  // this CPU never saw the key
      uint64_t x = load_u64(v);
      bool better;
      if (t.is_signed)
        better = t.kind == TypeKind::Min ? static_cast<int64_t>(x) < static_cast<int64_t>(a)
                                         : static_cast<int64_t>(x) > static_cast<int64_t>(a);
      else
        better = t.kind == TypeKind::Min ? x < a : x > a;
      if (!have || better)
        a = x;
      have = true;
      b = 1;
      break;
    }
    case TypeKind::Avg:
    case TypeKind::Stats:
      a += load_u64(v);
      b += load_u64(v + 8);
      break;
    default:  // count, sum, histogram buckets
      a += load_u64(v);
      break;
    }
  }
  store_u64(out, 0, a);
  if (t.size == 16)
    store_u64(out, 1, b);
  return out;
}

// One tseries slot's {epoch, value} from its per-CPU copies ({value, meta, epoch} each, see
// Type::tseries): the latest epoch any CPU wrote, its CPUs' values combined as the aggregation
// says. A CPU whose epoch is 0 never wrote the slot; if none did, {0, 0}.
std::pair<uint64_t, uint64_t> merge_tseries_cpus(const Type &t, const uint8_t *values,
                                                 size_t stride, int ncpus) {
  uint64_t latest = 0, value = 0, meta = 0;
  for (int cpu = 0; cpu < ncpus; cpu++) {
    const uint8_t *v = values + cpu * stride;
    uint64_t epoch = load_u64(v + 16), x = load_u64(v), m = load_u64(v + 8);
    if (epoch == 0 || epoch < latest)
      continue;
    if (epoch > latest) {
      latest = epoch;
      value = x;
      meta = m;
      continue;
    }
    switch (t.tseries_agg) {
    case TSeriesAgg::Last:  // meta is when the value was written
      if (m > meta) {
        value = x;
        meta = m;
      }
      break;
    case TSeriesAgg::Avg:
      value += x;
      meta += m;
      break;
    case TSeriesAgg::Sum:
      value += x;
      break;
    case TSeriesAgg::Min:
    case TSeriesAgg::Max: {
      bool less = t.is_signed ? static_cast<int64_t>(x) < static_cast<int64_t>(value) : x < value;
      if (less == (t.tseries_agg == TSeriesAgg::Min) && x != value)
        value = x;
      break;
    }
    }
  }
  if (t.tseries_agg == TSeriesAgg::Avg && meta)
    value = t.is_signed ? static_cast<uint64_t>(static_cast<int64_t>(value) / static_cast<int64_t>(meta))
                        : value / meta;
  return {latest, value};
}

}  // namespace

namespace {

// Every key of the BPF map, read before changing any: deleting while walking with
// get_next_key could restart the walk or skip keys.
Result<std::vector<std::vector<uint8_t>>> all_keys(int fd, size_t key_size, const MapDesc &desc) {
  std::vector<std::vector<uint8_t>> keys;
  std::vector<uint8_t> key(key_size), next(key_size);
  for (bool first = true;; first = false) {
    if (bpf_map_get_next_key(fd, first ? nullptr : key.data(), next.data()) != 0) {
      if (errno == ENOENT)
        break;
      int err = errno;
      return make_error("reading map " + desc.name, strerror(err), {}, err);
    }
    key = next;
    keys.push_back(key);
  }
  return keys;
}

}  // namespace

namespace {
// Keyless arrays that zero() has set: as with a hash, whose zeroed keys stay, their zero
// scalar is a value to print ("@c: 0") rather than a slot never written.
std::set<int> zeroed_arrays;
}  // namespace

Status clear_map(const bpf_map *map, const MapDesc &desc) {
  int fd = bpf_map__fd(map);
  if (desc.is_array()) {
    Status st = zero_map(map, desc);  // an array's zeroed slot is an absent value
    zeroed_arrays.erase(fd);
    return st;
  }
  auto keys = all_keys(fd, desc.bpf_key_size(), desc);
  if (!keys)
    return keys.error();
  for (auto &k : *keys)
    bpf_map_delete_elem(fd, k.data());  // ENOENT: a program deleted it meanwhile; fine
  return Ok{};
}

Status zero_map(const bpf_map *map, const MapDesc &desc) {
  int fd = bpf_map__fd(map);
  if (desc.is_array())
    zeroed_arrays.insert(fd);
  auto keys = all_keys(fd, desc.bpf_key_size(), desc);
  if (!keys)
    return keys.error();
  // Per-CPU values are written for every possible CPU, each rounded up to 8 bytes.
  size_t size = desc.per_cpu() ? (desc.bpf_value_size() + 7) / 8 * 8 * libbpf_num_possible_cpus()
                               : desc.bpf_value_size();
  std::vector<uint8_t> zero(size);
  for (auto &k : *keys) {
    // BPF_EXIST: a key deleted since the walk stays deleted.
    if (bpf_map_update_elem(fd, k.data(), zero.data(), BPF_EXIST) != 0 && errno != ENOENT) {
      int err = errno;
      return make_error("zeroing map " + desc.name, strerror(err), {}, err);
    }
  }
  return Ok{};
}

namespace {

// Calls `fn(key, value)` for every entry of the map: in batches (one system call per few
// thousand entries; key by key, a 60,000-key map took two system calls per key), or key by
// key where the kernel has no batch lookup for the map's type. `value_size` is the whole
// value as the kernel copies it out (every CPU's copy of a per-CPU map).
Status for_each_entry(int fd, size_t key_size, size_t value_size, const MapDesc &desc,
                      const std::function<void(const uint8_t *, const uint8_t *)> &fn) {
  // Hash maps' batch position is a 4-byte bucket index; other maps' is a key.
  std::vector<uint8_t> in(std::max<size_t>(key_size, 8)), out(in.size());
  uint32_t batch = 4096;
  std::vector<uint8_t> keys, values;
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  for (bool first = true;;) {
    keys.resize(batch * key_size);
    values.resize(batch * value_size);
    uint32_t count = batch;
    int rc = bpf_map_lookup_batch(fd, first ? nullptr : in.data(), out.data(), keys.data(),
                                  values.data(), &count, &opts);
    int err = rc ? errno : 0;
    if (err && err != ENOENT && count == 0) {
      if (err == ENOSPC && batch < (1u << 20)) {  // one hash bucket holds more than `batch`
        batch *= 2;
        continue;
      }
      if (first)
        break;  // no batch operation here (EINVAL, ENOTSUPP): key by key below
      return make_error("reading map " + desc.name, strerror(err), {}, err);
    }
    for (uint32_t i = 0; i < count; i++)
      fn(keys.data() + i * key_size, values.data() + i * value_size);
    if (err == ENOENT)
      return Ok{};  // the last batch
    if (err)
      return make_error("reading map " + desc.name, strerror(err), {}, err);
    in = out;
    first = false;
  }
  std::vector<uint8_t> key(key_size), next(key_size), value(value_size);
  for (bool first = true;; first = false) {
    if (bpf_map_get_next_key(fd, first ? nullptr : key.data(), next.data()) != 0) {
      if (errno == ENOENT)
        return Ok{};
      int err = errno;
      return make_error("reading map " + desc.name, strerror(err), {}, err);
    }
    key = next;
    if (bpf_map_lookup_elem(fd, key.data(), value.data()) == 0)  // else deleted meanwhile
      fn(key.data(), value.data());
  }
}

}  // namespace

namespace {
// A tseries entry's {epoch, value} pairs in order of epoch, one per epoch (the first read).
void sort_tseries_slots(MapEntry &e) {
  std::map<uint64_t, uint64_t> slots;
  for (size_t i = 0; i + 1 < e.value.size() / 8; i += 2)
    slots.try_emplace(e.u64(i), e.u64(i + 1));
  e.value.clear();
  for (auto [epoch, v] : slots) {
    store_u64(e.value, e.value.size() / 8, epoch);
    store_u64(e.value, e.value.size() / 8, v);
  }
}
}  // namespace

Result<MapSnapshot> snapshot_map(const bpf_map *map, const MapDesc &desc) {
  MapSnapshot snap;
  snap.desc = &desc;
  int fd = bpf_map__fd(map);
  size_t key_size = desc.bpf_key_size();
  int ncpus = desc.per_cpu() ? libbpf_num_possible_cpus() : 1;
  size_t stride = desc.per_cpu() ? (desc.bpf_value_size() + 7) / 8 * 8 : desc.bpf_value_size();
  std::map<std::vector<uint8_t>, size_t> hist_index;  // user key → entry
  bool zeroed = zeroed_arrays.count(fd) != 0;

  auto add = [&](const uint8_t *key, const uint8_t *value) {
    if (desc.is_array() && std::all_of(value, value + stride * ncpus, [](uint8_t b) { return !b; }) &&
        (desc.value.is_histogram() || !zeroed))
      return;  // a slot never written (MapDesc::is_array)
    std::vector<uint8_t> user_key;
    if (!desc.key.is_none())
      user_key.assign(key, key + desc.key.size);

    if (desc.value.kind == TypeKind::TSeries) {
      auto [it, inserted] = hist_index.try_emplace(user_key, snap.entries.size());
      if (inserted)
        snap.entries.push_back({user_key, {}});
      auto [epoch, v] = merge_tseries_cpus(desc.value, value, stride, ncpus);
      auto &e = snap.entries[it->second].value;
      store_u64(e, e.size() / 8, epoch);
      store_u64(e, e.size() / 8, v);
      return;
    }
    if (desc.value.is_histogram()) {
      uint64_t bucket = desc.is_array() ? load_u32(key) : load_u64(key + desc.bucket_offset());
      auto [it, inserted] = hist_index.try_emplace(user_key, snap.entries.size());
      if (inserted)
        snap.entries.push_back({user_key, std::vector<uint8_t>(bucket_count(desc.value) * 8)});
      if (bucket < bucket_count(desc.value)) {
        auto &e = snap.entries[it->second];
        uint64_t count = load_u64(merge_cpus(desc.value, value, stride, ncpus).data());
        store_u64(e.value, bucket, e.u64(bucket) + count);
      }
      return;
    }
    MapEntry e;
    e.key = std::move(user_key);
    if (desc.per_cpu())
      e.value = merge_cpus(desc.value, value, stride, ncpus);
    else
      e.value.assign(value, value + desc.bpf_value_size());
    snap.entries.push_back(std::move(e));
  };
  if (auto s = for_each_entry(fd, key_size, stride * ncpus, desc, add); !s)
    return s.error();
  if (desc.value.kind == TypeKind::TSeries)
    for (MapEntry &e : snap.entries)
      sort_tseries_slots(e);
  // A histogram zero() has set still has its (empty) entry, as its hash keys would.
  if (desc.is_array() && desc.value.is_histogram() && snap.entries.empty() && zeroed)
    snap.entries.push_back({{}, std::vector<uint8_t>(bucket_count(desc.value) * 8)});
  return snap;
}

MapEntry zero_entry(const MapDesc &desc) {
  MapEntry e;
  size_t stride = (desc.bpf_value_size() + 7) / 8 * 8;
  std::vector<uint8_t> zeros(std::max<size_t>(stride, 16));
  if (desc.per_cpu())
    e.value = merge_cpus(desc.value, zeros.data(), stride, 1);
  else
    e.value.assign(desc.bpf_value_size(), 0);
  return e;
}

}  // namespace rbt::runtime
