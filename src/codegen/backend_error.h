#pragma once
// LLVM's BPF back end reports some errors (a stack over 512 bytes) as
//   <file>:0:0: in function probe_3 i32 (ptr): <message>
// where <file> is whichever stdlib header the function's first instruction came from. This
// turns one into an error on the script: a caret under the probe the function was generated
// for (loop callbacks are probe_3_loop, probe_3_for), with advice where the message is known.

#include <map>
#include <string>

#include "ast.h"
#include "result.h"

namespace rbt::codegen {

// `function_probes`: each generated probe function's name and the probe it serves.
Error backend_error(const std::string &text,
                    const std::map<std::string, const ast::Probe *> &function_probes,
                    const std::string &source_name, const std::string &source_text);

}  // namespace rbt::codegen
