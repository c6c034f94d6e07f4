#pragma once
// The rbt program `rbt record` runs: its probes are written in rbt's own language and use the
// timeline builtins sample() and marker(), so `rbt record --print-script` shows a script any
// user can copy, change, and run with `rbt record -e` additions.

#include <string>

namespace rbt {

struct RecordScriptOptions {
  unsigned hz = 99;
  bool off_cpu = false, io = false, faults = false, gc = false;
  // Native stacks by nstack (exact, unwound by CFI), else by ustack (frame pointers).
  bool native = true;
  // The target: "" (every process), a pid, or "cpid" (the -c command).
  std::string target;
};

std::string record_script(const RecordScriptOptions &options);

}  // namespace rbt
