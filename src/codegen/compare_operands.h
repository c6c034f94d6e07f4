#pragma once
// Before the back end: gives each integer compare of a widely used value a copy of the value
// of its own, so that LLVM's CodeGenPrepare stays linear in the probe's size.

#include <llvm/IR/Module.h>

namespace rbt::codegen {

// CodeGenPrepare looks at every user of an unsigned compare's variable operand for a
// subtraction to fuse with it (combineToUSubWithOverflow): a probe comparing one value
// thousands of times (`if ($x > 1) ... if ($x > 2) ...`) made that quadratic. A compare of
// a value with many users now compares a no-op copy (`bitcast i64 %x to i64`, no instruction
// in the object) placed just before it. Returns how many compares were given a copy.
unsigned give_compares_own_operands(llvm::Module &module);

}  // namespace rbt::codegen
