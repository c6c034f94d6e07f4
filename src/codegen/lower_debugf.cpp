// debugf(fmt, args...) (sema/check_debugf.cpp): bpf_trace_vprintk with the values as an array
// of u64, strings by address (the kernel reads them while formatting).

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

llvm::Value *Lowering::lower_debugf(const Call &call) {
  auto &format = static_cast<const StrLit &>(*call.args[0]);
  llvm::Value *text = lower_expr(format);
  size_t n = call.args.size() - 1;
  llvm::Value *values = llvm::ConstantPointerNull::get(b_.getPtrTy());
  if (n)
    values = value_slot(8 * n, "debugf_values");
  for (size_t i = 0; i < n; i++) {
    const Expr &arg = *call.args[i + 1];
    llvm::Value *v = lower_expr(arg);
    if (type_of(&arg).is_string())
      v = b_.CreatePtrToInt(v, b_.getInt64Ty());
    b_.CreateStore(v, b_.byte_ptr(values, static_cast<unsigned>(8 * i)));
  }
  b_.call_helper(BPF_FUNC_trace_vprintk, b_.getInt64Ty(),
                 {text, b_.getInt64(format.value.size() + 1), values, b_.getInt64(8 * n)});
  return nullptr;
}

}  // namespace rbt::codegen
