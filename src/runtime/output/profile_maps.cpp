#include "profile_maps.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "value_format.h"

namespace rbt::output {

namespace {

struct Part {
  const Type *type;
  uint32_t offset;
  std::string name;  // "comm", "pid", or "" when the script wrote an expression
};

std::vector<Part> key_parts(const MapDesc &desc) {
  std::vector<Part> parts;
  if (desc.key.is_none())
    return parts;
  auto name = [&](size_t i) { return i < desc.key_names.size() ? desc.key_names[i] : ""; };
  if (desc.key.is_tuple()) {
    for (size_t i = 0; i < desc.key.elems.size(); i++)
      parts.push_back({&desc.key.elems[i], desc.key.offsets[i], name(i)});
  } else {
    parts.push_back({&desc.key, 0, name(0)});
  }
  return parts;
}

// Outermost first: Ruby calls into native code, which enters the kernel.
int stack_rank(StackKind kind) {
  switch (kind) {
  case StackKind::Mixed: return 0;  // Ruby down to the kernel in itself
  case StackKind::Ruby: return 0;
  case StackKind::User: return 1;
  case StackKind::Native: return 1;
  case StackKind::Kernel: return 2;
  }
  return 3;
}

}  // namespace

std::optional<std::string> profile_map_problem(const MapDesc &desc) {
  if (desc.value.kind != TypeKind::Count && desc.value.kind != TypeKind::Sum) {
    static const std::pair<TypeKind, const char *> kAggregations[] = {
        {TypeKind::Min, "min()"},   {TypeKind::Max, "max()"},     {TypeKind::Avg, "avg()"},
        {TypeKind::Stats, "stats()"}, {TypeKind::Hist, "hist()"}, {TypeKind::LHist, "lhist()"}};
    std::string what = desc.value.name();
    for (const auto &[kind, name] : kAggregations)
      if (desc.value.kind == kind)
        what = name;
    return "its values are " + what + ", not count() or sum()";
  }
  for (const Part &p : key_parts(desc))
    if (p.type->is_stack())
      return std::nullopt;
  return desc.key.is_none() ? std::string("it has no key, so no stack")
                            : "its key (" + desc.key.name() + ") holds no stack";
}

profile::Profile map_profile(const runtime::MapSnapshot &snapshot, const StackRecords &stacks,
                             const ProfileRun &run) {
  using profile::Frame;
  using profile::FrameKind;
  using profile::Label;
  const MapDesc &desc = *snapshot.desc;
  profile::Profile prof;
  prof.name = desc.name;
  if (desc.value.kind == TypeKind::Count) {
    prof.value_types = {{"samples", "count"}};
    prof.period_type = run.period_type;
    prof.period = run.period;
  } else {
    // sum(): rbt cannot know what was summed (nanoseconds? bytes?): the map's name says it
    // to a reader, and the unit is a plain count unless --sum-unit says otherwise.
    std::string type = desc.name.size() > 1 ? desc.name.substr(1) : "sum";
    prof.value_types = {{type, run.sum_unit.empty() ? "count" : run.sum_unit}};
  }
  prof.start_ns = run.start_ns;
  prof.duration_ns = run.duration_ns;

  std::vector<Part> parts = key_parts(desc);
  std::vector<size_t> stack_parts;
  for (size_t i = 0; i < parts.size(); i++)
    if (parts[i].type->is_stack())
      stack_parts.push_back(i);
  std::stable_sort(stack_parts.begin(), stack_parts.end(), [&](size_t a, size_t b) {
    return stack_rank(parts[a].type->stack_kind) < stack_rank(parts[b].type->stack_kind);
  });

  // Entries whose frames and labels are equal (stack ids that differ by pc only) merge.
  std::map<std::pair<std::vector<Frame>, std::vector<Label>>, int64_t> merged;
  for (const runtime::MapEntry &e : snapshot.entries) {
    std::vector<Frame> frames;
    std::vector<Label> labels;
    for (size_t i = 0; i < parts.size(); i++) {
      const Part &p = parts[i];
      if (p.type->is_stack())
        continue;
      const uint8_t *bytes = e.key.data() + p.offset;
      std::string key = !p.name.empty() ? p.name
                        : parts.size() == 1 ? std::string("key")
                                            : "key" + std::to_string(i);
      Label label{key, "", 0, false, ""};
      std::string text;
      if (p.type->is_int() && p.type->kind == TypeKind::Int) {
        label.number = load_int(*p.type, bytes);
        label.is_number = true;
        text = format_value(*p.type, bytes);
        if (!p.name.empty())
          text = p.name + " " + text;  // "pid 1234" reads better than "1234" as a frame
      } else {
        text = format_value(*p.type, bytes);
        label.str = text;
      }
      frames.push_back(Frame{FrameKind::Key, text, "", 0, ""});
      labels.push_back(std::move(label));
    }
    for (size_t i : stack_parts) {
      std::vector<Frame> leaf_first = stacks(*parts[i].type, e.key.data() + parts[i].offset);
      frames.insert(frames.end(), leaf_first.rbegin(), leaf_first.rend());
    }
    merged[{std::move(frames), std::move(labels)}] += e.i64(0);
  }
  for (const auto &[key, value] : merged) {
    profile::Sample s;
    for (const Frame &f : key.first)
      s.stack.push_back(prof.intern(f));
    s.labels = key.second;
    s.values = {value};
    prof.samples.push_back(std::move(s));
  }
  return prof;
}

}  // namespace rbt::output
