#pragma once
// The lifecycle of one rbt run, in order: parse → check → compile → load → BEGIN → attach →
// run → END → print → detach. Returns the process exit status.

#include "options.h"

namespace rbt {

namespace runtime {
class Timeline;
}

// `timeline` receives the script's sample() and marker() events (rbt record); null prints them.
int run_driver(const Options &options, runtime::Timeline *timeline = nullptr);

}  // namespace rbt
