// rbt record: compiles the record script (record_script.cpp) and runs it through the normal
// driver with a Recorder as the timeline, then writes the Firefox Profiler file. The file is
// written after the session ends for any reason (Ctrl-C, SIGTERM, the -c command exiting,
// exit()), from what was recorded until then, so it is always complete.

#include <getopt.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "driver.h"
#include "formats.h"
#include "output_file.h"
#include "profile_commands.h"
#include "record_script.h"
#include "recorder.h"
#include "script_text.h"

namespace rbt {

namespace {

const char *kRecordUsage = R"(usage: rbt record [-p PID | -c 'COMMAND'] [-F HZ] [--off-cpu] [--io] [--faults]
                  [--gc] [--no-native] [-o FILE] [-e 'PROGRAM' | PROGRAM-FILE]

Records a timeline profile: on-CPU samples (99 Hz by default) with their mixed stack, one
stack from the Ruby methods through the native code each C method ran (unwound exactly, as
nstack) down to the kernel, and with the options off-CPU intervals, block I/O, page faults and
Ruby GC phases as markers with the same stacks. Writes a Firefox Profiler file (gzipped Gecko JSON, default rbt.json.gz): open it at
https://profiler.firefox.com (Load a profile from file), or read it with `rbt report`.
Stops on Ctrl-C, SIGTERM, or when the -p process or -c command ends; the file is complete.

options:
  -p PID           record process PID only
  -c 'COMMAND'     run COMMAND and record it until it exits
                   (neither: every process on the machine)
  -F HZ            on-CPU samples per second per CPU (default 99)
  --off-cpu        each blocked interval (sched_switch) with the stacks it blocked in
  --io             each block I/O request, issue to completion: bytes, device, latency, stacks
  --faults         each page fault with its stacks
  --gc             Ruby GC mark and sweep phases (libruby's USDT probes; needs -p or -c)
  --no-native      native frames by frame pointers (ustack), not unwound by CFI (nstack):
                   cheaper per sample (nstack costs some 5-10 us), but frames are lost in
                   code built without frame pointers (libruby, libc, C extensions) and
                   appended after the Ruby stack instead of under their C method
  -o FILE          the profile file (default rbt.json.gz)
  -e PROGRAM       more probes: sample(stacks...) and marker("NAME", start, end, pid, tid,
                   [ints...,] [stacks...]) put their events on the same timeline
  --print-script   print the rbt program record runs, then exit
  -q               no banner
  -v               verbose
  -h, --help       print this help

examples:
  rbt record -c 'ruby app.rb' --off-cpu --gc
  rbt report rbt.json.gz
)";

int usage_error(const std::string &message) {
  fprintf(stderr, "rbt: error: %s\nhint: see 'rbt record --help'\n", message.c_str());
  return 2;
}

bool write_file(const std::string &path, const std::string &bytes, std::string &why) {
  // A device or FIFO (/dev/stdout, /dev/full) is written as it is: renaming over it is wrong.
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    auto written = write_output_file(path, bytes);
    if (!written)
      why = written.error().why;
    return bool(written);
  }
  // Written beside the target and renamed: a reader never sees half a file.
  std::string tmp = path + ".tmp";
  if (auto written = write_output_file(tmp, bytes); !written) {
    why = written.error().why;
    unlink(tmp.c_str());
    return false;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    why = strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace

int record_main(int argc, char **argv) {
  Options opts;
  RecordScriptOptions script;
  std::string output = "rbt.json.gz", extra, extra_name;
  bool print_script = false;
  enum { kOffCpu = 256, kIo, kFaults, kGc, kPrintScript, kNoNative };
  static const option long_options[] = {
      {"help", no_argument, nullptr, 'h'},       {"off-cpu", no_argument, nullptr, kOffCpu},
      {"io", no_argument, nullptr, kIo},         {"faults", no_argument, nullptr, kFaults},
      {"gc", no_argument, nullptr, kGc},         {"print-script", no_argument, nullptr, kPrintScript},
      {"no-native", no_argument, nullptr, kNoNative},
      {nullptr, 0, nullptr, 0},
  };
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "p:c:F:o:e:qvh", long_options, nullptr)) != -1) {
    switch (c) {
    case 'p': {
      char *end = nullptr;
      long pid = strtol(optarg, &end, 10);
      if (*optarg == '\0' || *end != '\0' || pid <= 0)
        return usage_error(std::string("-p needs a process id, not '") + optarg + "'");
      opts.pid = static_cast<pid_t>(pid);
      break;
    }
    case 'c': opts.command = optarg; break;
    case 'F': {
      char *end = nullptr;
      long hz = strtol(optarg, &end, 10);
      if (*optarg == '\0' || *end != '\0' || hz < 1 || hz > 10000)
        return usage_error(std::string("-F needs a rate from 1 to 10000 Hz, not '") + optarg +
                           "'");
      script.hz = static_cast<unsigned>(hz);
      break;
    }
    case 'o': output = optarg; break;
    case 'e':
      extra = optarg;
      extra_name = "stdin";
      break;
    case 'q': opts.quiet = true; break;
    case 'v': opts.verbose = true; break;
    case kOffCpu: script.off_cpu = true; break;
    case kIo: script.io = true; break;
    case kFaults: script.faults = true; break;
    case kGc: script.gc = true; break;
    case kPrintScript: print_script = true; break;
    case kNoNative: script.native = false; break;
    case 'h': fputs(kRecordUsage, stdout); return 0;
    default:
      if (optopt)
        return usage_error(std::string("record: option -") + static_cast<char>(optopt) +
                           (strchr("pcFoe", optopt) ? " needs an argument" : " is not known"));
      return usage_error(std::string("record: option '") + argv[optind - 1] + "' is not known");
    }
  }
  if (optind < argc) {
    if (!extra.empty() || optind + 1 < argc)
      return usage_error("record takes one program (-e or a file), not '" +
                         std::string(argv[optind]) + "'");
    std::ifstream in(argv[optind]);
    if (!in) {
      fprintf(stderr, "rbt: error: reading %s: %s\nhint: check the script's path\n",
              argv[optind], strerror(errno));
      return 1;
    }
    auto text = read_script_text(in);
    if (!text) {
      fprintf(stderr, "rbt: error: reading %s: %s\nhint: give a script file\n", argv[optind],
              script_too_long_message().c_str());
      return 1;
    }
    extra = std::move(*text);
    extra_name = argv[optind];
  }
  if (opts.pid > 0 && !opts.command.empty())
    return usage_error("record: -p and -c cannot be used together");
  if (script.gc && opts.pid <= 0 && opts.command.empty())
    return usage_error("record: --gc needs -p PID or -c COMMAND (the Ruby to watch)");
  script.target = opts.pid > 0 ? std::to_string(opts.pid) : !opts.command.empty() ? "cpid" : "";
  opts.program_text = record_script(script);
  opts.program_name = "record.rbt";
  if (!extra.empty()) {
    // The user's probes follow ours; their line numbers are off by ours in messages, so the
    // name says where the script starts.
    opts.program_text += "\n// " + extra_name + "\n" + extra;
  }
  if (print_script) {
    fputs(opts.program_text.c_str(), stdout);
    return 0;
  }
  opts.filter_pid_in_probes = false;
  opts.print_maps_at_exit = false;
  opts.rstack_needs_ruby = false;
  // 16 MiB of events (some 150,000): the reader falls behind while it reads the symbols of
  // processes it meets for the first time, most of all when recording every process.
  opts.ringbuf_bytes = 16u << 20;
  bool quiet = opts.quiet;
  opts.quiet = true;  // no "Attaching N probes": record says what it records instead
  int64_t period = static_cast<int64_t>(1000000000ull / script.hz);
  runtime::Recorder recorder("rbt record", period);
  if (!quiet)
    fprintf(stderr, "rbt: recording %s at %u Hz%s%s%s%s to %s; Ctrl-C to stop\n",
            opts.pid > 0 ? ("process " + std::to_string(opts.pid)).c_str()
            : !opts.command.empty() ? "the command"
                                     : "every process",
            script.hz, script.off_cpu ? ", off-CPU" : "", script.io ? ", block I/O" : "",
            script.faults ? ", page faults" : "", script.gc ? ", Ruby GC" : "", output.c_str());
  int code = run_driver(opts, &recorder);
  profile::Profile profile = recorder.finish();
  if (code != 0 && profile.samples.empty() && profile.markers.empty())
    return code;  // nothing was recorded: the error was printed, no file is written
  std::string bytes;
  if (auto err = profile::write_profiles(profile::Format::Firefox, {profile}, bytes)) {
    fprintf(stderr, "rbt: error: writing %s: %s\n", output.c_str(), err->c_str());
    return 1;
  }
  std::string why;
  if (!write_file(output, bytes, why)) {
    fprintf(stderr, "rbt: error: writing %s: %s\nhint: check the directory and its space\n",
            output.c_str(), why.c_str());
    return 1;
  }
  fprintf(stderr, "rbt: wrote %s: %zu samples, %zu markers, %zu threads, %llu lost\n",
          output.c_str(), profile.samples.size(), profile.markers.size(), profile.threads.size(),
          static_cast<unsigned long long>(profile.lost));
  return code;
}

}  // namespace rbt
