// libFuzzer target: the input is a script, taken through lex + parse + type check + codegen
// to an in-memory BPF object. Nothing here touches the kernel (no libbpf, no tracefs): the
// type checker gets a default Environment, so attach points stay as written.
//
// Built only with -DRBT_FUZZ=ON (clang-19, -fsanitize=fuzzer,address); run with scripts/fuzz.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "codegen.h"
#include "parse.h"
#include "sema/sema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rbt::SourceFile source("fuzz.rbt", std::string(reinterpret_cast<const char *>(data), size));
  rbt::DiagnosticEngine diags(source);
  rbt::ast::ASTContext ctx;
  auto *program = rbt::parse(source, ctx, diags);
  if (!program) {
    (void)diags.render();  // rendering carets over arbitrary bytes is part of the surface
    return 0;
  }
  rbt::sema::SemaInfo info;
  if (!rbt::sema::analyse(*program, diags, info, rbt::sema::Environment{})) {
    (void)diags.render();
    return 0;
  }
  // Codegen may refuse a checked program with an error, but "internal error" (e.g. a module
  // that does not verify) means the checker let through something codegen cannot lower.
  // Two threads, as rbt compiles on this kind of machine: a script with enough code is then
  // compiled in parts and linked (codegen/partition.h), and that path is fuzzed too.
  rbt::codegen::CodegenOptions options;
  options.threads = 2;
  auto object = rbt::codegen::compile(*program, info, options);
  if (!object && (object.error().why.rfind("internal error", 0) == 0 ||
                  object.error().what.rfind("linking the compiled BPF objects", 0) == 0)) {
    std::fprintf(stderr, "rbt fuzz: %s: %s\n", object.error().what.c_str(),
                 object.error().why.c_str());
    std::abort();
  }
  return 0;
}
