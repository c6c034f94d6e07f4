// rbt's whole command line in one call: the subcommands, the options, then the driver.

#include "cli.h"

#include <getopt.h>

#include <cstring>

#include "command_line.h"
#include "driver.h"
#include "profile_commands.h"

int rbt::cli_main(int argc, char **argv) {
  optind = 0;  // getopt starts afresh (the fuzzer calls this again and again)
  // Subcommands (see `rbt record --help`, `rbt report --help`).
  if (argc > 1 && strcmp(argv[1], "record") == 0)
    return rbt::record_main(argc - 1, argv + 1);
  if (argc > 1 && strcmp(argv[1], "report") == 0)
    return rbt::report_main(argc - 1, argv + 1);
  rbt::Options opts;
  if (auto finished = rbt::parse_command_line(argc, argv, opts))
    return *finished;
  return rbt::run_driver(opts);
}
