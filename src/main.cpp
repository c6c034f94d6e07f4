// rbt: command-line parsing; everything else is the driver's.

#include <getopt.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "driver.h"
#include "listing.h"
#include "options.h"

namespace {

const char *kUsage = R"(usage: rbt [options] PROGRAM-FILE [ARGS...]
       rbt [options] -e 'PROGRAM' [ARGS...]

A tracing language for Linux: bpftrace's language, plus Ruby stacks (rstack).

options:
  -e PROGRAM       run PROGRAM given on the command line ('-' as the file reads stdin)
  -c 'COMMAND'     run COMMAND with probes attached before it starts; exit when it exits
  -p PID           trace process PID only; exit when it exits
  -o FILE          write output to FILE instead of stdout
  -f text|json     output format (default text)
  -q               quiet: no "Attached N probes" banner
  -k               warn when a probe_read helper fails (file:line:col: WARNING: ...)
  -v               verbose: libbpf messages and the verifier log on errors
  -l [PATTERN]     list probes matching PATTERN (with -v: tracepoint fields, USDT arguments)
  -d WHAT          dump a stage: ast, types, ir, ir-opt, asm, verifier (repeatable)
  --dry-run        compile, load and verify, then exit without attaching
  --emit-elf FILE  write the compiled BPF object to FILE
  --unsafe         allow unsafe functions (system)
  -V, --version    print the version
  -h, --help       print this help

examples:
  rbt -e 'BEGIN { printf("hello\n"); exit(); }'
  rbt -e 'tracepoint:syscalls:sys_enter_openat { @[comm] = count(); }'
  rbt -e 'profile:hz:99 { @[cpu] = count(); } interval:s:1 { exit(); }'
  rbt -c 'ruby app.rb' -e 'profile:hz:99 /pid == cpid/ { @[rstack] = count(); }'
  rbt -e 'profile:hz:99 { @[pid, rstack] = count(); }'   # every Ruby, started before or after

Options come before a script file; the words after it are its $1..$N.
)";

int usage_error(const std::string &message) {
  fprintf(stderr, "rbt: error: %s\nhint: see 'rbt --help'\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  rbt::Options opts;
  bool have_program = false;
  enum { kDryRun = 256, kEmitElf, kUnsafe, kInfo };
  static const option long_options[] = {
      {"help", no_argument, nullptr, 'h'},      {"version", no_argument, nullptr, 'V'},
      {"dry-run", no_argument, nullptr, kDryRun}, {"emit-elf", required_argument, nullptr, kEmitElf},
      {"unsafe", no_argument, nullptr, kUnsafe},  {nullptr, 0, nullptr, 0},
  };
  opterr = 0;
  int c;
  // Options may follow the script file, as with bpftrace (`rbt script.rbt -c cmd`); a
  // script's own arguments that start with '-' go after `--`.
  while ((c = getopt_long(argc, argv, "e:c:p:o:f:d:qvhVlk", long_options, nullptr)) != -1) {
    switch (c) {
    case 'e':
      opts.program_text = optarg;
      opts.program_name = "stdin";
      have_program = true;
      break;
    case 'c': opts.command = optarg; break;
    case 'p': {
      char *end = nullptr;
      long pid = strtol(optarg, &end, 10);
      if (*optarg == '\0' || *end != '\0' || pid <= 0)
        return usage_error(std::string("-p needs a process id, not '") + optarg + "'");
      opts.pid = static_cast<pid_t>(pid);
      break;
    }
    case 'o': opts.output_file = optarg; break;
    case 'f':
      if (strcmp(optarg, "text") == 0)
        opts.format = rbt::OutputFormat::Text;
      else if (strcmp(optarg, "json") == 0)
        opts.format = rbt::OutputFormat::Json;
      else
        return usage_error(std::string("unknown output format '") + optarg + "' (text or json)");
      break;
    case 'd': {
      static const char *kDumps[] = {"ast", "types", "ir", "ir-opt", "asm", "verifier"};
      bool known = false;
      for (auto *d : kDumps)
        known = known || strcmp(optarg, d) == 0;
      if (!known)
        return usage_error(std::string("unknown dump '") + optarg +
                           "' (ast, types, ir, ir-opt, asm or verifier)");
      opts.dumps.push_back(optarg);
      break;
    }
    case 'q': opts.quiet = true; break;
    case 'v': opts.verbose = true; break;
    case 'l': opts.list = true; break;
    case 'k': opts.warn_failed_reads = true; break;
    case kDryRun: opts.dry_run = true; break;
    case kEmitElf: opts.emit_elf = optarg; break;
    case kUnsafe: opts.unsafe = true; break;
    case 'h': fputs(kUsage, stdout); return 0;
    case 'V': printf("rbt v%s\n", RBT_VERSION); return 0;
    case '?':
    default:
      if (optopt)
        return usage_error(std::string("option -") + static_cast<char>(optopt) +
                           (strchr("ecpofd", optopt) ? " needs an argument" : " is not known"));
      return usage_error(std::string("option '") + argv[optind - 1] + "' is not known");
    }
  }
  if (opts.list) {
    // rbt -l [pattern]: the pattern is the first positional argument; -e plays no part.
    if (optind < argc)
      opts.list_pattern = argv[optind++];
    if (optind < argc)
      return usage_error(std::string("-l takes one pattern; '") + argv[optind] + "' is extra");
    auto s = rbt::runtime::list_probes(opts.list_pattern, opts.pid, opts.verbose, stdout);
    if (!s) {
      const rbt::Error &e = s.error();
      fprintf(stderr, "rbt: error: %s%s%s\n", e.what.c_str(), e.what.empty() ? "" : ": ",
              e.why.c_str());
      if (!e.hint.empty())
        fprintf(stderr, "hint: %s\n", e.hint.c_str());
      return 1;
    }
    return 0;
  }
  if (!have_program) {
    if (optind >= argc)
      return usage_error("no program given (use -e 'PROGRAM' or a script file)");
    std::string path = argv[optind++];
    std::stringstream text;
    if (path == "-") {
      text << std::cin.rdbuf();
      opts.program_name = "stdin";
    } else {
      std::ifstream in(path);
      if (!in) {
        fprintf(stderr, "rbt: error: reading %s: %s\nhint: check the script's path\n", path.c_str(),
                strerror(errno));
        return 1;
      }
      text << in.rdbuf();
      opts.program_name = path;
    }
    opts.program_text = text.str();
  }
  for (int i = optind; i < argc; i++)
    opts.args.push_back(argv[i]);
  return rbt::run_driver(opts);
}
