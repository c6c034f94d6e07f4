// rbt: starts a script from the object cache when it can, without the parser or LLVM (whose
// static initialisers alone cost ~25 MiB of resident code and tens of milliseconds); otherwise
// it runs rbt-full, the whole of rbt, installed next to it, with the same arguments. rbt-full
// then does everything as if it had been started directly (compiles, reports a damaged entry,
// stores the object), so the behaviour is the same whichever binary runs the script.

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cache_key.h"
#include "command_line.h"
#include "object_cache.h"
#include "privileges.h"
#include "run_object.h"

namespace {

[[noreturn]] void run_full(char **argv) {
  std::string full = rbt::cache::full_binary_path();
  execv(full.c_str(), argv);
  fprintf(stderr, "rbt: error: running %s: %s\nhint: rbt-full is installed next to rbt\n",
          full.c_str(), strerror(errno));
  _exit(1);
}

}  // namespace

int main(int argc, char **argv) {
  // Subcommands, and a script read from stdin (which only one process can read), go to
  // rbt-full straight away.
  if (argc > 1 && (strcmp(argv[1], "record") == 0 || strcmp(argv[1], "report") == 0))
    run_full(argv);
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "-") == 0)
      run_full(argv);
  rbt::Options opts;
  if (auto finished = rbt::parse_command_line(argc, argv, opts))
    return *finished;
  if (!rbt::check_tracing_privileges())
    run_full(argv);  // which says what is missing
  // Quietly: on a miss rbt-full looks again and says what was wrong with the entry.
  auto cache = rbt::cache::ObjectCache::open(opts, /*report=*/false);
  std::string why_not;
  auto entry = cache.lookup(why_not, /*report=*/false, rbt::resolves_in(opts));
  if (!entry)
    run_full(argv);
  cache.announce(*entry, opts.verbose);
  return rbt::run_object(opts, *entry, cache, nullptr);
}
