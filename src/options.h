#pragma once
// Command-line options, parsed by main.cpp and consumed by the driver.

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rbt {

enum class OutputFormat { Text, Json };

struct Options {
  std::string program_text;   // -e, or the script file's contents
  std::string program_name;   // "stdin" for -e, else the script's path
  std::vector<std::string> args;  // positional parameters after the script
  // Named parameters after `--`: --name=value, or --name alone (nullopt); getopt() reads them.
  std::map<std::string, std::optional<std::string>> named_args;
  std::vector<std::string> includes;  // --include FILE: as if `#include <FILE>` began the script
  std::string command;        // -c
  pid_t pid = -1;             // -p
  std::string output_file;    // -o
  OutputFormat format = OutputFormat::Text;
  // -f folded|pprof|speedscope|svg (or -o FILE's extension): the stack maps at exit are written
  // as that profile format to -o FILE (else stdout); text output then goes to stdout (else
  // stderr). Empty: no profile.
  std::string profile_format;
  std::string sum_unit = "count";  // --sum-unit: the unit of sum() maps in a profile
  std::vector<std::string> dumps;  // -d ast|types|ir|ir-opt|asm|verifier
  std::string emit_elf;       // --emit-elf FILE
  bool dry_run = false;
  bool quiet = false;
  bool warn_failed_reads = false;  // -k
  bool verbose = false;
  bool unsafe = false;
  bool bench = false;         // --mode bench: time the bench: probes (Session::run_benchmarks)
  bool no_cache = false;      // --no-cache: compile, and keep nothing (cache/object_cache.h)
  bool list = false;          // -l
  // rbt record: its script filters the target itself (off-CPU markers end in other tasks) and
  // its maps are bookkeeping, not output.
  bool filter_pid_in_probes = true;
  bool print_maps_at_exit = true;
  bool rstack_needs_ruby = true;  // record: -p of a native process has empty Ruby stacks
  uint32_t ringbuf_bytes = 0;     // record: a larger event ring buffer (0: as compiled)
  std::string list_pattern;
  std::string probe_filter;  // --probe-filter REGEX (probe_filter.h)

  bool wants_dump(const char *what) const {
    for (auto &d : dumps)
      if (d == what)
        return true;
    return false;
  }
};

}  // namespace rbt
