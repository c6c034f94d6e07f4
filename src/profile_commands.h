#pragma once
// The subcommands `rbt record` (a ready profiler writing a Firefox Profiler file) and
// `rbt report` (a recorded file as a top table or another profile format). Each takes the
// arguments after its name and returns the process exit status.

namespace rbt {

int record_main(int argc, char **argv);
int report_main(int argc, char **argv);

}  // namespace rbt
