#pragma once
// The Ruby stack walker as a BPF object compiled at build time (stdlib/bpf/ruby_stack.bpf.c
// with RBT_RUBY_WALKER_OBJECT): a script that uses rstack only declares its entry points
// (rbt_rstack, rbt_rstack_exact, rbt_rstack_cut, rbt_rstack_anchor, rbt_rstack_reference:
// integers in, an integer out), and libbpf's static linker (link_objects.h) joins the object
// with the script's, so LLVM never compiles the walker at run time. In the loaded program they
// are global BPF functions, which the verifier checks once each, on their own.

#include <llvm/IR/Module.h>

#include <string_view>
#include <vector>

namespace rbt::codegen {

class DebugInfo;

// The walker object built for instruction set `cpu` ("v3", "v4"; see CodegenOptions::cpu).
std::vector<char> ruby_walker_object(std::string_view cpu);

// The declaration of walker entry point `name` taking `params` u64 arguments and returning a
// u64, described in BTF as the static linker requires of an extern function.
llvm::FunctionCallee declare_walker_entry(llvm::Module &module, DebugInfo &debug_info,
                                          const char *name, unsigned params);

}  // namespace rbt::codegen
