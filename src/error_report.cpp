#include "error_report.h"

#include <cstdio>

namespace rbt {

void print_error(const Error &e, bool verbose) {
  if (!e.diagnostic.empty()) {
    fputs(e.diagnostic.c_str(), stderr);
    if (verbose && !e.detail.empty())
      fprintf(stderr, "%s%s", e.detail.c_str(), e.detail.back() == '\n' ? "" : "\n");
    return;
  }
  std::string msg = e.what;
  if (!e.why.empty())
    msg += (msg.empty() ? "" : ": ") + e.why;
  fprintf(stderr, "rbt: error: %s\n", msg.c_str());
  if (verbose && !e.detail.empty())
    fprintf(stderr, "%s%s", e.detail.c_str(), e.detail.back() == '\n' ? "" : "\n");
  if (!e.hint.empty())
    fprintf(stderr, "hint: %s\n", e.hint.c_str());
}

int fail(const Error &e, bool verbose) {
  print_error(e, verbose);
  return 1;
}

}  // namespace rbt
