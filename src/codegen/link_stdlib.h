#pragma once
// Links BPF library code written in C (stdlib/bpf, embedded as bitcode) into a generated
// module: only the functions the module calls come in, and they become internal (static)
// BPF subprograms, verified in their caller's context.

#include <llvm/IR/Module.h>

#include <string_view>

#include "result.h"

namespace rbt::codegen {

// `library` is a file name of stdlib/bpf without ".bpf.c", e.g. "usdt".
Status link_stdlib(llvm::Module &module, std::string_view library);

}  // namespace rbt::codegen
