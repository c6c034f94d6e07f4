#pragma once
// `rbt -l`: lists probes (a pattern, or the probes a script names) and, with -lv, kernel
// struct definitions (`rbt -lv 'struct task_struct'`).

#include "options.h"

namespace rbt {

// Lists what `options` asks for (list_pattern, or the probes of program_text when
// `have_program`); returns the exit status.
int run_list_command(const Options &options, bool have_program);

}  // namespace rbt
