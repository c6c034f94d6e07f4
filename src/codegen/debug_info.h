#pragma once
// BTF through DWARF: the BPF backend turns debug info into .BTF/.BTF.ext, and libbpf reads
// map definitions from BTF only. This builds what clang emits for
//   struct { __uint(type, T); __uint(max_entries, N); __type(key, K); __type(value, V); } m
//       SEC(".maps");
// and a DISubprogram for every generated function (the kernel rejects partial func info).

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/Module.h>

#include <string>

#include "record_layout.h"

namespace rbt::codegen {

class DebugInfo {
public:
  // `file_name` and `source` are the script's: BTF line info (verifier logs, bpftool) quotes
  // its lines. With the source given, LLVM never reads a file named like the script.
  DebugInfo(llvm::Module &module, const std::string &file_name, const std::string &source);

  // Declares a BTF-described map global named `name` in section ".maps". key_size and
  // value_size of 0 leave out the key/value members (ring buffers).
  llvm::GlobalVariable *define_map(const std::string &name, unsigned map_type,
                                   uint64_t max_entries, uint64_t key_size, uint64_t value_size);
  // Like define_map, but key and value are described only by size (`__uint(key_size, 4)`):
  // stack trace maps reject BTF key/value types.
  llvm::GlobalVariable *define_sized_map(const std::string &name, unsigned map_type,
                                         uint64_t max_entries, uint64_t key_size,
                                         uint64_t value_size);
  // A zeroed 64-bit global in .bss (`unsigned long long name;`), which user space reads through
  // libbpf's .bss map. Described in BTF, as the static linker requires of every global.
  llvm::GlobalVariable *define_counter(const std::string &name);
  // `char _license[] SEC("license") = "GPL";`, which the kernel checks for GPL-only helpers.
  llvm::GlobalVariable *define_license();
  // Attaches a subprogram `int fn(void *ctx)` to `fn`, or with `params` pointer parameters
  // named p0.. (a for-over-map callback: map, key, value, context).
  llvm::DISubprogram *describe_function(llvm::Function &fn, unsigned line, unsigned params = 0);
  // Describes the declaration `fn` of a function defined in another object (link_walker.h):
  // `unsigned long long fn(unsigned long long, ...)` with `params` arguments, as clang
  // describes it, for the static linker to match against the definition's BTF.
  void describe_extern(llvm::Function &fn, unsigned params);
  // `extern T name __ksym;`: a kernel variable libbpf resolves by its BTF (typed: an integer or
  // a struct as `var` describes it); declared once per name.
  llvm::GlobalVariable *declare_ksym(const FieldLayout &var);
  void finalize();

private:
  llvm::DIType *int_array(uint64_t count);  // the `int (*)[count]` trick of __uint()
  llvm::GlobalVariable *map_global(const std::string &name,
                                   const std::vector<std::pair<const char *, llvm::DIType *>> &members);
  llvm::DIType *bytes(uint64_t size);       // a key or value: an array of bytes

  llvm::Module &module_;
  llvm::DIBuilder dib_;
  llvm::DIFile *file_;
  llvm::DICompileUnit *cu_;
  llvm::DIBasicType *int_;
  llvm::DIBasicType *u8_;
  llvm::DISubroutineType *probe_fn_type_;
  std::vector<llvm::Metadata *> globals_;
};

}  // namespace rbt::codegen
