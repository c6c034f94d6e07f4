// rbt report: reads a file `rbt record` wrote and prints it as a top table (text, the
// default) or converts it to another profile format through write_profiles().

#include <getopt.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "filter.h"
#include "firefox_reader.h"
#include "formats.h"
#include "output_file.h"
#include "profile_commands.h"

namespace rbt {

namespace {

const char *kReportUsage = R"(usage: rbt report [-f FORMAT] [-o OUT] [--lines] [--ruby] [FILE]

Reads a profile `rbt record` wrote (FILE, default rbt.json.gz) and prints it.

options:
  -f FORMAT   text (default): a top table, as `go tool pprof -top`: flat and cumulative
              samples and percentages by function; firefox, pprof, speedscope, folded, svg:
              the profile in that format
  -o OUT      write to OUT (the format follows its extension unless -f is given)
  --lines     text: one row per file:line instead of per function
  --ruby      Ruby frames only: each sample counts for the Ruby method it ran in
  -h, --help  print this help
)";

int usage_error(const std::string &message) {
  fprintf(stderr, "rbt: error: %s\nhint: see 'rbt report --help'\n", message.c_str());
  return 2;
}

}  // namespace

int report_main(int argc, char **argv) {
  std::optional<profile::Format> format;
  std::string output;
  profile::WriteOptions options;
  bool ruby_only = false;
  enum { kLines = 256, kRuby };
  static const option long_options[] = {
      {"help", no_argument, nullptr, 'h'},
      {"lines", no_argument, nullptr, kLines},
      {"ruby", no_argument, nullptr, kRuby},
      {nullptr, 0, nullptr, 0},
  };
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "f:o:h", long_options, nullptr)) != -1) {
    switch (c) {
    case 'f':
      format = profile::format_from_name(optarg);
      if (!format)
        return usage_error(std::string("report: unknown format '") + optarg +
                           "' (text, firefox, pprof, speedscope, folded or svg)");
      break;
    case 'o': output = optarg; break;
    case kLines: options.lines = true; break;
    case kRuby: ruby_only = true; break;
    case 'h': fputs(kReportUsage, stdout); return 0;
    default:
      if (optopt)
        return usage_error(std::string("report: option -") + static_cast<char>(optopt) +
                           (strchr("fo", optopt) ? " needs an argument" : " is not known"));
      return usage_error(std::string("report: option '") + argv[optind - 1] + "' is not known");
    }
  }
  std::string input = "rbt.json.gz";
  if (optind < argc)
    input = argv[optind++];
  if (optind < argc)
    return usage_error(std::string("report reads one file; '") + argv[optind] + "' is extra");
  if (!format)
    format = output.empty() ? profile::Format::Top
                            : profile::format_from_path(output).value_or(profile::Format::Top);

  std::ifstream in(input, std::ios::binary);
  if (!in) {
    fprintf(stderr, "rbt: error: reading %s: %s\nhint: record one with 'rbt record -c COMMAND'\n",
            input.c_str(), strerror(errno));
    return 1;
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  profile::Profile profile;
  if (auto err = profile::read_firefox(bytes.str(), profile)) {
    fprintf(stderr, "rbt: error: reading %s: %s\nhint: rbt report reads the files rbt record "
                    "writes (Firefox Profiler JSON, gzipped)\n",
            input.c_str(), err->c_str());
    return 1;
  }
  if (ruby_only)
    profile::keep_ruby_frames(profile);
  std::string out;
  if (auto err = profile::write_profiles(*format, {profile}, out, options)) {
    fprintf(stderr, "rbt: error: writing %s: %s\n", profile::format_name(*format), err->c_str());
    return 1;
  }
  if (output.empty()) {
    if (fwrite(out.data(), 1, out.size(), stdout) != out.size() || fflush(stdout) != 0) {
      fprintf(stderr, "rbt: error: writing output: %s\n", strerror(errno));
      return 1;
    }
    return 0;
  }
  if (auto written = write_output_file(output, out); !written) {
    Error &e = written.error();
    fprintf(stderr, "rbt: error: %s: %s\n", e.what.c_str(), e.why.c_str());
    if (!e.hint.empty())
      fprintf(stderr, "hint: %s\n", e.hint.c_str());
    return 1;
  }
  return 0;
}

}  // namespace rbt
