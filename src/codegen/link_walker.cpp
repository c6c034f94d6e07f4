#include "link_walker.h"

#include "debug_info.h"

// Blobs embedded by stdlib/bpf/CMakeLists.txt.
extern "C" const char rbt_ruby_walker_v3_start[], rbt_ruby_walker_v3_end[];
extern "C" const char rbt_ruby_walker_v4_start[], rbt_ruby_walker_v4_end[];

namespace rbt::codegen {

std::vector<char> ruby_walker_object(std::string_view cpu) {
  if (cpu == "v4")
    return {rbt_ruby_walker_v4_start, rbt_ruby_walker_v4_end};
  return {rbt_ruby_walker_v3_start, rbt_ruby_walker_v3_end};
}

llvm::FunctionCallee declare_walker_entry(llvm::Module &module, DebugInfo &debug_info,
                                          const char *name, unsigned params) {
  auto *i64 = llvm::Type::getInt64Ty(module.getContext());
  llvm::FunctionCallee callee = module.getOrInsertFunction(
      name, llvm::FunctionType::get(i64, std::vector<llvm::Type *>(params, i64), false));
  auto *fn = llvm::cast<llvm::Function>(callee.getCallee());
  if (!fn->getSubprogram())
    debug_info.describe_extern(*fn, params);
  return callee;
}

}  // namespace rbt::codegen
