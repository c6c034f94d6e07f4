#include "types.h"

#include <algorithm>

namespace rbt {

namespace {
// A type whose kind and size are all there is to it (those printed by user space).
Type sized(TypeKind kind, uint32_t size) {
  Type t;
  t.kind = kind;
  t.size = size;
  return t;
}
}  // namespace

Type Type::void_type() {
  Type t;
  t.kind = TypeKind::Void;
  return t;
}

Type Type::integer(unsigned bits, bool is_signed) {
  Type t;
  t.kind = TypeKind::Int;
  t.size = bits / 8;
  t.is_signed = is_signed;
  return t;
}

Type Type::boolean() {
  Type t;
  t.kind = TypeKind::Bool;
  t.size = 1;
  return t;
}

Type Type::string(uint32_t size) {
  Type t;
  t.kind = TypeKind::String;
  t.size = size;
  return t;
}

bool Type::is_rendered() const {
  switch (kind) {
  case TypeKind::Symbol:
  case TypeKind::Timestamp:
  case TypeKind::Inet:
  case TypeKind::ErrorNumber:
  case TypeKind::UserName:
  case TypeKind::MacAddr:
  case TypeKind::CgroupPath:
    return true;
  default:
    return false;
  }
}

uint32_t Type::align() const {
  if (is_rendered())
    return 8;
  switch (kind) {
  case TypeKind::Int:
  case TypeKind::Bool:
  case TypeKind::Pointer:
    return size;
  case TypeKind::Stack:
    return 8;
  case TypeKind::Buffer:
    return 4;
  case TypeKind::Float:
    return size;
  case TypeKind::String:
    return 1;
  case TypeKind::Array:
    return elems[0].align();
  case TypeKind::Tuple:
  case TypeKind::Struct: {
    uint32_t a = 1;
    for (auto &e : elems)
      a = std::max(a, e.align());
    return a;
  }
  default:
    return 8;
  }
}

Type Type::tuple(std::vector<Type> elems) {
  Type t;
  t.kind = TypeKind::Tuple;
  uint32_t off = 0;
  for (auto &e : elems) {
    uint32_t a = e.align();
    off = (off + a - 1) / a * a;
    t.offsets.push_back(off);
    off += e.size;
  }
  t.elems = std::move(elems);
  uint32_t a = t.align();
  t.size = (off + a - 1) / a * a;
  return t;
}

Type Type::record_tuple(std::vector<Type> elems, std::vector<std::string> names) {
  Type t = tuple(std::move(elems));
  t.field_names = std::move(names);
  return t;
}

size_t Type::field_index(const std::string &name) const {
  size_t i = 0;
  while (i < field_names.size() && field_names[i] != name)
    i++;
  return field_names.empty() ? elems.size() : i;
}

Type Type::aggregation(TypeKind kind, bool is_signed) {
  Type t;
  t.kind = kind;
  t.is_signed = is_signed;
  switch (kind) {
  case TypeKind::Count:
  case TypeKind::Sum:
  case TypeKind::Hist:
  case TypeKind::LHist:
    t.size = 8;  // one u64/i64 per CPU (histograms: per bucket, the bucket is in the key)
    break;
  case TypeKind::Min:
  case TypeKind::Max:  // {value, has_value}: other CPUs' slots start zeroed and must not count
  case TypeKind::Avg:
  case TypeKind::Stats:  // {total, count}
    t.size = 16;
    break;
  default:
    break;
  }
  return t;
}

Type Type::pointer(Type pointee, bool user_space) {
  Type t;
  t.kind = TypeKind::Pointer;
  t.size = 8;
  t.user_space = user_space;
  t.elems.push_back(std::move(pointee));
  return t;
}

Type Type::record_of(std::string name, uint32_t size, bool remote, bool user_space) {
  Type t;
  t.kind = TypeKind::Record;
  t.size = size;
  t.record = std::move(name);
  t.remote = remote;
  t.user_space = user_space;
  return t;
}

Type Type::stack(StackKind kind, uint32_t depth, StackMode mode) {
  Type t;
  t.kind = TypeKind::Stack;
  t.size = kind == StackKind::Mixed ? 32 : 16;
  t.stack_kind = kind;
  t.stack_depth = depth;
  t.stack_mode = mode;
  return t;
}

Type Type::symbol(bool user) {
  Type t;
  t.kind = TypeKind::Symbol;
  t.size = 16;
  t.stack_kind = user ? StackKind::User : StackKind::Kernel;
  return t;
}

Type Type::buffer(uint32_t bytes) { return sized(TypeKind::Buffer, 4 + bytes); }

Type Type::timestamp() { return sized(TypeKind::Timestamp, 16); }

Type Type::error_number() { return sized(TypeKind::ErrorNumber, 8); }

Type Type::user_name() { return sized(TypeKind::UserName, 8); }

Type Type::mac_addr() { return sized(TypeKind::MacAddr, 8); }

Type Type::floating(uint32_t size) { return sized(TypeKind::Float, size); }

Type Type::cgroup_path() { return sized(TypeKind::CgroupPath, 16); }

Type Type::inet() { return sized(TypeKind::Inet, 24); }

Type Type::struct_value(std::string name, uint32_t size, std::vector<Type> fields,
                        std::vector<uint32_t> offsets, std::vector<std::string> names) {
  Type t;
  t.kind = TypeKind::Struct;
  t.record = std::move(name);
  t.size = size;
  t.elems = std::move(fields);
  t.offsets = std::move(offsets);
  t.field_names = std::move(names);
  return t;
}

Type Type::array(Type elem, uint32_t count) {
  Type t;
  t.kind = TypeKind::Array;
  t.size = elem.size * count;
  t.count = count;
  t.elems.push_back(std::move(elem));
  return t;
}

Type Type::lhist(int64_t min, int64_t max, int64_t step) {
  Type t = aggregation(TypeKind::LHist);
  t.lhist_min = min;
  t.lhist_max = max;
  t.lhist_step = step;
  return t;
}

Type Type::tseries(bool is_signed, uint64_t interval_ns, uint32_t intervals, TSeriesAgg agg) {
  Type t = aggregation(TypeKind::TSeries, is_signed);
  t.size = 24;
  t.tseries_interval_ns = interval_ns;
  t.tseries_intervals = intervals;
  t.tseries_agg = agg;
  return t;
}

bool Type::compatible(const Type &o) const {
  if (is_int() && o.is_int())
    return true;
  if (is_pointer() && o.is_pointer())
    return true;
  if (kind != o.kind)
    return false;
  if (kind == TypeKind::Tuple) {
    if (elems.size() != o.elems.size() || field_names.empty() != o.field_names.empty())
      return false;
    for (size_t i = 0; i < elems.size(); i++) {
      // A record's fields match by name: `(a = 1, b = 2)` and `(b = 3, a = 4)` are one type.
      size_t j = field_names.empty() ? i : o.field_index(field_names[i]);
      if (j >= o.elems.size() || !elems[i].compatible(o.elems[j]))
        return false;
    }
    return true;
  }
  if (kind == TypeKind::LHist)
    return lhist_min == o.lhist_min && lhist_max == o.lhist_max && lhist_step == o.lhist_step;
  if (kind == TypeKind::Hist)
    return hist_k == o.hist_k;
  if (kind == TypeKind::TSeries)
    return tseries_interval_ns == o.tseries_interval_ns &&
           tseries_intervals == o.tseries_intervals && tseries_agg == o.tseries_agg;
  if (kind == TypeKind::Array || kind == TypeKind::Struct)
    return *this == o;
  return true;
}

Type Type::unify(const Type &a, const Type &b) {
  if (a.is_int() && b.is_int()) {
    if (a.kind == TypeKind::Bool && b.kind == TypeKind::Bool)
      return a;
    Type t = integer(8 * std::max({a.size, b.size, 1u}), a.is_signed || b.is_signed);
    if (a.enum_name == b.enum_name)  // an enum's values mixed with others: plain numbers
      t.enum_name = a.enum_name;
    return t;
  }
  if (a.kind == TypeKind::String) {
    Type t = string(std::max(a.size, b.size));
    t.may_be_cut = a.may_be_cut || b.may_be_cut;
    return t;
  }
  if (a.kind == TypeKind::Buffer)
    return a.size >= b.size ? a : b;
  if (a.kind == TypeKind::Tuple) {
    std::vector<Type> elems;
    for (size_t i = 0; i < a.elems.size(); i++)
      elems.push_back(unify(a.elems[i], b.elems[a.field_names.empty() ? i : b.field_index(a.field_names[i])]));
    return record_tuple(std::move(elems), a.field_names);  // a's order of fields
  }
  Type t = a;
  t.is_signed = a.is_signed || b.is_signed;
  return t;
}

std::string Type::name() const {
  switch (kind) {
  case TypeKind::None:
    return "none";
  case TypeKind::Void:
    return "void";
  case TypeKind::Int:
    return std::string(is_signed ? "int" : "uint") + std::to_string(size * 8);
  case TypeKind::Bool:
    return "bool";
  case TypeKind::String:
    return "string[" + std::to_string(size) + "]";
  case TypeKind::Pointer:
    return (elems.empty() || elems[0].is_none() ? std::string("void") : elems[0].name()) + " *";
  case TypeKind::Record:
  case TypeKind::Struct:
    return "struct " + record;
  case TypeKind::Symbol:
    return stack_kind == StackKind::User ? "usym_t" : "ksym_t";
  case TypeKind::Stack:
    return std::string(stack_kind == StackKind::Kernel ? "kstack"
                       : stack_kind == StackKind::User ? "ustack"
                       : stack_kind == StackKind::Native ? "nstack"
                       : stack_kind == StackKind::Mixed ? "rstack_native"
                                                        : "rstack") +
           "[" + std::to_string(stack_depth) + "]";
  case TypeKind::Buffer:
    return "buffer[" + std::to_string(size - 4) + "]";
  case TypeKind::Timestamp:
    return "timestamp";
  case TypeKind::Inet:
    return "inet";
  case TypeKind::ErrorNumber:
    return "strerror";
  case TypeKind::UserName:
    return "username";
  case TypeKind::MacAddr:
    return "macaddr";
  case TypeKind::Float:
    return size == 4 ? "float" : size == 8 ? "double" : "long double";
  case TypeKind::CgroupPath:
    return "cgroup_path_t";
  case TypeKind::Array:
    return elems[0].name() + "[" + std::to_string(count) + "]";
  case TypeKind::Tuple: {
    if (!field_names.empty()) {  // record { int64 a, string[4] b }
      std::string s = "record { ";
      for (size_t i = 0; i < elems.size(); i++)
        s += (i ? ", " : "") + elems[i].name() + " " + field_names[i];
      return s + " }";
    }
    std::string s = "(";
    for (size_t i = 0; i < elems.size(); i++)
      s += (i ? ", " : "") + elems[i].name();
    return s + ")";
  }
  case TypeKind::Count:
    return "count_t";
  case TypeKind::Sum:
    return "sum_t";
  case TypeKind::Min:
    return "min_t";
  case TypeKind::Max:
    return "max_t";
  case TypeKind::Avg:
    return "avg_t";
  case TypeKind::Stats:
    return "stats_t";
  case TypeKind::Hist:
    return hist_k ? "hist_t(k=" + std::to_string(hist_k) + ")" : "hist_t";
  case TypeKind::LHist:
    return "lhist_t";
  case TypeKind::TSeries:
    return "tseries_t";
  }
  return "?";
}

bool Type::operator==(const Type &o) const {
  return kind == o.kind && size == o.size && is_signed == o.is_signed && elems == o.elems &&
         lhist_min == o.lhist_min && lhist_max == o.lhist_max && lhist_step == o.lhist_step &&
         hist_k == o.hist_k &&
         record == o.record && user_space == o.user_space && remote == o.remote &&
         stack_kind == o.stack_kind && stack_mode == o.stack_mode && stack_depth == o.stack_depth &&
         count == o.count && field_names == o.field_names && enum_name == o.enum_name &&
         tseries_interval_ns == o.tseries_interval_ns &&
         tseries_intervals == o.tseries_intervals && tseries_agg == o.tseries_agg;
}

uint64_t histogram_buckets(const Type &value) {
  if (value.kind == TypeKind::Hist)  // below 0, [0], then 2^k buckets for each power of two
    return value.hist_k ? 2 + (64ull << value.hist_k) : kHistBuckets;
  int64_t n = (value.lhist_max - value.lhist_min + value.lhist_step - 1) / value.lhist_step;
  return static_cast<uint64_t>(n) + 2;
}

}  // namespace rbt
