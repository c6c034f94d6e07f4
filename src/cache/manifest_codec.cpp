#include "manifest_codec.h"

namespace rbt::cache {

namespace {

// A field added to one of these structs changes its size: write and read it below, then update
// the size here (and kFormatVersion in cache_entry.h).
static_assert(sizeof(Type) == 216, "Type changed: update manifest_codec.cpp");
static_assert(sizeof(ProbeDesc) == 184, "ProbeDesc changed: update manifest_codec.cpp");
static_assert(sizeof(MapDesc) == 560, "MapDesc changed: update manifest_codec.cpp");
static_assert(sizeof(ActionDesc) == 264, "ActionDesc changed: update manifest_codec.cpp");
static_assert(sizeof(StackMapDesc) == 40, "StackMapDesc changed: update manifest_codec.cpp");
static_assert(sizeof(Manifest) == 384, "Manifest changed: update manifest_codec.cpp");

// Types nest (tuples of tuples); a corrupt entry must not recurse until the stack runs out.
constexpr int kMaxTypeDepth = 64;

void write_type(ByteWriter &w, const Type &t) {
  w.u8(static_cast<uint8_t>(t.kind));
  w.u32(t.size);
  w.u8(t.is_signed);
  w.u8(t.may_be_cut);
  w.u32(static_cast<uint32_t>(t.elems.size()));
  for (const Type &e : t.elems)
    write_type(w, e);
  w.u32(static_cast<uint32_t>(t.offsets.size()));
  for (uint32_t o : t.offsets)
    w.u32(o);
  w.u64(static_cast<uint64_t>(t.lhist_min));
  w.u64(static_cast<uint64_t>(t.lhist_max));
  w.u64(static_cast<uint64_t>(t.lhist_step));
  w.u32(t.hist_k);
  w.str(t.record);
  w.u8(t.user_space);
  w.u8(t.remote);
  w.u8(static_cast<uint8_t>(t.stack_kind));
  w.u8(static_cast<uint8_t>(t.stack_mode));
  w.u32(t.stack_depth);
  w.u32(t.count);
  w.u32(static_cast<uint32_t>(t.field_names.size()));
  for (const std::string &name : t.field_names)
    w.str(name);
  w.str(t.enum_name);
  w.u64(t.tseries_interval_ns);
  w.u32(t.tseries_intervals);
  w.u8(static_cast<uint8_t>(t.tseries_agg));
}

Type read_type(ByteReader &r, int depth) {
  Type t;
  if (depth > kMaxTypeDepth) {
    r.fail();
    return t;
  }
  uint8_t kind = r.u8();
  if (kind > static_cast<uint8_t>(TypeKind::TSeries))
    r.fail();
  t.kind = static_cast<TypeKind>(kind);
  t.size = r.u32();
  t.is_signed = r.u8() != 0;
  t.may_be_cut = r.u8() != 0;
  uint32_t n = r.count(8);
  for (uint32_t i = 0; i < n && !r.failed(); i++)
    t.elems.push_back(read_type(r, depth + 1));
  n = r.count(4);
  for (uint32_t i = 0; i < n && !r.failed(); i++)
    t.offsets.push_back(r.u32());
  t.lhist_min = static_cast<int64_t>(r.u64());
  t.lhist_max = static_cast<int64_t>(r.u64());
  t.lhist_step = static_cast<int64_t>(r.u64());
  t.hist_k = r.u32();
  t.record = r.str();
  t.user_space = r.u8() != 0;
  t.remote = r.u8() != 0;
  uint8_t stack_kind = r.u8(), stack_mode = r.u8();
  if (stack_kind > static_cast<uint8_t>(StackKind::Mixed) ||
      stack_mode > static_cast<uint8_t>(StackMode::BuildId))
    r.fail();
  t.stack_kind = static_cast<StackKind>(stack_kind);
  t.stack_mode = static_cast<StackMode>(stack_mode);
  t.stack_depth = r.u32();
  t.count = r.u32();
  n = r.count(4);
  for (uint32_t i = 0; i < n && !r.failed(); i++)
    t.field_names.push_back(r.str());
  t.enum_name = r.str();
  t.tseries_interval_ns = r.u64();
  t.tseries_intervals = r.u32();
  uint8_t agg = r.u8();
  if (agg > static_cast<uint8_t>(TSeriesAgg::Sum))
    r.fail();
  t.tseries_agg = static_cast<TSeriesAgg>(agg);
  return t;
}

void write_strings(ByteWriter &w, const std::vector<std::string> &v) {
  w.u32(static_cast<uint32_t>(v.size()));
  for (const auto &s : v)
    w.str(s);
}

std::vector<std::string> read_strings(ByteReader &r) {
  std::vector<std::string> v;
  uint32_t n = r.count(4);
  for (uint32_t i = 0; i < n && !r.failed(); i++)
    v.push_back(r.str());
  return v;
}

}  // namespace

void write_manifest(ByteWriter &w, const Manifest &m) {
  w.u32(static_cast<uint32_t>(m.probes.size()));
  for (const ProbeDesc &p : m.probes) {
    w.u8(static_cast<uint8_t>(p.kind));
    w.str(p.name);
    w.str(p.target);
    w.u8(p.in_process_root);
    w.str(p.func);
    w.u64(p.offset);
    w.u64(p.freq);
    w.u64(p.period);
    w.str(p.program);
    for (uint32_t v : {p.line, p.col, p.end_line, p.end_col})
      w.u32(v);
  }
  w.u32(static_cast<uint32_t>(m.maps.size()));
  for (const MapDesc &d : m.maps) {
    w.str(d.name);
    w.str(d.bpf_name);
    write_type(w, d.key);
    write_type(w, d.value);
    write_strings(w, d.key_names);
    w.u64(d.max_keys);
    w.str(d.full_counter);
  }
  w.u32(static_cast<uint32_t>(m.actions.size()));
  for (const ActionDesc &a : m.actions) {
    w.u8(static_cast<uint8_t>(a.kind));
    w.str(a.text);
    write_type(w, a.args);
    w.u32(static_cast<uint32_t>(a.map));
  }
  w.u32(static_cast<uint32_t>(m.stack_maps.size()));
  for (const StackMapDesc &s : m.stack_maps) {
    w.str(s.bpf_name);
    w.u8(s.user);
    w.u32(s.depth);
  }
  write_strings(w, m.strftime_formats);
  write_strings(w, m.cgroup_path_filters);
  w.u32(static_cast<uint32_t>(m.enums.size()));
  for (const EnumDesc &e : m.enums) {
    w.str(e.name);
    w.u32(static_cast<uint32_t>(e.values.size()));
    for (const auto &[name, value] : e.values) {
      w.str(name);
      w.u64(static_cast<uint64_t>(value));
    }
  }
  w.str(m.seen_pids_name);
  w.str(m.config_name);
  w.str(m.scratch_name);
  w.u8(m.print_maps_on_exit);
  w.str(m.str_trunc_trailer);
  w.u64(m.max_cat_bytes);
  w.str(m.ringbuf_name);
  w.str(m.lost_events_name);
}

std::optional<Manifest> read_manifest(ByteReader &r) {
  Manifest m;
  uint32_t n = r.count(4);
  for (uint32_t i = 0; i < n && !r.failed(); i++) {
    ProbeDesc p;
    uint8_t kind = r.u8();
    if (kind > static_cast<uint8_t>(ProbeKind::Iter))
      r.fail();
    p.kind = static_cast<ProbeKind>(kind);
    p.name = r.str();
    p.target = r.str();
    p.in_process_root = r.u8() != 0;
    p.func = r.str();
    p.offset = r.u64();
    p.freq = r.u64();
    p.period = r.u64();
    p.program = r.str();
    p.line = r.u32();
    p.col = r.u32();
    p.end_line = r.u32();
    p.end_col = r.u32();
    m.probes.push_back(std::move(p));
  }
  n = r.count(4);
  for (uint32_t i = 0; i < n && !r.failed(); i++) {
    MapDesc d;
    d.name = r.str();
    d.bpf_name = r.str();
    d.key = read_type(r, 0);
    d.value = read_type(r, 0);
    d.key_names = read_strings(r);
    d.max_keys = r.u64();
    d.full_counter = r.str();
    m.maps.push_back(std::move(d));
  }
  n = r.count(4);
  for (uint32_t i = 0; i < n && !r.failed(); i++) {
    ActionDesc a;
    uint8_t kind = r.u8();
    if (kind > static_cast<uint8_t>(ActionKind::SkbOutput))
      r.fail();
    a.kind = static_cast<ActionKind>(kind);
    a.text = r.str();
    a.args = read_type(r, 0);
    a.map = static_cast<int32_t>(r.u32());
    if (a.map < -1 || (a.map >= 0 && static_cast<size_t>(a.map) >= m.maps.size()))
      r.fail();
    m.actions.push_back(std::move(a));
  }
  n = r.count(4);
  for (uint32_t i = 0; i < n && !r.failed(); i++) {
    StackMapDesc s;
    s.bpf_name = r.str();
    s.user = r.u8() != 0;
    s.depth = r.u32();
    m.stack_maps.push_back(std::move(s));
  }
  m.strftime_formats = read_strings(r);
  m.cgroup_path_filters = read_strings(r);
  n = r.count(8);
  for (uint32_t i = 0; i < n && !r.failed(); i++) {
    EnumDesc e;
    e.name = r.str();
    uint32_t values = r.count(12);
    for (uint32_t j = 0; j < values && !r.failed(); j++) {
      std::string name = r.str();
      e.values.emplace_back(std::move(name), static_cast<int64_t>(r.u64()));
    }
    m.enums.push_back(std::move(e));
  }
  m.seen_pids_name = r.str();
  m.config_name = r.str();
  m.scratch_name = r.str();
  m.print_maps_on_exit = r.u8() != 0;
  m.str_trunc_trailer = r.str();
  m.max_cat_bytes = r.u64();
  m.ringbuf_name = r.str();
  m.lost_events_name = r.str();
  if (r.failed())
    return std::nullopt;
  return m;
}

}  // namespace rbt::cache
