// bench/profile_bench (-DRBT_BENCH=ON): times rbt's profile writers on a profile of N distinct
// stacks (default 100,000), the shape of a long 99 Hz rstack profile: 10 to 40 frames deep,
// Ruby frames with files and lines, C methods and a comm key at the root, drawn from a few
// thousand distinct frames. Prints `stacks=N folded_ms=... pprof_ms=... speedscope_ms=...
// svg_ms=... folded_bytes=... pprof_bytes=... svg_bytes=...`, each the median of RUNS (default
// 5) writes. The map-to-profile conversion (reading BPF maps) is not included.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "formats.h"
#include "profile.h"

using namespace rbt::profile;

namespace {

Profile make_profile(size_t stacks) {
  Profile p;
  p.name = "@";
  p.value_types = {{"samples", "count"}};
  p.period_type = {"cpu", "nanoseconds"};
  p.period = 10101010;
  std::mt19937_64 rng(42);
  std::vector<uint32_t> pool;
  for (int i = 0; i < 3000; i++) {
    Frame f;
    if (i % 5 == 0) {
      f.kind = FrameKind::RubyCfunc;
      f.name = "cmethod_" + std::to_string(i);
    } else {
      f.kind = FrameKind::Ruby;
      f.name = "block in Module" + std::to_string(i % 97) + "::Class#method_" + std::to_string(i);
      f.file = "/srv/app/lib/module_" + std::to_string(i % 97) + "/file_" +
               std::to_string(i % 31) + ".rb";
      f.line = static_cast<uint32_t>(10 + i % 400);
    }
    pool.push_back(p.intern(f));
  }
  uint32_t comm = p.intern(Frame{FrameKind::Key, "ruby", "", 0, ""});
  // A shared trunk (the app's entry points) then random branches: distinct stacks, as in a
  // real profile, with common prefixes.
  for (size_t s = 0; s < stacks; s++) {
    Sample sample;
    sample.stack.push_back(comm);
    size_t depth = 10 + rng() % 31;
    for (size_t d = 0; d < depth; d++)
      sample.stack.push_back(pool[d < 4 ? d : (d * 131 + rng() % 600) % pool.size()]);
    sample.stack.push_back(pool[s % pool.size()]);
    sample.values = {static_cast<int64_t>(1 + rng() % 50)};
    p.samples.push_back(std::move(sample));
  }
  return p;
}

double median_ms(Format f, const std::vector<Profile> &ps, int runs, size_t &bytes) {
  std::vector<double> times;
  for (int r = 0; r < runs; r++) {
    std::string out;
    auto t0 = std::chrono::steady_clock::now();
    if (auto err = write_profiles(f, ps, out)) {
      fprintf(stderr, "profile_bench: %s: %s\n", format_name(f), err->c_str());
      exit(1);
    }
    auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    bytes = out.size();
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  size_t stacks = argc > 1 ? strtoull(argv[1], nullptr, 10) : 100000;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  std::vector<Profile> ps{make_profile(stacks)};
  printf("stacks=%zu", stacks);
  size_t folded_bytes = 0, pprof_bytes = 0, svg_bytes = 0, ss_bytes = 0;
  printf(" folded_ms=%.1f", median_ms(Format::Folded, ps, runs, folded_bytes));
  printf(" pprof_ms=%.1f", median_ms(Format::Pprof, ps, runs, pprof_bytes));
  printf(" speedscope_ms=%.1f", median_ms(Format::Speedscope, ps, runs, ss_bytes));
  printf(" svg_ms=%.1f", median_ms(Format::Svg, ps, runs, svg_bytes));
  printf(" folded_bytes=%zu pprof_bytes=%zu speedscope_bytes=%zu svg_bytes=%zu\n", folded_bytes,
         pprof_bytes, ss_bytes, svg_bytes);
  return 0;
}
