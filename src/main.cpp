// rbt-full: the whole of rbt (compiler included). `rbt` runs this binary when it cannot start
// a script from the object cache (launcher_main.cpp).

#include <sys/prctl.h>

#include <cstring>

#include "cli.h"

int main(int argc, char **argv) {
  // rbt runs this binary with its own argv: keep the process name (comm) the user started,
  // which scripts see (`comm`, `curtask->comm`) and filter on.
  if (argc > 0) {
    const char *slash = strrchr(argv[0], '/');
    prctl(PR_SET_NAME, slash ? slash + 1 : argv[0]);
  }
  return rbt::cli_main(argc, argv);
}
