#include "link_stdlib.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>

#include <set>

// Blobs embedded by stdlib/bpf/CMakeLists.txt.
extern "C" const char rbt_stdlib_usdt_start[], rbt_stdlib_usdt_end[];
extern "C" const char rbt_stdlib_ruby_stack_start[], rbt_stdlib_ruby_stack_end[];
extern "C" const char rbt_stdlib_strings_start[], rbt_stdlib_strings_end[];
extern "C" const char rbt_stdlib_native_stack_start[], rbt_stdlib_native_stack_end[];
extern "C" const char rbt_stdlib_tasks_start[], rbt_stdlib_tasks_end[];

namespace rbt::codegen {

namespace {

struct Blob {
  std::string_view name;
  const char *start, *end;
};

const Blob kBlobs[] = {
    {"strings", rbt_stdlib_strings_start, rbt_stdlib_strings_end},
    {"usdt", rbt_stdlib_usdt_start, rbt_stdlib_usdt_end},
    {"ruby_stack", rbt_stdlib_ruby_stack_start, rbt_stdlib_ruby_stack_end},
    {"native_stack", rbt_stdlib_native_stack_start, rbt_stdlib_native_stack_end},
    {"tasks", rbt_stdlib_tasks_start, rbt_stdlib_tasks_end},
};

}  // namespace

Status link_stdlib(llvm::Module &module, std::string_view library) {
  const Blob *blob = nullptr;
  for (auto &b : kBlobs)
    if (b.name == library)
      blob = &b;
  if (!blob)
    return make_error("linking the BPF library", "no library '" + std::string(library) + "'");

  // MemoryBufferRef keeps only a reference to its name: the string must outlive the parse.
  const std::string name(library);
  llvm::MemoryBufferRef buffer(llvm::StringRef(blob->start, blob->end - blob->start), name);
  auto parsed = llvm::parseBitcodeFile(buffer, module.getContext());
  if (!parsed)
    return make_error("linking the BPF library " + std::string(library),
                      llvm::toString(parsed.takeError()));
  std::unique_ptr<llvm::Module> lib = std::move(*parsed);
  lib->setTargetTriple(module.getTargetTriple());
  lib->setDataLayout(module.getDataLayout());

  // Programs of the script are the module's functions with a section; everything that arrives
  // from the library is a helper for them.
  std::set<std::string> programs;
  for (auto &fn : module.functions())
    if (!fn.isDeclaration() && fn.hasSection())
      programs.insert(fn.getName().str());
  // A library's maps are part of its contract with libbpf (usdt.bpf.h's spec maps): keep
  // every map it defines, referenced or not. Weak ones (ruby_stack's, which the walker object
  // defines too: link_walker.h) stay weak, for the static linker to merge.
  for (auto &g : lib->globals())
    if (g.getSection() == ".maps" && !g.hasWeakLinkage())
      g.setLinkage(llvm::GlobalValue::ExternalLinkage);
  std::vector<std::string> lib_maps;
  for (auto &g : lib->globals())
    if (g.getSection() == ".maps" && !g.isDeclaration())
      lib_maps.push_back(g.getName().str());
  for (auto &name : lib_maps)
    if (!module.getNamedGlobal(name))
      new llvm::GlobalVariable(module, llvm::Type::getInt8Ty(module.getContext()), false,
                               llvm::GlobalValue::ExternalLinkage, nullptr, name);
  if (llvm::Linker::linkModules(module, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded))
    return make_error("linking the BPF library " + std::string(library), "LLVM's linker failed");
  // Library functions become static, and are inlined into their callers: their debug info
  // still calls them global, and the verifier checks a global BPF function on its own, without
  // the caller's constant arguments (a USDT argument index would then look unbounded).
  for (auto &fn : module.functions()) {
    // A function with a section is a program, the script's or a library's own (rstack's
    // discovery programs, which the runtime attaches).
    if (fn.isDeclaration() || programs.count(fn.getName().str()) || fn.hasSection())
      continue;
    fn.setLinkage(llvm::GlobalValue::InternalLinkage);
    if (!fn.hasFnAttribute(llvm::Attribute::NoInline))
      fn.addFnAttr(llvm::Attribute::AlwaysInline);
  }
  return Ok{};
}

}  // namespace rbt::codegen
