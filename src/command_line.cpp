// rbt's command line: the options, the usage text, and what finishes without running a script
// (--help, --version, --list-tools, -l, usage errors). Shared by rbt and rbt-full.

#include "command_line.h"

#include <getopt.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "formats.h"
#include "info_command.h"
#include "list_command.h"
#include "probe_filter.h"
#include "script_args.h"
#include "script_text.h"
#include "tools.h"
#include "warnings.h"

namespace {

// The synopsis, a "USAGE:" section as in bpftrace's help; usage errors print it too.
const char *kSynopsis = R"(USAGE:
    rbt [options] PROGRAM-FILE [options] [ARGS...] [-- ARGS... --NAME=VALUE...]
    rbt [options] -e 'PROGRAM' [ARGS...] [-- ARGS... --NAME=VALUE...]
    rbt TOOL [-p PID | -c 'COMMAND'] [options] [ARGS...]   (a stdlib tool, by name)
    rbt --list-tools
    rbt record [-p PID | -c 'COMMAND'] [-F HZ] [--off-cpu] [--io] [--faults] [--gc] [-o FILE]
    rbt report [-f text|firefox|pprof|speedscope|folded|svg] [-o OUT] [--lines] [FILE]
)";

const char *kUsage = R"(
A tracing language for Linux: bpftrace's language, plus Ruby stacks (rstack).

options:
  -e PROGRAM       run PROGRAM given on the command line ('-' as the file reads stdin)
  -c, --cmd 'COMMAND'
                   run COMMAND with probes attached before it starts; exit when it exits
  -p, --pid PID    uprobes/USDT/software/profile in process PID only; exit when it exits
  -o, --output FILE
                   write output to FILE instead of stdout (.folded, .pb.gz, .pprof,
                   .speedscope.json, .svg: that profile format when -f is not given)
  -f FORMAT        output format: text (default), json, or a profile of the stack maps:
                   folded, pprof, speedscope, svg (see profiles below)
  -q               quiet: no "Attached N probes" banner
  -k               warn when a probe_read helper fails or a map read finds no key
  --no-warnings    print no warnings (the checker's, -k's, the runtime's)
  --include FILE   as if `#include <FILE>` were the script's first line (its integer macros);
                   repeatable
  --usdt-file-activation
                   accepted, changes nothing: without -p/-c the kernel already activates USDT
                   semaphores in every process that maps the probed file (running or started
                   later); with -p/-c, in that process only, the one whose probes fire
  -v               verbose: libbpf messages and the verifier log on errors
  -l [PATTERN]     list probes matching PATTERN (with -v: tracepoint fields, raw tracepoint
                   and USDT arguments);
                   -l SCRIPT-FILE or -l -e 'PROGRAM': the probes the script attaches to;
                   -lv 'struct NAME': a kernel struct's definition (from BTF)
  -d WHAT          dump a stage: ast, types, ir, ir-opt, asm, verifier (repeatable)
  --probe-filter REGEX
                   attach only the probes whose names REGEX matches (BEGIN/END always)
  --info           print rbt's build and what this kernel supports
  --mode bench, --bench
                   run the bench:NAME probes, each repeatedly, and print the average time
                   of one run (other probes are not attached; BEGIN and END run)
  --dry-run        compile, load and verify, then exit without attaching
  --emit-elf FILE  write the compiled BPF object to FILE
  --no-cache       compile the script, without reusing or keeping a compiled object
                   (cached in /var/cache/rbt, or $RBT_CACHE_DIR)
  --unsafe         allow unsafe functions (system) and uprobes rbt cannot prove
                   to be on an instruction boundary
  --sum-unit UNIT  profiles: what sum() maps add up (nanoseconds, bytes, ...; default count)
  --list-tools     list the stdlib tools run by name (rbt rubyprofile -p PID) and their purpose
  -V, --version    print the version
  -h, --help       print this help

profiles:
  Maps keyed by kstack, ustack or rstack (alone or with comm, pid, ... in a tuple) with count()
  or sum() values are written at exit as a profile: -f folded (flamegraph.pl, inferno,
  speedscope), pprof (go tool pprof, Pyroscope, Grafana; gzipped), speedscope (speedscope.app),
  svg (an interactive flamegraph for any browser). -o FILE picks the format from its extension
  (.folded, .pb.gz or .pprof, .speedscope.json, .svg) when -f is not given. --sum-unit names
  the unit of sum() values (e.g. nanoseconds of off-CPU time). The profile goes to
  -o FILE (else stdout); printf and print() output goes to stdout as text (stderr without -o).

examples:
  rbt -e 'BEGIN { printf("hello\n"); exit(); }'
  rbt -e 'tracepoint:syscalls:sys_enter_openat { @[comm] = count(); }'
  rbt -e 'profile:hz:99 { @[cpu] = count(); } interval:s:1 { exit(); }'
  rbt -c 'ruby app.rb' -e 'profile:hz:99 /pid == cpid/ { @[rstack] = count(); }'
  rbt -e 'profile:hz:99 { @[pid, rstack] = count(); }'   # every Ruby, started before or after
  rbt -c 'ruby app.rb' -e 'profile:hz:99 /pid == cpid/ { @[rstack] = count(); }' -o app.svg
  rbt -c 'ruby app.rb' -e 'profile:hz:99 /strcontains(rstack, "index")/ { @[rlabel(-3)] = count(); }'
  rbt -c 'ruby app.rb' -e 'profile:hz:99 /pid == cpid/ { @[rstack(native)] = count(); }'
      (one stack: Ruby frames, the C extension and libc frames under them, kernel frames;
       nstack alone is the native stack unwound by DWARF CFI, exact without frame pointers)
  rbt record -c 'ruby app.rb' --off-cpu   (then: rbt report, or profiler.firefox.com)

Ruby frames: rlabel([stack, ]i), rpath([stack, ]i), rline([stack, ]i): the frame i from the
leaf (0, 1, ...) or the root (-1, -2, ...); strcontains(rstack, "text"): a frame's label has it.

Arguments: options may come before or after the script file; the other words after it are
its positional parameters $1..$N. `--` ends the options: after it, words starting with '-'
are positional parameters too, and --NAME=VALUE or --NAME are named parameters, read by
getopt("NAME", DEFAULT) (a number, string or boolean, as the default; no default: a boolean,
true when --NAME is given):
  rbt script.rbt -p 123 500 -- --min=10 --verbose    ($1 is 500, getopt("min", 0) is 10)
Tools: `rbt rubyprofile -c 'ruby app.rb'` runs stdlib/rubyprofile.rbt; the header of each tool
(its source, see --list-tools) explains its arguments and output.
)";

// The profile formats -f takes for stack maps (firefox and text tables belong to rbt report).
bool is_map_profile_format(std::string_view name) {
  using rbt::profile::Format;
  auto f = rbt::profile::format_from_name(name);
  return f && (*f == Format::Folded || *f == Format::Pprof || *f == Format::Speedscope ||
               *f == Format::Svg);
}

int usage_error(const std::string &message) {
  fprintf(stderr, "rbt: error: %s\nhint: see 'rbt --help'\n", message.c_str());
  return 2;
}

// An option rbt does not know: the error, then the synopsis (bpftrace prints its usage).
int unknown_option(const std::string &message) {
  fprintf(stderr, "rbt: error: %s\n%shint: see 'rbt --help'\n", message.c_str(), kSynopsis);
  return 2;
}

}  // namespace

namespace rbt {

std::optional<int> parse_command_line(int argc, char **argv, Options &opts) {
  bool have_program = false;
  std::string tool_name;  // the script's file or tool name as given
  bool format_given = false;
  enum { kDryRun = 256, kEmitElf, kUnsafe, kInfo, kSumUnit, kListTools, kNoCache, kNoWarnings,
         kInclude, kUsdtFileActivation, kProbeFilter, kAot, kMode, kBench };
  static const option long_options[] = {
      {"help", no_argument, nullptr, 'h'},      {"version", no_argument, nullptr, 'V'},
      {"dry-run", no_argument, nullptr, kDryRun}, {"emit-elf", required_argument, nullptr, kEmitElf},
      {"unsafe", no_argument, nullptr, kUnsafe},
      {"sum-unit", required_argument, nullptr, kSumUnit},
      {"list-tools", no_argument, nullptr, kListTools},
      {"no-cache", no_argument, nullptr, kNoCache},
      // bpftrace's long spellings of -p, -c and -o, and its options with no short form.
      {"pid", required_argument, nullptr, 'p'}, {"cmd", required_argument, nullptr, 'c'},
      {"output", required_argument, nullptr, 'o'},
      {"no-warnings", no_argument, nullptr, kNoWarnings},
      {"include", required_argument, nullptr, kInclude},
      {"usdt-file-activation", no_argument, nullptr, kUsdtFileActivation},
      {"probe-filter", required_argument, nullptr, kProbeFilter},
      {"info", no_argument, nullptr, kInfo},
      {"aot", required_argument, nullptr, kAot},
      {"mode", required_argument, nullptr, kMode}, {"bench", no_argument, nullptr, kBench},
      {nullptr, 0, nullptr, 0},
  };
  opterr = 0;
  warnings_suppressed = false;  // afresh, as optind (the fuzzer parses again and again)
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
    case 'c':
      // An empty command would run nothing and leave every probe unscoped.
      if (optarg[strspn(optarg, " \t\n")] == '\0')
        return usage_error("-c needs a command, not an empty string");
      opts.command = optarg;
      break;
    case 'p': {
      // A pid_t is 32 bits: 4294967297 must not wrap to PID 1, nor a huge number to -1 (every
      // process), so anything strtol cannot hold or a pid_t cannot hold is refused.
      char *end = nullptr;
      errno = 0;
      long pid = strtol(optarg, &end, 10);
      if (*optarg == '\0' || *end != '\0' || errno == ERANGE || pid <= 0 || pid > INT32_MAX)
        return usage_error(std::string("-p needs a process id, not '") + optarg + "'");
      opts.pid = static_cast<pid_t>(pid);
      break;
    }
    case 'o': opts.output_file = optarg; break;
    case 'f':
      format_given = true;
      opts.profile_format.clear();
      if (strcmp(optarg, "text") == 0)
        opts.format = OutputFormat::Text;
      else if (strcmp(optarg, "json") == 0)
        opts.format = OutputFormat::Json;
      else if (is_map_profile_format(optarg))
        opts.profile_format = optarg;
      else
        return usage_error(std::string("unknown output format '") + optarg +
                           "' (text, json, folded, pprof, speedscope or svg)");
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
    case kNoCache: opts.no_cache = true; break;
    case kNoWarnings: warnings_suppressed = true; break;
    case kInclude: opts.includes.push_back(optarg); break;
    // USDT semaphores are uprobe reference counters the kernel keeps in every process the
    // probe is attached to: every process mapping the file without -p/-c, as this asks.
    case kUsdtFileActivation: break;
    case kProbeFilter: {
      std::string why;
      if (!valid_probe_filter(optarg, why))
        return usage_error(std::string("Invalid --probe-filter regex '") + optarg + "': " + why);
      opts.probe_filter = optarg;
      break;
    }
    case kInfo: return print_info(stdout);
    // bpftrace's modes: run (the default) and bench (its micro benchmarks, bench: probes).
    case kMode:
      if (strcmp(optarg, "bench") == 0)
        opts.bench = true;
      else if (strcmp(optarg, "run") == 0)
        opts.bench = false;
      else
        return usage_error(std::string("unknown mode '") + optarg + "' (run or bench)");
      break;
    case kBench: opts.bench = true; break;
    // bpftrace's ahead-of-time binaries: rbt's answer to compile-once is its object cache.
    case kAot:
      return usage_error("--aot is not supported: rbt builds no ahead-of-time binaries; a "
                         "script's compiled object is cached and reused (see --no-cache)");
    case kSumUnit: {
      static const char *kUnits[] = {"count", "nanoseconds", "microseconds", "milliseconds",
                                     "seconds", "bytes"};
      bool known = false;
      for (auto *u : kUnits)
        known = known || strcmp(optarg, u) == 0;
      if (!known)
        return usage_error(std::string("unknown --sum-unit '") + optarg +
                           "' (count, nanoseconds, microseconds, milliseconds, seconds or bytes)");
      opts.sum_unit = optarg;
      break;
    }
    case kListTools:
      if (list_tools(stdout) == 0) {
        fprintf(stderr, "rbt: error: no stdlib tools found\nhint: looked in");
        for (const auto &d : tool_dirs())
          fprintf(stderr, " %s", d.c_str());
        fprintf(stderr, "; set RBT_TOOLS_DIR to the stdlib directory\n");
        return 1;
      }
      return 0;
    case 'h': fputs(kSynopsis, stdout); fputs(kUsage, stdout); return 0;
    case 'V': printf("rbt v%s\n", RBT_VERSION); return 0;
    case '?':
    default:
      // optopt is the option whose argument is missing (a long one's value, a short one's
      // letter), or the unknown letter; 0 for an unknown long option.
      if (optopt && strncmp(argv[optind - 1], "--", 2) == 0) {
        std::string word = argv[optind - 1];
        if (size_t eq = word.find('='); eq != std::string::npos)
          return usage_error("option '" + word.substr(0, eq) + "' takes no value");
        return usage_error("option '" + word + "' needs an argument");
      }
      if (optopt && strchr("ecpofd", optopt))
        return usage_error(std::string("option -") + static_cast<char>(optopt) +
                           " needs an argument");
      if (optopt)
        return unknown_option(std::string("option -") + static_cast<char>(optopt) +
                              " is not known");
      return unknown_option(std::string("option '") + argv[optind - 1] + "' is not known");
    }
  }
  // bpftrace refuses both at once too; rbt would otherwise scope probes to one and drop the other.
  if (opts.pid != -1 && !opts.command.empty())
    return usage_error("-p and -c cannot be used together (trace one process: a PID or a command)");
  // -o app.svg without -f: the extension names the profile format.
  if (!format_given && !opts.output_file.empty())
    if (auto f = profile::format_from_path(opts.output_file))
      if (is_map_profile_format(profile::format_name(*f)))
        opts.profile_format = profile::format_name(*f);
  if (opts.list) {
    // rbt -l [pattern | script]: the pattern is the first positional argument; with -e, the
    // program's probes are listed.
    if (optind < argc && !have_program)
      opts.list_pattern = argv[optind++];
    if (optind < argc)
      return usage_error(std::string("-l takes one pattern; '") + argv[optind] + "' is extra");
    return run_list_command(opts, have_program);
  }
  if (!have_program) {
    if (optind >= argc)
      return usage_error("no program given (use -e 'PROGRAM' or a script file)");
    std::string path = argv[optind++];
    tool_name = path;
    std::optional<std::string> text;
    if (path == "-") {
      text = read_script_text(std::cin);
      opts.program_name = "stdin";
    } else {
      // A word that is no file but the name of a stdlib tool runs the tool (rbt rubyprofile).
      std::error_code ec;
      if (!std::filesystem::exists(path, ec))
        if (auto tool = find_tool(path))
          path = *tool;
      std::ifstream in(path);
      if (!in && errno == ENOENT && path.find('/') == std::string::npos) {
        std::string message = "'" + path + "' is neither a script file nor a stdlib tool";
        auto close = close_tool_names(path);
        if (!close.empty()) {
          message += " (did you mean:";
          for (const auto &n : close)
            message += " " + n;
          message += "?)";
        }
        fprintf(stderr, "rbt: error: %s\nhint: 'rbt --list-tools' lists the tools\n", message.c_str());
        return 2;
      }
      if (!in) {
        fprintf(stderr, "rbt: error: reading %s: %s\nhint: check the script's path\n", path.c_str(),
                strerror(errno));
        return 1;
      }
      text = read_script_text(in);
      opts.program_name = path;
    }
    if (!text) {
      fprintf(stderr, "rbt: error: reading %s: %s\nhint: give a script file\n",
              opts.program_name.c_str(), script_too_long_message().c_str());
      return 1;
    }
    opts.program_text = std::move(*text);
  }
  if (auto bad = add_script_args({argv + optind, argv + argc}, opts))
    return usage_error(*bad);
  // A script's header may declare defaults for the arguments it was not given, and that it
  // attaches to one process only.
  if (!opts.program_text.empty() && opts.program_name != "stdin") {
    if (tool_needs_target(opts.program_text) && opts.pid < 0 && opts.command.empty() &&
        !opts.dry_run)
      return usage_error(tool_name + " attaches to one process only (its USDT probes "
                         "slow every process they reach): give -p PID or -c 'COMMAND'");
    auto defaults = tool_defaults(opts.program_text);
    for (size_t i = opts.args.size(); i < defaults.size(); i++)
      opts.args.push_back(defaults[i]);
    // A tool whose argument is a syscall takes its name (write) as well as its number.
    if (size_t n = tool_syscall_argument(opts.program_text); n && n <= opts.args.size()) {
      std::string &arg = opts.args[n - 1];
      if (!arg.empty() && arg.find_first_not_of("-0123456789") != std::string::npos) {
        auto nr = syscall_number(arg);
        if (!nr)
          return usage_error("'" + arg + "' is not a syscall name (" + tool_name +
                             " takes a name such as write, or a number)");
        arg = std::to_string(*nr);
      }
    }
  }
  return std::nullopt;
}

}  // namespace rbt
