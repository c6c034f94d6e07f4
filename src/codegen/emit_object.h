#pragma once
// The BPF back end: optimization pipeline and object emission for a finished module.

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>
#include <vector>

#include "result.h"

namespace rbt::codegen {

Result<std::unique_ptr<llvm::TargetMachine>> create_bpf_target_machine(const std::string &cpu);
void optimize(llvm::Module &module, llvm::TargetMachine &tm);
Result<std::vector<char>> emit(llvm::Module &module, llvm::TargetMachine &tm, bool assembly);

}  // namespace rbt::codegen
