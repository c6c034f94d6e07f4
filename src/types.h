#pragma once
// Value types shared by the type checker, code generator and runtime. A Type says both what a
// value means (an integer, a string, a count aggregation) and how its bytes are laid out in BPF
// memory, so the runtime can decode map keys, map values and event payloads without the AST.

#include <cstdint>
#include <string>
#include <vector>

namespace rbt {

enum class TypeKind : uint8_t {
  None,   // not yet known (or an error already reported)
  Void,   // statements and calls without a value
  Int,
  Bool,
  String,
  Tuple,
  Pointer,  // an address; elems[0] is what it points to (Record, Int, or None for void)
  Record,   // a C struct: `args` of a tracepoint (in the context) or one reached via a pointer
  Stack,    // kstack/ustack/rstack/nstack: {u64 stack id, u64 pid}; frames are read from stack maps
  Symbol,   // ksym/usym: {u64 address, u64 pid}, printed as the symbol it falls in
  Buffer,     // buf(): {u32 length, u8 bytes[size - 4]}, printed hex-escaped
  Timestamp,  // strftime(): {u64 format index, u64 nsecs}, formatted by user space
  Inet,       // ntop(): {u64 address family, u8 address[16]}, printed by inet_ntop
  ErrorNumber,  // strerror(): {u64 errno}, printed as its message by strerror(3)
  UserName,     // username: {u64 uid}, printed as the user's name (getpwuid(3))
  MacAddr,      // macaddr(): {u8 address[6], u8 pad[2]}, printed AA:BB:CC:DD:EE:FF
  CgroupPath,   // cgroup_path(): {u64 filter index, u64 cgroup id}, its paths found by user space
  Array,      // a C array: `count` elements of elems[0] (pton(), `__u8 saddr[4]`)
  // A C struct's bytes held by value (`$s = *p`, `@s = *p`): `record` names it; elems, offsets
  // and field_names are its fields as C lays them out.
  Struct,
  // A C float/double/long double field of a held struct: its `size` bytes, opaque (BPF has no
  // floating point), printed as null as bpftrace prints it.
  Float,
  // Aggregations: only ever the value of a map.
  Count,
  Sum,
  Min,
  Max,
  Avg,
  Stats,
  Hist,
  LHist,
  TSeries,  // tseries(n, interval, intervals[, agg]): a value per time interval
};

// How tseries() combines the values recorded in one interval (Last: the latest wins).
enum class TSeriesAgg : uint8_t { Last, Avg, Max, Min, Sum };

// Native: user frames unwound by DWARF CFI (nstack). Mixed: rstack(native), one stack of Ruby,
// native and kernel frames; its value is {ruby id, native id, kernel id, pid} (32 bytes).
enum class StackKind : uint8_t { Kernel, User, Ruby, Native, Mixed };
// How frames print; BuildId: a user frame as its file's build id and offset in the file.
enum class StackMode : uint8_t { Bpftrace, Perf, Raw, BuildId };

struct Type {
  TypeKind kind = TypeKind::None;
  uint32_t size = 0;  // bytes of one value as stored in BPF memory (per CPU for aggregations)
  bool is_signed = false;
  // String: str() without a length under a max_strlen below 1024, read with one byte more than
  // max_strlen; a value that fills all of it but the terminator may have been cut short, and
  // prints followed by str_trunc_trailer (bpftrace's rule, `..` by default).
  bool may_be_cut = false;
  std::vector<Type> elems;         // Tuple: element types
  std::vector<uint32_t> offsets;   // Tuple: byte offset of each element
  int64_t lhist_min = 0, lhist_max = 0, lhist_step = 0;  // LHist parameters
  uint32_t hist_k = 0;  // Hist: each power of two split into 2^hist_k linear buckets (hist(n, k))
  std::string record;       // Record: the record's name; its layout is looked up by name
  bool user_space = false;  // Pointer/remote Record: user (not kernel) memory
  bool remote = false;      // Record: reached through a pointer, so read with probe_read
  StackKind stack_kind = StackKind::Kernel;  // Stack
  StackMode stack_mode = StackMode::Bpftrace;
  uint32_t stack_depth = 0;
  uint32_t count = 0;  // Array: number of elements
  std::vector<std::string> field_names;  // Struct, record Tuple: the name of each of elems
  // Int: the C enum (defined in the script) whose values it holds; text output prints the
  // enumerator's name for a value that has one (printf's %s too), as bpftrace does. Arithmetic
  // gives a plain integer. Anonymous enums have a name of their own ("enum#2").
  std::string enum_name;
  // TSeries: the interval's length, how many intervals are kept, how values combine.
  uint64_t tseries_interval_ns = 0;
  uint32_t tseries_intervals = 0;
  TSeriesAgg tseries_agg = TSeriesAgg::Last;

  static Type none() { return {}; }
  static Type void_type();
  static Type integer(unsigned bits, bool is_signed);
  static Type boolean();
  static Type string(uint32_t size);
  static Type tuple(std::vector<Type> elems);
  // A record `(a = 1, b = "x")`: a tuple whose elements have names (field_names).
  static Type record_tuple(std::vector<Type> elems, std::vector<std::string> names);
  // An aggregation whose argument has signedness `is_signed` (sum/min/max/avg keep it).
  static Type aggregation(TypeKind kind, bool is_signed = false);
  static Type lhist(int64_t min, int64_t max, int64_t step);
  // Per CPU and interval slot: {int64 value, u64 meta, u64 epoch} (meta: the write time for
  // Last, the count for Avg, has-value for Min/Max; epoch: time / interval of the value).
  static Type tseries(bool is_signed, uint64_t interval_ns, uint32_t intervals, TSeriesAgg agg);
  static Type pointer(Type pointee, bool user_space);
  static Type record_of(std::string name, uint32_t size, bool remote, bool user_space);
  static Type stack(StackKind kind, uint32_t depth, StackMode mode);
  static Type symbol(bool user);
  static Type buffer(uint32_t bytes);  // room for `bytes` bytes after the length
  static Type timestamp();
  static Type inet();
  static Type error_number();
  static Type user_name();
  static Type mac_addr();
  static Type floating(uint32_t size);  // TypeKind::Float of 4, 8 or 16 bytes
  static Type cgroup_path();
  static Type array(Type elem, uint32_t count);
  static Type struct_value(std::string name, uint32_t size, std::vector<Type> fields,
                           std::vector<uint32_t> offsets, std::vector<std::string> names);

  bool is_none() const { return kind == TypeKind::None; }
  bool is_int() const { return kind == TypeKind::Int || kind == TypeKind::Bool; }
  bool is_string() const { return kind == TypeKind::String; }
  bool is_tuple() const { return kind == TypeKind::Tuple; }  // records too
  bool is_named_tuple() const { return kind == TypeKind::Tuple && !field_names.empty(); }
  // A named tuple's element called `name`; elems.size() when it has none.
  size_t field_index(const std::string &name) const;
  bool is_pointer() const { return kind == TypeKind::Pointer; }
  bool is_record() const { return kind == TypeKind::Record; }
  bool is_stack() const { return kind == TypeKind::Stack; }
  bool is_buffer() const { return kind == TypeKind::Buffer; }
  bool is_array() const { return kind == TypeKind::Array; }
  bool is_struct() const { return kind == TypeKind::Struct; }
  // Fixed bytes user space turns into text when printing (ksym, strftime, ntop, strerror,
  // username, macaddr, cgroup_path): copied whole, printable with %s, JSON strings.
  bool is_rendered() const;
  // Integers, booleans and pointers: values that live in a register.
  bool is_scalar() const { return is_int() || is_pointer(); }
  bool is_aggregation() const { return kind >= TypeKind::Count; }
  bool is_histogram() const { return kind == TypeKind::Hist || kind == TypeKind::LHist; }
  // Aggregations kept as one BPF entry per (key, slot): histogram buckets, tseries intervals.
  bool is_bucketed() const { return is_histogram() || kind == TypeKind::TSeries; }
  uint32_t align() const;

  // Whether a map holding `*this` may also be assigned `other` (same shape; ints of any width,
  // strings of any length and tuples of compatible elements unify).
  bool compatible(const Type &other) const;
  // The wider of two compatible types (the one a map keeps).
  static Type unify(const Type &a, const Type &b);

  std::string name() const;  // "uint64", "string[16]", "(int64, string[16])", "count"
  bool operator==(const Type &o) const;
};

// The number of log2 histogram buckets: (..., 0), [0], [1], then one per power of two up to
// [2^63, 2^64).
constexpr int kHistBuckets = 66;

// Number of buckets of a hist (kHistBuckets) or lhist (below min, one per step, max and above)
// value.
uint64_t histogram_buckets(const Type &value);

}  // namespace rbt
