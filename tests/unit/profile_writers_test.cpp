// The profile writers on small hand-built profiles: escaping, stable bytes, and pprof files
// that `go tool pprof` reads (skipped when Go is not installed).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "formats.h"
#include "profile.h"

using namespace rbt::profile;

namespace {

uint32_t frame(Profile &p, FrameKind kind, const std::string &name, const std::string &file = "",
               uint32_t line = 0, const std::string &module = "") {
  return p.intern(Frame{kind, name, file, line, module});
}

// main → work (app.rb:3) → each <cfunc> → hot (app.rb:10): 7; main → work → idle: 3;
// plus a comm key root "ruby" in front of both.
Profile ruby_profile() {
  Profile p;
  p.name = "@";
  p.value_types = {{"samples", "count"}};
  p.period_type = {"cpu", "nanoseconds"};
  p.period = 10101010;
  uint32_t comm = frame(p, FrameKind::Key, "ruby");
  uint32_t main = frame(p, FrameKind::Ruby, "<main>", "app.rb", 20);
  uint32_t work = frame(p, FrameKind::Ruby, "work", "app.rb", 3);
  uint32_t each = frame(p, FrameKind::RubyCfunc, "each");
  uint32_t hot = frame(p, FrameKind::Ruby, "hot", "app.rb", 10);
  uint32_t idle = frame(p, FrameKind::Kernel, "schedule", "", 0, "[kernel]");
  Sample a{{comm, main, work, each, hot}, {7}, {{"comm", "ruby", 0, false, ""}}};
  Sample b{{comm, main, work, idle}, {3}, {{"pid", "", 42, true, ""}}};
  p.samples = {a, b};
  return p;
}

std::string write(Format f, const std::vector<Profile> &ps) {
  std::string out;
  auto err = write_profiles(f, ps, out);
  EXPECT_FALSE(err) << *err;
  return out;
}

std::string gunzip(const std::string &in) {
  z_stream z{};
  inflateInit2(&z, 15 + 16);
  std::string out(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&z, Z_FINISH);
  out.resize(z.total_out);
  inflateEnd(&z);
  return rc == Z_STREAM_END ? out : std::string();
}

std::string run(const std::string &command) {
  std::string out;
  FILE *f = popen(command.c_str(), "r");
  if (!f)
    return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
    out.append(buf, n);
  int status = pclose(f);
  if (status != 0)
    out += "\n[exit status " + std::to_string(status) + "]";
  return out;
}

bool have_go() { return system("go version >/dev/null 2>&1") == 0; }

std::string temp_file(const std::string &name, const std::string &bytes) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace

TEST(ProfileFormats, names_and_extensions_pick_formats) {
  EXPECT_EQ(format_from_path("/tmp/x.folded"), Format::Folded);
  EXPECT_EQ(format_from_path("x.pb.gz"), Format::Pprof);
  EXPECT_EQ(format_from_path("x.pprof"), Format::Pprof);
  EXPECT_EQ(format_from_path("x.speedscope.json"), Format::Speedscope);
  EXPECT_EQ(format_from_path("x.svg"), Format::Svg);
  EXPECT_EQ(format_from_path("x.json"), std::nullopt);
  EXPECT_EQ(format_from_name("pprof"), Format::Pprof);
}

TEST(ProfileFolded, writes_root_first_lines_sorted_with_values) {
  EXPECT_EQ(write(Format::Folded, {ruby_profile()}),
            "ruby;<main> (app.rb:20);work (app.rb:3);each <cfunc>;hot (app.rb:10) 7\n"
            "ruby;<main> (app.rb:20);work (app.rb:3);schedule 3\n");
}

TEST(ProfileFolded, replaces_separators_inside_frame_names) {
  Profile p;
  p.name = "@";
  p.value_types = {{"samples", "count"}};
  uint32_t a = frame(p, FrameKind::Key, "a;b\nc\td");
  uint32_t b = frame(p, FrameKind::Native, "operator<<", "", 0, "/bin/x");
  p.samples = {{{a, b}, {2}, {}}};
  EXPECT_EQ(write(Format::Folded, {p}), "a:b c d;operator<< 2\n");
}

TEST(ProfileFolded, merges_equal_stacks_and_drops_non_positive_values) {
  Profile p;
  p.name = "@";
  p.value_types = {{"sum", "count"}};
  uint32_t a = frame(p, FrameKind::Native, "f");
  uint32_t b = frame(p, FrameKind::Native, "g");
  uint32_t c = frame(p, FrameKind::Native, "f", "", 0, "/other");  // prints the same as a
  p.samples = {{{a, b}, {2}, {}}, {{c, b}, {5}, {}}, {{b}, {-4}, {}}, {{a}, {0}, {}}};
  EXPECT_EQ(write(Format::Folded, {p}), "f;g 7\n");
}

TEST(ProfileFolded, several_maps_get_their_name_as_root) {
  Profile a = ruby_profile(), b = ruby_profile();
  b.name = "@b";
  std::string out = write(Format::Folded, {a, b});
  EXPECT_NE(out.find("@;ruby;<main> (app.rb:20)"), std::string::npos);
  EXPECT_NE(out.find("@b;ruby;<main> (app.rb:20)"), std::string::npos);
}

TEST(ProfileWriters, equal_profiles_give_identical_bytes) {
  for (Format f : {Format::Folded, Format::Pprof, Format::Speedscope, Format::Svg})
    EXPECT_EQ(write(f, {ruby_profile()}), write(f, {ruby_profile()})) << format_name(f);
}

TEST(ProfileSpeedscope, shares_frames_with_files_and_lines) {
  std::string out = write(Format::Speedscope, {ruby_profile()});
  EXPECT_EQ(out.rfind("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"", 0), 0u);
  EXPECT_NE(out.find("{\"name\":\"hot\",\"file\":\"app.rb\",\"line\":10}"), std::string::npos);
  EXPECT_NE(out.find("{\"name\":\"each <cfunc>\"}"), std::string::npos);
  EXPECT_NE(out.find("\"type\":\"sampled\",\"name\":\"@\",\"unit\":\"none\",\"startValue\":0,"
                     "\"endValue\":10,\"samples\":[[0,1,2,3,4],[0,1,2,5]],\"weights\":[7,3]"),
            std::string::npos)
      << out;
}

TEST(ProfileSpeedscope, escapes_json_strings) {
  Profile p;
  p.name = "@\"q\"";
  p.value_types = {{"samples", "count"}};
  p.samples = {{{frame(p, FrameKind::Key, "a\\b\n\x01")}, {1}, {}}};
  std::string out = write(Format::Speedscope, {p});
  EXPECT_NE(out.find("\"name\":\"a\\\\b\\n\\u0001\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"name\":\"@\\\"q\\\"\""), std::string::npos) << out;
}

TEST(ProfileSvg, draws_every_frame_with_title_counts_and_kind_colours) {
  std::string out = write(Format::Svg, {ruby_profile()});
  EXPECT_EQ(out.rfind("<?xml", 0), 0u);
  EXPECT_NE(out.find("<title>hot (app.rb:10)\n7 samples, 70.00%</title>"), std::string::npos);
  EXPECT_NE(out.find("<title>all\n10 samples, 100.00%</title>"), std::string::npos);
  EXPECT_NE(out.find("<title>each &lt;cfunc&gt;\n7 samples, 70.00%</title>"), std::string::npos);
  EXPECT_NE(out.find("window.rbtSearch"), std::string::npos);
  EXPECT_EQ(out.find("http://www.w3.org/2000/svg\" xmlns:xlink"), std::string::npos);
  EXPECT_EQ(out.find("https://"), std::string::npos);  // nothing fetched
}

TEST(ProfileSvg, passes_xmllint) {
  if (system("xmllint --version >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "xmllint is not installed (Debian libxml2-utils)";
  Profile p = ruby_profile();
  p.intern(Frame{FrameKind::Native, "a&b<\"c\">\x02", "", 0, ""});
  p.samples.push_back({{static_cast<uint32_t>(p.frames.size() - 1)}, {1}, {}});
  std::string path = temp_file("rbt_test.svg", write(Format::Svg, {p}));
  EXPECT_EQ(run("xmllint --noout " + path + " 2>&1"), "");
}

TEST(ProfilePprof, is_gzipped_with_the_empty_string_first) {
  std::string out = write(Format::Pprof, {ruby_profile()});
  ASSERT_GT(out.size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>(out[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(out[1]), 0x8b);
  std::string raw = gunzip(out);
  ASSERT_FALSE(raw.empty());
  // string_table (field 6, length-delimited) holds "" before anything else.
  EXPECT_NE(raw.find(std::string("\x32\x00", 2)), std::string::npos);
}

TEST(ProfilePprof, go_tool_pprof_reads_stacks_lines_and_labels) {
  if (!have_go())
    GTEST_SKIP() << "go is not installed (Debian golang-go)";
  std::string path = temp_file("rbt_test.pb.gz", write(Format::Pprof, {ruby_profile()}));
  std::string raw = run("HOME=/tmp go tool pprof -raw " + path + " 2>&1");
  EXPECT_NE(raw.find("samples/count"), std::string::npos) << raw;
  EXPECT_NE(raw.find("PeriodType: cpu nanoseconds"), std::string::npos) << raw;
  EXPECT_NE(raw.find("hot app.rb:10"), std::string::npos) << raw;
  EXPECT_NE(raw.find("comm:[ruby]"), std::string::npos) << raw;
  EXPECT_NE(raw.find("pid:[42]"), std::string::npos) << raw;
  EXPECT_EQ(raw.find("ruby :0"), std::string::npos) << raw;  // the key part is a label only
  std::string top = run("HOME=/tmp go tool pprof -top " + path + " 2>&1");
  // hot is the leaf of 7 of 10 samples: flat 7 (70%).
  EXPECT_NE(top.find("Showing nodes accounting for 10, 100% of 10 total"), std::string::npos)
      << top;
  EXPECT_NE(top.find("         7 70.00% 70.00%          7 70.00%  hot"), std::string::npos) << top;
}

TEST(ProfilePprof, several_maps_have_one_sample_type_each) {
  if (!have_go())
    GTEST_SKIP() << "go is not installed (Debian golang-go)";
  Profile a = ruby_profile(), b = ruby_profile();
  b.name = "@wait";
  b.value_types = {{"wait", "nanoseconds"}};
  for (Sample &s : b.samples)
    s.values[0] *= 1000;
  std::string path = temp_file("rbt_test2.pb.gz", write(Format::Pprof, {a, b}));
  std::string top = run("HOME=/tmp go tool pprof -sample_index=wait -top " + path + " 2>&1");
  EXPECT_NE(top.find("of 10us total"), std::string::npos) << top;
  std::string raw = run("HOME=/tmp go tool pprof -raw " + path + " 2>&1");
  EXPECT_NE(raw.find("samples/count wait/nanoseconds"), std::string::npos) << raw;
  EXPECT_NE(raw.find("map:[@wait]"), std::string::npos) << raw;
}
