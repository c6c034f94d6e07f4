// Stack maps → profiles (src/runtime/output/profile_maps.cpp) without BPF: a fake stack
// reader stands in for the session's StackPrinter and RubyStacks.
#include <gtest/gtest.h>

#include <cstring>

#include "output/profile_maps.h"

using namespace rbt;
using rbt::profile::Frame;
using rbt::profile::FrameKind;

namespace {

// A stack value's first byte names its fake stack: leaf first, kind by the stack's kind.
std::vector<Frame> fake_stack(const Type &t, const uint8_t *v) {
  FrameKind kind = t.stack_kind == StackKind::Ruby   ? FrameKind::Ruby
                   : t.stack_kind == StackKind::User ? FrameKind::Native
                                                     : FrameKind::Kernel;
  std::string tag(1, static_cast<char>(v[0]));
  return {Frame{kind, tag + "_leaf", "", 0, ""}, Frame{kind, tag + "_root", "", 0, ""}};
}

runtime::MapEntry entry(const MapDesc &d, std::vector<std::pair<uint32_t, std::string>> parts,
                        uint64_t value) {
  runtime::MapEntry e;
  e.key.resize(d.key.size);
  for (auto &[offset, bytes] : parts)
    memcpy(e.key.data() + offset, bytes.data(), bytes.size());
  e.value.resize(8);
  memcpy(e.value.data(), &value, 8);
  return e;
}

}  // namespace

TEST(ProfileMaps, accepts_stack_maps_of_counts_and_sums_only) {
  MapDesc d;
  d.name = "@";
  d.key = Type::stack(StackKind::Kernel, 127, StackMode::Bpftrace);
  d.value = Type::aggregation(TypeKind::Count);
  EXPECT_FALSE(output::profile_map_problem(d));
  d.value = Type::aggregation(TypeKind::Hist);
  EXPECT_EQ(*output::profile_map_problem(d), "its values are hist(), not count() or sum()");
  d.value = Type::aggregation(TypeKind::Sum);
  d.key = Type::integer(64, false);
  EXPECT_EQ(*output::profile_map_problem(d), "its key (uint64) holds no stack");
}

TEST(ProfileMaps, key_parts_are_root_frames_and_labels_stacks_ruby_then_user_then_kernel) {
  MapDesc d;
  d.name = "@";
  d.key = Type::tuple({Type::stack(StackKind::Kernel, 127, StackMode::Bpftrace),
                       Type::string(16), Type::integer(32, false),
                       Type::stack(StackKind::User, 127, StackMode::Bpftrace)});
  d.key_names = {"kstack", "comm", "pid", "ustack"};
  d.value = Type::aggregation(TypeKind::Count);
  runtime::MapSnapshot snap{&d, {}};
  uint32_t k = d.key.offsets[0], c = d.key.offsets[1], p = d.key.offsets[2], u = d.key.offsets[3];
  uint32_t pid = 42;
  std::string pid_bytes(reinterpret_cast<char *>(&pid), 4);
  snap.entries.push_back(entry(d, {{k, "k"}, {c, "ruby"}, {p, pid_bytes}, {u, "u"}}, 5));
  // Another stack id with the same frames: merged.
  snap.entries.push_back(entry(d, {{k, "k"}, {c, "ruby"}, {p, pid_bytes}, {u, "u"}}, 2));
  output::ProfileRun run;
  profile::Profile prof = output::map_profile(snap, fake_stack, run);
  ASSERT_EQ(prof.samples.size(), 1u);
  std::vector<std::string> names;
  for (uint32_t f : prof.samples[0].stack)
    names.push_back(prof.frames[f].name);
  EXPECT_EQ(names, (std::vector<std::string>{"ruby", "pid 42", "u_root", "u_leaf", "k_root",
                                              "k_leaf"}));
  EXPECT_EQ(prof.samples[0].values, std::vector<int64_t>{7});
  ASSERT_EQ(prof.samples[0].labels.size(), 2u);
  EXPECT_EQ(prof.samples[0].labels[0].key, "comm");
  EXPECT_EQ(prof.samples[0].labels[0].str, "ruby");
  EXPECT_EQ(prof.samples[0].labels[1].key, "pid");
  EXPECT_TRUE(prof.samples[0].labels[1].is_number);
  EXPECT_EQ(prof.samples[0].labels[1].number, 42);
  EXPECT_EQ(prof.value_types[0].type, "samples");
}

TEST(ProfileMaps, samples_are_sorted_by_frames_not_by_stack_id) {
  MapDesc d;
  d.name = "@bytes";
  d.key = Type::stack(StackKind::Ruby, 127, StackMode::Bpftrace);
  d.value = Type::aggregation(TypeKind::Sum);
  runtime::MapSnapshot a{&d, {}}, b{&d, {}};
  a.entries = {entry(d, {{0, "z"}}, 1), entry(d, {{0, "a"}}, 2)};
  b.entries = {entry(d, {{0, "a"}}, 2), entry(d, {{0, "z"}}, 1)};
  output::ProfileRun run;
  profile::Profile pa = output::map_profile(a, fake_stack, run);
  profile::Profile pb = output::map_profile(b, fake_stack, run);
  EXPECT_EQ(pa.frames, pb.frames);
  ASSERT_EQ(pa.samples.size(), 2u);
  EXPECT_EQ(pa.frames[pa.samples[0].stack[0]].name, "a_root");
  EXPECT_EQ(pa.value_types[0].type, "bytes");  // sum(): the map's name, unit count
  EXPECT_EQ(pa.value_types[0].unit, "count");
}
