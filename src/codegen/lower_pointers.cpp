// Unary operators and pointers: `*p`, `&$x`, `p[i]`, pointer arithmetic, integer array casts,
// and block expressions.

#include <cassert>

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

namespace {

// The bytes one element of what `pointer` points to takes (void *: 1, as GNU C counts).
uint64_t element_size(const Type &pointer) {
  if (pointer.elems.empty() || pointer.elems[0].is_none())
    return 1;
  const Type &e = pointer.elems[0];
  return e.is_pointer() ? 8 : e.size ? e.size : 1;
}

}  // namespace

llvm::Value *Lowering::lower_unary(const Unary &u) {
  if (u.op == UnaryOp::AddrOf) {
    const sema::VarInfo *var = sema_.vars.at(static_cast<const Var *>(u.operand));
    llvm::Value *slot = var_slot(var);
    assert(slot && "the checker let a variable's address be taken before it has a slot");
    return b_.CreatePtrToInt(slot, b_.getInt64Ty());
  }
  llvm::Value *v = lower_expr(*u.operand);
  switch (u.op) {
  case UnaryOp::Neg: return b_.CreateNeg(v);
  case UnaryOp::BitNot: return b_.CreateNot(v);
  case UnaryOp::Not: return b_.CreateZExt(b_.CreateICmpEQ(v, b_.getInt64(0)), b_.getInt64Ty());
  case UnaryOp::Deref: {
    if (auto n = sema_.integer_derefs.find(&u); n != sema_.integer_derefs.end())
      return lower_deref(Type::integer(64, true), v, n->second);
    const Type &p = type_of(u.operand);
    return lower_deref(p.elems[0], v, p.user_space);
  }
  case UnaryOp::AddrOf: break;
  }
  assert(false && "unhandled unary operator");
  return nullptr;
}

// A struct reached through a pointer is its address (fields are read from it one by one); an
// integer or a pointer is read with the probe_read helper of its address space.
llvm::Value *Lowering::lower_deref(const Type &pointee, llvm::Value *address, bool user_space) {
  if (pointee.is_record())
    return address;
  if (!pointee.is_scalar()) {  // *&$s of a string, tuple or array: a copy of its bytes
    llvm::Value *slot = value_slot(pointee.size, "deref");
    b_.probe_read(slot, pointee.size, address, user_space);
    return slot;
  }
  uint32_t size = pointee.is_pointer() ? 8 : pointee.size;
  llvm::Value *slot = value_slot(size, "deref");
  b_.probe_read(slot, size, address, user_space);
  return b_.load_int(slot, size, pointee.is_int() && pointee.is_signed);
}

llvm::Value *Lowering::lower_pointer_index(const Index &x) {
  const Type &p = type_of(x.base);
  llvm::Value *base = lower_expr(*x.base);
  llvm::Value *address = pointer_offset(p, base, lower_expr(*x.index), false);
  return lower_deref(p.elems[0], address, p.user_space);
}

llvm::Value *Lowering::pointer_offset(const Type &pointer, llvm::Value *p, llvm::Value *n,
                                      bool subtract) {
  llvm::Value *bytes = b_.CreateMul(n, b_.getInt64(element_size(pointer)));
  return subtract ? b_.CreateSub(p, bytes) : b_.CreateAdd(p, bytes);
}

// BPF before cpu v4 has no signed division: divide the byte distance by shifting when the
// element size is a power of two.
llvm::Value *Lowering::pointer_difference(const Type &pointer, llvm::Value *p, llvm::Value *q) {
  uint64_t size = element_size(pointer);
  llvm::Value *bytes = b_.CreateSub(p, q);
  if ((size & (size - 1)) == 0) {
    uint64_t shift = 0;
    while ((1ULL << shift) < size)
      shift++;
    return b_.CreateAShr(bytes, b_.getInt64(shift));
  }
  return b_.CreateUDiv(bytes, b_.getInt64(size));
}

// The same bytes seen as another type: an integer's (little-endian, as the machine stores it)
// or a string's as an integer array, an array's as an integer.
llvm::Value *Lowering::lower_array_cast(const Cast &cast) {
  const Type &t = type_of(&cast), &from = type_of(cast.operand);
  llvm::Value *v = lower_expr(*cast.operand);
  if (!t.is_array())
    return b_.load_int(v, t.size, t.is_signed);
  llvm::Value *slot = value_slot(t.size, "array_cast");
  if (from.is_scalar())
    b_.store_int(slot, v, from.size);
  else
    b_.copy_bytes(slot, v, t.size);
  return slot;
}

llvm::Value *Lowering::lower_block_expr(const BlockExpr &block) {
  for (const Stmt *s : block.stmts)
    lower_stmt(*s);
  return block.value ? lower_expr(*block.value) : nullptr;
}

// uptr/kptr change only the type's address space (sema/check_addrspace.cpp).
llvm::Value *Lowering::lower_uptr(const Call &call) { return lower_expr(*call.args[0]); }
llvm::Value *Lowering::lower_kptr(const Call &call) { return lower_expr(*call.args[0]); }

}  // namespace rbt::codegen
