#include "compare_operands.h"

#include <llvm/IR/Instructions.h>

namespace rbt::codegen {

namespace {
// Below this many users the walk is short; above it each compare gets its copy (so the walk
// costs at most this much per compare). Ordinary probes have no value used this often.
constexpr unsigned kManyUsers = 32;
}  // namespace

unsigned give_compares_own_operands(llvm::Module &module) {
  unsigned copies = 0;
  for (llvm::Function &f : module)
    for (llvm::BasicBlock &bb : f)
      for (llvm::Instruction &inst : bb) {
        auto *cmp = llvm::dyn_cast<llvm::ICmpInst>(&inst);
        if (!cmp)
          continue;
        for (unsigned k = 0; k < 2; k++) {
          llvm::Value *v = cmp->getOperand(k);
          if (llvm::isa<llvm::Constant>(v) || !v->getType()->isIntegerTy() ||
              !v->hasNUsesOrMore(kManyUsers))
            continue;
          // The copy takes this use's place, so the value keeps as many users as before.
          auto *copy = new llvm::BitCastInst(v, v->getType(), v->getName() + ".cmp", cmp);
          copy->setDebugLoc(cmp->getDebugLoc());
          cmp->setOperand(k, copy);
          copies++;
        }
      }
  return copies;
}

}  // namespace rbt::codegen
