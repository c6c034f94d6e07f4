// rbt-full: the whole of rbt (compiler included). `rbt` runs this binary when it cannot start
// a script from the object cache (launcher_main.cpp).

#include <sys/prctl.h>

#include <cstring>

#include "command_line.h"
#include "driver.h"
#include "profile_commands.h"

int main(int argc, char **argv) {
  // rbt runs this binary with its own argv: keep the process name (comm) the user started,
  // which scripts see (`comm`, `curtask->comm`) and filter on.
  if (argc > 0) {
    const char *slash = strrchr(argv[0], '/');
    prctl(PR_SET_NAME, slash ? slash + 1 : argv[0]);
  }
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
