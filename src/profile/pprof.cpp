// pprof's format: a gzipped perftools.profiles.Profile (github.com/google/pprof,
// proto/profile.proto), encoded by hand with protobuf.h. Functions are (name, file), locations
// (function, line); a sample lists its locations LEAF FIRST, as pprof wants. Key parts that are
// not stacks arrive as labels (Key frames are left out of the locations). Several profiles
// (maps) share one file: the sample types are
// concatenated, each sample fills its own map's slots (zeros elsewhere) and carries a `map`
// label, so `go tool pprof -sample_index` picks a map.
#include <map>
#include <set>
#include <tuple>

#include "gzip.h"
#include "protobuf.h"
#include "writers.h"

namespace rbt::profile {

namespace {

// Field numbers of profile.proto.
enum : uint32_t {
  kProfileSampleType = 1, kProfileSample = 2, kProfileLocation = 4, kProfileFunction = 5,
  kProfileStringTable = 6, kProfileTimeNanos = 9, kProfileDurationNanos = 10,
  kProfilePeriodType = 11, kProfilePeriod = 12, kProfileComment = 13,
  kValueTypeType = 1, kValueTypeUnit = 2,
  kSampleLocationId = 1, kSampleValue = 2, kSampleLabel = 3,
  kLabelKey = 1, kLabelStr = 2, kLabelNum = 3, kLabelNumUnit = 4,
  kLocationId = 1, kLocationLine = 4,
  kLineFunctionId = 1, kLineLine = 2,
  kFunctionId = 1, kFunctionName = 2, kFunctionSystemName = 3, kFunctionFilename = 4,
};

class StringTable {
public:
  StringTable() { id(""); }  // index 0 is always the empty string
  int64_t id(const std::string &s) {
    auto [it, added] = ids_.emplace(s, static_cast<int64_t>(strings_.size()));
    if (added)
      strings_.push_back(s);
    return it->second;
  }
  const std::vector<std::string> &strings() const { return strings_; }

private:
  std::map<std::string, int64_t> ids_;
  std::vector<std::string> strings_;
};

std::string value_type(StringTable &st, const ValueType &vt) {
  ProtoWriter w;
  w.int_field(kValueTypeType, st.id(vt.type));
  w.int_field(kValueTypeUnit, st.id(vt.unit));
  return w.take();
}

// What pprof shows as the function's name and file. Ruby: label and path. C methods: the
// method's name. Native and kernel: the symbol, with the binary as the file (pprof has no
// better place for it without address mappings, which would vary from run to run).
std::pair<std::string, std::string> function_of(const Frame &f) {
  std::string name = f.name.empty() ? "[unknown]" : f.name;
  switch (f.kind) {
  case FrameKind::Ruby: return {name, f.file};
  case FrameKind::Native:
  case FrameKind::Kernel: return {name, f.module};
  default: return {name, ""};
  }
}

}  // namespace

std::optional<std::string> write_pprof(const std::vector<Profile> &profiles, std::string &out) {
  StringTable st;
  ProtoWriter msg;

  // Sample types: each profile's, in order; a repeated type name is prefixed with its map's.
  std::vector<ValueType> types;
  std::vector<size_t> first_slot;
  std::set<std::string> type_names;
  for (const Profile &p : profiles) {
    first_slot.push_back(types.size());
    for (ValueType vt : p.value_types) {
      if (!type_names.insert(vt.type).second) {
        vt.type = p.name + ":" + vt.type;
        type_names.insert(vt.type);
      }
      types.push_back(vt);
    }
  }
  if (types.empty())
    types.push_back({"samples", "count"});
  for (const ValueType &vt : types)
    msg.bytes_field(kProfileSampleType, value_type(st, vt));

  // Functions and locations, numbered from 1 in order of first use.
  std::map<std::pair<std::string, std::string>, uint64_t> function_ids;
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> location_ids;
  ProtoWriter functions, locations;
  auto location_of = [&](const Frame &f) {
    auto fn = function_of(f);
    auto [fit, fn_added] = function_ids.emplace(fn, function_ids.size() + 1);
    if (fn_added) {
      ProtoWriter w;
      w.varint_field(kFunctionId, fit->second);
      w.int_field(kFunctionName, st.id(fn.first));
      // No system_name: pprof would "demangle" it and strip Ruby's <main> as C++ template
      // arguments.
      w.int_field(kFunctionFilename, st.id(fn.second));
      functions.bytes_field(kProfileFunction, w.bytes());
    }
    auto [lit, loc_added] = location_ids.emplace(std::pair(fit->second, f.line),
                                                 location_ids.size() + 1);
    if (loc_added) {
      ProtoWriter line;
      line.varint_field(kLineFunctionId, fit->second);
      line.int_field(kLineLine, f.line);
      ProtoWriter w;
      w.varint_field(kLocationId, lit->second);
      w.bytes_field(kLocationLine, line.bytes());
      locations.bytes_field(kProfileLocation, w.bytes());
    }
    return lit->second;
  };

  for (size_t p = 0; p < profiles.size(); p++) {
    const Profile &prof = profiles[p];
    std::vector<uint64_t> frame_locations(prof.frames.size());
    for (size_t i = 0; i < prof.frames.size(); i++)
      if (prof.frames[i].kind != FrameKind::Key)
        frame_locations[i] = location_of(prof.frames[i]);
    for (const Sample &s : prof.samples) {
      ProtoWriter w;
      // Leaf first. Key frames stay out: in pprof, key parts are the sample's labels.
      std::vector<uint64_t> locs;
      for (auto it = s.stack.rbegin(); it != s.stack.rend(); ++it)
        if (prof.frames[*it].kind != FrameKind::Key)
          locs.push_back(frame_locations[*it]);
      w.packed_field(kSampleLocationId, locs);
      std::vector<uint64_t> values(types.size(), 0);
      for (size_t v = 0; v < s.values.size() && v < prof.value_types.size(); v++)
        values[first_slot[p] + v] = static_cast<uint64_t>(s.values[v]);
      w.packed_field(kSampleValue, values);
      auto label = [&](const Label &l) {
        ProtoWriter lw;
        lw.int_field(kLabelKey, st.id(l.key));
        if (l.is_number) {
          lw.int_field(kLabelNum, l.number);
          if (!l.unit.empty())
            lw.int_field(kLabelNumUnit, st.id(l.unit));
        } else {
          lw.int_field(kLabelStr, st.id(l.str));
        }
        w.bytes_field(kSampleLabel, lw.bytes());
      };
      if (profiles.size() > 1)
        label(Label{"map", prof.name, 0, false, ""});
      for (const Label &l : s.labels)
        label(l);
      msg.bytes_field(kProfileSample, w.bytes());
    }
  }
  // Field order does not matter in protobuf; pprof resolves strings after decoding.
  std::string body = msg.take();
  body += locations.bytes();
  body += functions.bytes();

  // Profile-wide fields use strings too: resolve them before writing the string table.
  const Profile *first = profiles.empty() ? nullptr : &profiles[0];
  ProtoWriter tail;
  if (first) {
    tail.int_field(kProfileTimeNanos, static_cast<int64_t>(first->start_ns));
    tail.int_field(kProfileDurationNanos, static_cast<int64_t>(first->duration_ns));
    if (!first->period_type.type.empty())
      tail.bytes_field(kProfilePeriodType, value_type(st, first->period_type));
    tail.int_field(kProfilePeriod, first->period);
    uint64_t lost = 0;
    for (const Profile &p : profiles)
      lost += p.lost;
    if (lost)
      tail.int_field(kProfileComment, st.id(std::to_string(lost) + " events lost"));
  }
  ProtoWriter strings;
  for (const std::string &s : st.strings())
    strings.bytes_field(kProfileStringTable, s);
  body += strings.bytes();
  body += tail.bytes();
  std::string zipped = gzip_compress(body);
  if (zipped.empty())
    return "compressing the pprof profile failed";
  out += zipped;
  return std::nullopt;
}

}  // namespace rbt::profile
