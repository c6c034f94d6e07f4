#pragma once
// The lifecycle of one rbt run, in order: parse → check → compile → load → BEGIN → attach →
// run → END → print → detach. Returns the process exit status.

#include "options.h"

namespace rbt {

int run_driver(const Options &options);

}  // namespace rbt
