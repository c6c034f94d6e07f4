#pragma once
// The code generator: typed AST → LLVM IR → optimized BPF ELF object, plus the Manifest that
// tells the runtime what is in it. Deterministic: nothing here looks at the running kernel.

#include <string>
#include <vector>

#include "ast.h"
#include "manifest.h"
#include "result.h"
#include "sema/sema.h"

namespace rbt::codegen {

struct CodegenOptions {
  bool keep_ir = false;      // fill CompiledObject::ir (before optimization) and ir_opt
  bool keep_asm = false;     // fill CompiledObject::asm_text
  // -p: every probe but BEGIN/END ignores other processes (the pid is in RuntimeConfig).
  bool filter_pid = false;
  // rbt runs in a pid namespace of its own (a container, `unshare --pid`): `pid`, `tid` and
  // `pid()` are numbered as that namespace sees them, bpftrace's default (curr_ns). Otherwise
  // the initial namespace's numbers are the same and cheaper to read.
  bool pid_from_own_namespace = false;
  // The BPF instruction set: "v4" (Linux 6.6+) stores immediates straight to memory, one
  // instruction where v3 needs two; the driver picks it when the kernel has it.
  std::string cpu = "v3";
  // The kernel attaches uprobe_multi links (6.6+): a wildcard uprobe's functions in one binary
  // share one program (uprobe_groups.h).
  bool uprobe_multi = false;
  // -k: a warning at run time when a probe_read helper fails, naming the script's place.
  bool warn_failed_reads = false;
  std::string source_name = "stdin";  // for those warnings, and BTF line info
  std::string source_text;            // the script: BTF line info quotes its lines
  // Threads to compile on (partition.h): the driver gives the CPUs it may use. The object
  // links the same programs whatever the number; 1 compiles one module, as -d ir/asm always do.
  unsigned threads = 1;
};

struct CompiledObject {
  std::vector<char> elf;
  Manifest manifest;
  std::string ir, ir_opt, asm_text;
  unsigned parts = 1;  // modules compiled on their own threads and linked into `elf`
};

Result<CompiledObject> compile(const ast::Program &program, const sema::SemaInfo &sema,
                               const CodegenOptions &options);

}  // namespace rbt::codegen
