// The Firefox (Gecko) writer and reader, the top table, and the recorder's frame parsing.
// `rbt report` reads back what `rbt record` writes, so a round trip must keep every frame,
// sample, marker and the lost count; the top table's flat column must sum to the samples.

#include <gtest/gtest.h>

#include <sstream>

#include "filter.h"
#include "firefox_reader.h"
#include "formats.h"
#include "recorder.h"

namespace rbt::profile {
namespace {

Profile sample_profile() {
  Profile p;
  p.name = "rbt record";
  p.value_types = {{"samples", "count"}};
  p.period_type = {"cpu", "nanoseconds"};
  p.period = 10101010;
  p.start_ns = 1700000000123456000ull;
  p.duration_ns = 2000000000;
  p.lost = 3;
  uint32_t main = p.intern({FrameKind::Ruby, "<main>", "app.rb", 10, ""});
  uint32_t work = p.intern({FrameKind::Ruby, "Worker#work", "lib/worker.rb", 42, ""});
  uint32_t each = p.intern({FrameKind::RubyCfunc, "each", "", 0, ""});
  uint32_t exec = p.intern({FrameKind::Native, "vm_exec", "", 0, "/usr/lib/libruby.so"});
  uint32_t sched = p.intern({FrameKind::Kernel, "schedule", "", 0, "[kernel]"});
  auto add = [&](uint64_t t, uint32_t tid, std::vector<uint32_t> stack) {
    Sample s;
    s.cpu = static_cast<uint32_t>(t / 10000000);  // 1..4, to see them come back
    s.stack = std::move(stack);
    s.values = {1};
    s.time_ns = t;
    s.pid = 100;
    s.tid = tid;
    p.samples.push_back(s);
  };
  // Out of time order on purpose: the writer sorts each thread's samples.
  add(30000000, 101, {main, work, each, exec});
  add(10000000, 100, {main, work});
  add(20000000, 100, {main, work, exec});
  add(40000000, 101, {});
  Marker m;
  m.name = "OffCPU";
  m.category = "Scheduler";
  m.start_ns = 5000000;
  m.end_ns = 9000000;
  m.pid = 100;
  m.tid = 101;
  m.stack = {main, sched};
  m.data = {{"state", "sleeping"}, {"duration_us", "4000"}};
  p.markers.push_back(m);
  Marker f = m;
  f.name = "PageFault";
  f.category = "Memory";
  f.end_ns = f.start_ns;
  f.data = {};
  p.markers.push_back(f);
  p.threads = {{100, 100, "ruby", "ruby"}, {100, 101, "worker-0", "ruby"}};
  return p;
}

std::string firefox_bytes(const Profile &p) {
  std::string out;
  EXPECT_EQ(write_profiles(Format::Firefox, {p}, out), std::nullopt);
  return out;
}

// The frames of a sample stack by name, to compare across profiles with other frame indices.
std::vector<std::string> names(const Profile &p, const std::vector<uint32_t> &stack) {
  std::vector<std::string> out;
  for (uint32_t f : stack)
    out.push_back(p.frames[f].name + "|" + p.frames[f].file + "|" +
                  std::to_string(p.frames[f].line) + "|" + p.frames[f].module + "|" +
                  std::to_string(static_cast<int>(p.frames[f].kind)));
  return out;
}

TEST(FirefoxProfile, round_trip_keeps_samples_markers_threads_and_lost) {
  Profile in = sample_profile();
  Profile out;
  ASSERT_EQ(read_firefox(firefox_bytes(in), out), std::nullopt);
  EXPECT_EQ(out.lost, 3u);
  EXPECT_EQ(out.period, in.period);
  EXPECT_EQ(out.start_ns, in.start_ns);
  EXPECT_EQ(out.duration_ns, in.duration_ns);
  ASSERT_EQ(out.threads.size(), 2u);
  EXPECT_EQ(out.threads[1].name, "worker-0");
  EXPECT_EQ(out.threads[1].process_name, "ruby");
  ASSERT_EQ(out.samples.size(), 4u);
  // Thread 100 first, sorted by time; then thread 101.
  EXPECT_EQ(out.samples[0].time_ns, 10000000u);
  EXPECT_EQ(out.samples[0].cpu, 1u);
  EXPECT_EQ(out.samples[2].cpu, 3u);
  EXPECT_EQ(names(out, out.samples[0].stack), names(in, in.samples[1].stack));
  EXPECT_EQ(names(out, out.samples[1].stack), names(in, in.samples[2].stack));
  EXPECT_EQ(out.samples[2].tid, 101u);
  EXPECT_EQ(names(out, out.samples[2].stack), names(in, in.samples[0].stack));
  EXPECT_TRUE(out.samples[3].stack.empty());
  ASSERT_EQ(out.markers.size(), 2u);
  EXPECT_EQ(out.markers[0].name, "OffCPU");
  EXPECT_EQ(out.markers[0].category, "Scheduler");
  EXPECT_EQ(out.markers[0].start_ns, 5000000u);
  EXPECT_EQ(out.markers[0].end_ns, 9000000u);
  EXPECT_EQ(names(out, out.markers[0].stack), names(in, in.markers[0].stack));
  ASSERT_EQ(out.markers[0].data.size(), 2u);
  EXPECT_EQ(out.markers[0].data[0], (std::pair<std::string, std::string>{"state", "sleeping"}));
  EXPECT_EQ(out.markers[0].data[1].second, "4000");
  EXPECT_EQ(out.markers[1].end_ns, out.markers[1].start_ns);  // an instant
}

TEST(FirefoxProfile, equal_profiles_give_identical_bytes) {
  EXPECT_EQ(firefox_bytes(sample_profile()), firefox_bytes(sample_profile()));
}

TEST(FirefoxProfile, reading_garbage_is_an_error_not_a_crash) {
  Profile out;
  EXPECT_NE(read_firefox("not json", out), std::nullopt);
  EXPECT_NE(read_firefox("{\"meta\": {}}", out), std::nullopt);
  EXPECT_NE(read_firefox(std::string("\x1f\x8b\x08\x00", 4), out), std::nullopt);
  EXPECT_NE(read_firefox("{\"meta\": {\"startTime\": 0}, \"threads\": [{\"pid\": 1, \"tid\": 1,"
                         "\"frameTable\": {\"schema\": {\"location\": 0}, \"data\": []}}]}",
                         out),
            std::nullopt);
}

TEST(TopTable, flat_column_sums_to_the_samples_and_cum_counts_a_frame_once) {
  Profile p = sample_profile();
  Sample recursive;
  recursive.stack = {1, 1, 1};  // Worker#work calling itself
  recursive.values = {1};
  p.samples.push_back(recursive);
  std::string out;
  ASSERT_EQ(write_profiles(Format::Top, {p}, out), std::nullopt);
  std::istringstream lines(out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "Total: 5 samples (3 lost)");
  std::getline(lines, line);  // header
  int64_t flat_sum = 0;
  bool saw_work = false;
  while (std::getline(lines, line)) {
    std::istringstream row(line);
    int64_t flat, cum;
    std::string flat_pct, sum_pct, cum_pct;
    row >> flat >> flat_pct >> sum_pct >> cum >> cum_pct;
    flat_sum += flat;
    if (line.find("Worker#work lib/worker.rb") != std::string::npos) {
      saw_work = true;
      EXPECT_EQ(cum, 4);  // three samples with it, one of them recursive: counted once
      EXPECT_EQ(flat, 2);
    }
  }
  EXPECT_TRUE(saw_work) << out;
  EXPECT_EQ(flat_sum, 5);
}

TEST(TopTable, a_c_method_and_its_native_function_count_once_in_cum) {
  // A mixed stack has `deflate` twice: the C method's Ruby frame and libz's function.
  Profile p;
  uint32_t ruby = p.intern({FrameKind::RubyCfunc, "deflate", "", 0, ""});
  uint32_t native = p.intern({FrameKind::Native, "deflate", "", 0, "/usr/lib/libz.so.1"});
  Sample s;
  s.stack = {ruby, native};
  s.values = {1};
  p.samples.push_back(s);
  std::string out;
  ASSERT_EQ(write_profiles(Format::Top, {p}, out), std::nullopt);
  EXPECT_NE(out.find("         1 100.00% 100.00%          1 100.00%  deflate\n"), std::string::npos)
      << out;
}

TEST(TopTable, lines_mode_names_file_and_line) {
  std::string out;
  WriteOptions o;
  o.lines = true;
  ASSERT_EQ(write_profiles(Format::Top, {sample_profile()}, out, o), std::nullopt);
  EXPECT_NE(out.find("Worker#work lib/worker.rb:42"), std::string::npos) << out;
}

TEST(TopTable, ruby_view_keeps_totals_and_moves_flat_to_ruby_frames) {
  Profile p = sample_profile();
  keep_ruby_frames(p);
  std::string out;
  ASSERT_EQ(write_profiles(Format::Top, {p}, out), std::nullopt);
  EXPECT_NE(out.find("Total: 4 samples"), std::string::npos);
  EXPECT_EQ(out.find("vm_exec"), std::string::npos) << out;
  EXPECT_NE(out.find("each"), std::string::npos);
}

}  // namespace
}  // namespace rbt::profile

namespace rbt::runtime {
namespace {

using profile::FrameKind;

TEST(RecorderFrames, ruby_lines_become_ruby_frames) {
  auto f = parse_frame(StackKind::Ruby, "Worker#work (/app/lib/worker.rb:42)");
  EXPECT_EQ(f.kind, FrameKind::Ruby);
  EXPECT_EQ(f.name, "Worker#work");
  EXPECT_EQ(f.file, "/app/lib/worker.rb");
  EXPECT_EQ(f.line, 42u);
  f = parse_frame(StackKind::Ruby, "block (2 levels) in <main> (-e:1)");
  EXPECT_EQ(f.name, "block (2 levels) in <main>");
  EXPECT_EQ(f.file, "-e");
  f = parse_frame(StackKind::Ruby, "each <cfunc>");
  EXPECT_EQ(f.kind, FrameKind::RubyCfunc);
  EXPECT_EQ(f.name, "each");
  EXPECT_EQ(parse_frame(StackKind::Ruby, "[... 3 more frames]").kind, FrameKind::Truncated);
}

TEST(RecorderFrames, native_and_kernel_lines_lose_offsets_and_keep_modules) {
  auto f = parse_frame(StackKind::User, "\t7f0012 vm_exec_core+1234 (/usr/lib/libruby.so.3.1)");
  EXPECT_EQ(f.kind, FrameKind::Native);
  EXPECT_EQ(f.name, "vm_exec_core");
  EXPECT_EQ(f.module, "/usr/lib/libruby.so.3.1");
  f = parse_frame(StackKind::User, "\t7f0012 [unknown] (/usr/lib/libruby.so.3.1)");
  EXPECT_EQ(f.name, "[libruby.so.3.1]");
  f = parse_frame(StackKind::Kernel, "\tffffffff81000000 schedule+5 ([kernel.kallsyms])");
  EXPECT_EQ(f.kind, FrameKind::Kernel);
  EXPECT_EQ(f.name, "schedule");
  EXPECT_EQ(f.module, "[kernel]");
  EXPECT_EQ(parse_frame(StackKind::Kernel, "vfs_read+17").name, "vfs_read");
}

TEST(RecorderFrames, mixed_frames_are_ruby_then_native_then_kernel_root_first) {
  // Each input is leaf first, as the walkers give them.
  EXPECT_EQ(mixed_frames({2, 1}, {4, 3}, {6, 5}), (std::vector<uint32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(mixed_frames({}, {4, 3}, {}), (std::vector<uint32_t>{3, 4}));
}

// A sample with nstack goes through the session's merge (Timeline::mixed_records): the ids of
// its rstack, nstack and kstack values and the sample's pid, the merged frames root first, and
// one merge per distinct stack unless a frame was unresolved.
TEST(RecorderFrames, nstack_samples_carry_the_merged_stack_root_first) {
  Recorder r("test", 10000000);
  std::vector<MixedStackIds> asked;
  bool unresolved = false;
  r.mixed_records = [&](const MixedStackIds &ids) {
    asked.push_back(ids);
    return std::vector<profile::Frame>{
        {FrameKind::Kernel, "schedule", "", 0, "[kernel]"},
        {FrameKind::Native, unresolved ? "0x7f00" : "deflate", "", 0, "/usr/lib/libz.so.1"},
        {FrameKind::RubyCfunc, "deflate", "", 0, ""},
        {FrameKind::Ruby, "<main>", "app.rb", 1, ""}};
  };
  ActionDesc action;
  action.kind = ActionKind::Sample;
  std::vector<Type> types(4, Type::integer(64, false));
  types.push_back(Type::string(16));
  types.push_back(Type::stack(StackKind::Ruby, 0, StackMode::Bpftrace));
  types.push_back(Type::stack(StackKind::Native, 128, StackMode::Bpftrace));
  types.push_back(Type::stack(StackKind::Kernel, 127, StackMode::Perf));
  action.args = Type::tuple(std::move(types));
  std::vector<uint8_t> payload(action.args.size);
  auto put = [&](size_t elem, size_t word, uint64_t v) {
    memcpy(payload.data() + action.args.offsets[elem] + 8 * word, &v, 8);
  };
  put(1, 0, 4242);  // pid
  put(2, 0, 4243);  // tid
  memcpy(payload.data() + action.args.offsets[4], "ruby", 5);
  put(5, 0, 0x11);  // rstack id
  put(6, 0, 0x23);  // nstack id
  put(7, 0, 7);     // kstack id
  r.on_sample(action, payload.data());
  r.on_sample(action, payload.data());  // the same stacks: merged once
  unresolved = true;
  put(6, 0, 0x25);
  r.on_sample(action, payload.data());
  r.on_sample(action, payload.data());  // a frame without a symbol: merged again
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_EQ(asked[0].ruby, 0x11u);
  EXPECT_EQ(asked[0].native, 0x23u);
  EXPECT_EQ(asked[0].kernel, 7);
  EXPECT_EQ(asked[0].pid, 4242);
  profile::Profile p = r.finish();
  ASSERT_EQ(p.samples.size(), 4u);
  std::vector<std::string> names;
  for (uint32_t f : p.samples[0].stack)
    names.push_back(p.frames[f].name);
  EXPECT_EQ(names, (std::vector<std::string>{"<main>", "deflate", "deflate", "schedule"}));
  EXPECT_EQ(p.frames[p.samples[0].stack[1]].kind, FrameKind::RubyCfunc);
  EXPECT_EQ(p.frames[p.samples[0].stack[2]].kind, FrameKind::Native);
}

}  // namespace
}  // namespace rbt::runtime
