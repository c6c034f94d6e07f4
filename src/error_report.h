#pragma once
// How rbt reports an Error from the environment or the kernel: `rbt: error: what: why`, the
// -v detail, `hint: ...`; a script error as its rendered diagnostic.

#include "result.h"

namespace rbt {

void print_error(const Error &e, bool verbose);
// Prints `e` and returns the exit status 1.
int fail(const Error &e, bool verbose);

}  // namespace rbt
