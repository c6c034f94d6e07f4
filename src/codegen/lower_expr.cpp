// Expressions: literals, variables, operators, tuples, map reads.

#include <cassert>

#include "lowering.h"

namespace rbt::codegen {

using namespace ast;

llvm::Value *Lowering::lower_expr(const Expr &expr) {
  // The innermost expression being lowered: -k warnings name its place in the script.
  struct Within {
    const Expr *&at, *saved;
    ~Within() { at = saved; }
  } within{lowering_, lowering_};
  lowering_ = &expr;
  switch (expr.kind) {
  case NodeKind::IntLit:
    return b_.getInt64(static_cast<const IntLit &>(expr).value);
  case NodeKind::StrLit: {
    auto &s = static_cast<const StrLit &>(expr);
    llvm::Value *slot = value_slot(s.value.size() + 1, "str");
    b_.store_bytes(slot, s.value);  // the slot is zeroed: the terminator is already there
    return slot;
  }
  case NodeKind::Positional: {
    auto &p = static_cast<const Positional &>(expr);
    const Type &t = type_of(&p);
    if (t.is_scalar())  // $#, a number, or a missing one (0): sema's constant
      return b_.getInt64(sema_.constants.at(&p));
    llvm::Value *slot = value_slot(t.size, "positional");
    b_.store_bytes(slot, sema_.positional.at(p.index - 1));
    return slot;
  }
  case NodeKind::Builtin:
    if (auto c = sema_.constants.find(&expr); c != sema_.constants.end())
      return b_.getInt64(c->second);  // a kernel enumerator (TCP_SYN_SENT)
    return lower_builtin(static_cast<const Builtin &>(expr));
  case NodeKind::Var: {
    auto &v = static_cast<const Var &>(expr);
    const sema::VarInfo *var = sema_.vars.at(&v);
    llvm::Value *slot = var_slot(var);
    assert(slot && "the checker let a variable be read before it has a slot");
    if (var->type.is_scalar())
      return b_.load_int(slot, var->type.size, var->type.is_signed);
    return slot;
  }
  case NodeKind::MapRef:
    return lower_map_read(static_cast<const MapRef &>(expr));
  case NodeKind::Call:
    return lower_call(static_cast<const Call &>(expr));
  case NodeKind::Binary:
    return lower_binary(static_cast<const Binary &>(expr));
  case NodeKind::Unary:
    return lower_unary(static_cast<const Unary &>(expr));
  case NodeKind::BlockExpr:
    return lower_block_expr(static_cast<const BlockExpr &>(expr));
  case NodeKind::Ternary:
    return lower_ternary(static_cast<const Ternary &>(expr));
  case NodeKind::Tuple:
    return lower_tuple(static_cast<const Tuple &>(expr));
  case NodeKind::FieldAccess:
    return lower_field_access(static_cast<const FieldAccess &>(expr));
  case NodeKind::Cast:
    return lower_cast(static_cast<const Cast &>(expr));
  case NodeKind::Index:
    return lower_index(static_cast<const Index &>(expr));
  case NodeKind::TypeQuery:
    return b_.getInt64(sema_.constants.at(&expr));  // sizeof/offsetof: computed by the checker
  default:
    break;
  }
  assert(false && "not an expression");
  return nullptr;
}

llvm::Value *Lowering::lower_binary(const Binary &bin) {
  if (bin.op == BinaryOp::LogicalAnd || bin.op == BinaryOp::LogicalOr)
    return lower_logical(bin);
  if (type_of(bin.lhs).is_string())
    return lower_string_compare(bin);
  if (type_of(bin.lhs).is_array() || type_of(bin.lhs).is_buffer())
    return lower_bytes_compare(bin);
  llvm::Value *l = lower_expr(*bin.lhs), *r = lower_expr(*bin.rhs);
  const Type &lt = type_of(bin.lhs), &rt = type_of(bin.rhs);
  if (lt.is_pointer() && rt.is_int() && (bin.op == BinaryOp::Add || bin.op == BinaryOp::Sub))
    return pointer_offset(lt, l, r, bin.op == BinaryOp::Sub);
  if (rt.is_pointer() && lt.is_int() && bin.op == BinaryOp::Add)
    return pointer_offset(rt, r, l, false);
  if (lt.is_pointer() && rt.is_pointer() && bin.op == BinaryOp::Sub)
    return pointer_difference(lt, l, r);
  bool is_signed = type_of(bin.lhs).is_signed && type_of(bin.rhs).is_signed;
  auto cmp = [&](llvm::CmpInst::Predicate p) {
    return b_.CreateZExt(b_.CreateICmp(p, l, r), b_.getInt64Ty());
  };
  switch (bin.op) {
  case BinaryOp::Add: return b_.CreateAdd(l, r);
  case BinaryOp::Sub: return b_.CreateSub(l, r);
  case BinaryOp::Mul: return b_.CreateMul(l, r);
  case BinaryOp::Div:
  case BinaryOp::Mod: return lower_division(bin, l, r);
  case BinaryOp::BitAnd: return b_.CreateAnd(l, r);
  case BinaryOp::BitOr: return b_.CreateOr(l, r);
  case BinaryOp::BitXor: return b_.CreateXor(l, r);
  case BinaryOp::Shl: return b_.CreateShl(l, r);
  case BinaryOp::Shr: return type_of(bin.lhs).is_signed ? b_.CreateAShr(l, r) : b_.CreateLShr(l, r);
  case BinaryOp::Eq: return cmp(llvm::CmpInst::ICMP_EQ);
  case BinaryOp::Ne: return cmp(llvm::CmpInst::ICMP_NE);
  case BinaryOp::Lt: return cmp(is_signed ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_ULT);
  case BinaryOp::Le: return cmp(is_signed ? llvm::CmpInst::ICMP_SLE : llvm::CmpInst::ICMP_ULE);
  case BinaryOp::Gt: return cmp(is_signed ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_UGT);
  case BinaryOp::Ge: return cmp(is_signed ? llvm::CmpInst::ICMP_SGE : llvm::CmpInst::ICMP_UGE);
  default: break;
  }
  assert(false && "unhandled binary operator");
  return nullptr;
}

// BPF has unsigned division only (signed needs cpu v4), as in bpftrace. A zero divisor would
// give 0 (and `%` the dividend); bpftrace gives 1 and says so at run time.
llvm::Value *Lowering::lower_division(const Binary &bin, llvm::Value *l, llvm::Value *r) {
  bool div = bin.op == BinaryOp::Div;
  if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(r); c && !c->isZero())
    return div ? b_.CreateUDiv(l, r) : b_.CreateURem(l, r);
  llvm::Value *zero = b_.CreateICmpEQ(r, b_.getInt64(0));
  auto *warn = new_block("divide_by_zero");
  auto *done = new_block("divided");
  b_.CreateCondBr(zero, warn, done);
  b_.SetInsertPoint(warn);
  runtime_warning(bin.range, "Divide or modulo by 0 detected. This can lead to unexpected "
                             "results. 1 is being used as the result.");
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  // The divisor is never 0 in the IR either (LLVM takes a division by 0 as unreachable).
  llvm::Value *divisor = b_.CreateSelect(zero, b_.getInt64(1), r);
  llvm::Value *q = div ? b_.CreateUDiv(l, divisor) : b_.CreateURem(l, divisor);
  return b_.CreateSelect(zero, b_.getInt64(1), q);
}

// `a && b`, `a || b`: the right side only runs when it decides the result.
llvm::Value *Lowering::lower_logical(const Binary &bin) {
  bool is_and = bin.op == BinaryOp::LogicalAnd;
  llvm::Value *l = b_.CreateICmpNE(lower_expr(*bin.lhs), b_.getInt64(0));
  llvm::BasicBlock *lhs_block = b_.GetInsertBlock();
  auto *rhs_block = new_block(is_and ? "and_rhs" : "or_rhs");
  auto *done = new_block(is_and ? "and_done" : "or_done");
  if (is_and)
    b_.CreateCondBr(l, rhs_block, done);
  else
    b_.CreateCondBr(l, done, rhs_block);
  b_.SetInsertPoint(rhs_block);
  llvm::Value *r = b_.CreateICmpNE(lower_expr(*bin.rhs), b_.getInt64(0));
  llvm::BasicBlock *rhs_end = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  auto *phi = b_.CreatePHI(b_.getInt1Ty(), 2);
  phi->addIncoming(b_.getInt1(!is_and), lhs_block);
  phi->addIncoming(r, rhs_end);
  return b_.CreateZExt(phi, b_.getInt64Ty());
}

// Strings are equal when their bytes match up to and including the first NUL. Against a
// literal, exactly the literal's bytes and its terminator are compared, without branches.
llvm::Value *Lowering::lower_string_compare(const Binary &bin) {
  const Expr *lhs = bin.lhs, *rhs = bin.rhs;
  if (isa<StrLit>(lhs))
    std::swap(lhs, rhs);
  llvm::Value *a = lower_expr(*lhs), *b = lower_expr(*rhs);
  uint32_t size_a = type_of(lhs).size, size_b = type_of(rhs).size;
  llvm::Value *equal;
  if (auto *lit = dyn_cast<StrLit>(rhs)) {
    uint32_t n = static_cast<uint32_t>(lit->value.size()) + 1;
    if (n > size_a) {
      // The literal cannot fit, unless the other string is unterminated at full length; treat
      // that as unequal like bpftrace.
      equal = b_.getInt1(false);
    } else {
      llvm::Value *diff = b_.getInt64(0);
      for (uint32_t i = 0; i < n; i++) {
        llvm::Value *ca = b_.CreateLoad(b_.getInt8Ty(), b_.byte_ptr(a, i));
        llvm::Value *x = b_.CreateXor(ca, b_.getInt8(i < lit->value.size() ? lit->value[i] : 0));
        diff = b_.CreateOr(diff, b_.CreateZExt(x, b_.getInt64Ty()));
      }
      equal = b_.CreateICmpEQ(diff, b_.getInt64(0));
    }
  } else if (std::min(size_a, size_b) >= 16) {
    // comm and longer: a bounded loop in the stdlib instead of an unrolled comparison. An
    // unrolled one over 64 bytes lets LLVM keep every byte of a copied value in a register of
    // its own, and the spills overflowed the 512-byte stack (`str(arg1) == @ep[tid]`); over
    // comm's 16 LLVM turned it into branches whose paths the verifier could not finish
    // checking (`comm == comm`: a million instructions).
    llvm::Value *differ = call_stdlib("strings", "rbt_strncmp",
                                      {a, b_.getInt64(size_a), b, b_.getInt64(size_b),
                                       b_.getInt64(std::min(size_a, size_b))});
    equal = b_.CreateICmpEQ(differ, b_.getInt64(0));
  } else {
    // equal = for each i: done || a[i] == b[i]; done once a NUL matched.
    uint32_t n = std::min(size_a, size_b);
    llvm::Value *ok = b_.getInt1(true), *done = b_.getInt1(false);
    for (uint32_t i = 0; i < n; i++) {
      llvm::Value *ca = b_.CreateLoad(b_.getInt8Ty(), b_.byte_ptr(a, i));
      llvm::Value *cb = b_.CreateLoad(b_.getInt8Ty(), b_.byte_ptr(b, i));
      ok = b_.CreateAnd(ok, b_.CreateOr(done, b_.CreateICmpEQ(ca, cb)));
      done = b_.CreateOr(done, b_.CreateICmpEQ(ca, b_.getInt8(0)));
    }
    equal = ok;
  }
  if (bin.op == BinaryOp::Ne)
    equal = b_.CreateNot(equal);
  return b_.CreateZExt(equal, b_.getInt64Ty());
}

// Arrays (of one type): every byte. Buffers ({u32 length, bytes}): the lengths, and the
// bytes before the length (what lies past it is whatever the source held).
llvm::Value *Lowering::lower_bytes_compare(const Binary &bin) {
  const Type &ta = type_of(bin.lhs), &tb = type_of(bin.rhs);
  llvm::Value *a = lower_expr(*bin.lhs), *b = lower_expr(*bin.rhs);
  llvm::Value *diff = b_.getInt64(0);
  auto differ = [&](llvm::Value *x, llvm::Value *y) {
    diff = b_.CreateOr(diff, b_.CreateZExt(b_.CreateXor(x, y), b_.getInt64Ty()));
  };
  if (ta.is_array()) {
    uint32_t i = 0;
    for (; i + 8 <= ta.size; i += 8)
      differ(b_.CreateLoad(b_.getInt64Ty(), b_.byte_ptr(a, i)),
             b_.CreateLoad(b_.getInt64Ty(), b_.byte_ptr(b, i)));
    for (; i < ta.size; i++)
      differ(b_.CreateLoad(b_.getInt8Ty(), b_.byte_ptr(a, i)),
             b_.CreateLoad(b_.getInt8Ty(), b_.byte_ptr(b, i)));
  } else {
    llvm::Value *length = b_.CreateLoad(b_.getInt32Ty(), a);
    differ(length, b_.CreateLoad(b_.getInt32Ty(), b));
    for (uint32_t i = 0; i + 4 < std::min(ta.size, tb.size); i++) {
      llvm::Value *x = b_.CreateXor(b_.CreateLoad(b_.getInt8Ty(), b_.byte_ptr(a, 4 + i)),
                                    b_.CreateLoad(b_.getInt8Ty(), b_.byte_ptr(b, 4 + i)));
      llvm::Value *inside = b_.CreateICmpULT(b_.getInt32(i), length);
      differ(b_.CreateSelect(inside, x, b_.getInt8(0)), b_.getInt8(0));
    }
  }
  llvm::Value *equal = b_.CreateICmpEQ(diff, b_.getInt64(0));
  if (bin.op == BinaryOp::Ne)
    equal = b_.CreateNot(equal);
  return b_.CreateZExt(equal, b_.getInt64Ty());
}

llvm::Value *Lowering::lower_ternary(const Ternary &te) {
  const Type &t = type_of(&te);
  llvm::Value *cond = b_.CreateICmpNE(lower_expr(*te.cond), b_.getInt64(0));
  auto *then_block = new_block("tern_then");
  auto *else_block = new_block("tern_else");
  auto *done = new_block("tern_done");
  // Non-integer results are written into one slot by both branches; branches without a value
  // (`c ? printf("a") : printf("b")`) are run for what they do.
  bool no_value = t.kind == TypeKind::Void;
  llvm::Value *slot = t.is_scalar() || no_value ? nullptr : value_slot(t.size, "tern");
  b_.CreateCondBr(cond, then_block, else_block);

  auto branch = [&](llvm::BasicBlock *block, const Expr &e) -> std::pair<llvm::Value *, llvm::BasicBlock *> {
    b_.SetInsertPoint(block);
    llvm::Value *v = nullptr;
    if (slot)
      store_value(slot, t, e);
    else
      v = lower_expr(e);
    llvm::BasicBlock *end = b_.GetInsertBlock();
    b_.CreateBr(done);
    return {v, end};
  };
  auto [tv, tb] = branch(then_block, *te.then_expr);
  auto [ev, eb] = branch(else_block, *te.else_expr);
  b_.SetInsertPoint(done);
  if (slot)
    return slot;
  if (no_value)
    return nullptr;
  auto *phi = b_.CreatePHI(b_.getInt64Ty(), 2);
  phi->addIncoming(tv, tb);
  phi->addIncoming(ev, eb);
  return phi;
}

llvm::Value *Lowering::lower_tuple(const Tuple &tuple) {
  const Type &t = type_of(&tuple);
  llvm::Value *slot = value_slot(t.size, "tuple");
  for (size_t i = 0; i < tuple.elems.size(); i++)
    store_value(b_.byte_ptr(slot, t.offsets[i]), t.elems[i], *tuple.elems[i]);
  return slot;
}

llvm::Value *Lowering::lower_field_access(const FieldAccess &fa) {
  const Type &base_type = type_of(fa.base);
  llvm::Value *base = lower_expr(*fa.base);
  if (base_type.is_tuple() || base_type.is_struct()) {
    // A tuple's element by number, a held struct's field by name: bytes at an offset.
    size_t index = base_type.is_named_tuple() || base_type.is_struct()
                       ? base_type.field_index(fa.field)
                       : std::stoul(fa.field);
    const Type &elem = base_type.elems[index];
    llvm::Value *p = b_.byte_ptr(base, base_type.offsets[index]);
    return elem.is_scalar() ? b_.load_int(p, elem.size, elem.is_signed) : p;
  }
  const FieldLayout *found = sema_.fields.at(&fa);
  const Type &t = type_of(&fa);
  // A record in the context (tracepoint args) is a pointer we may load from; one reached
  // through a pointer is an address to read with a probe_read helper.
  bool direct = base_type.is_record() && !base_type.remote;
  // A probe on tracepoints whose args differ: this program's own record places the field.
  if (auto own = sema_.args_layouts.find(probe_->name); direct && own != sema_.args_layouts.end())
    if (const FieldLayout *f = own->second->find(fa.field))
      found = f;
  const FieldLayout &field = *found;
  bool user = base_type.user_space;
  if (field.bit_size)
    return lower_bit_field(direct ? b_.CreatePtrToInt(b_.byte_ptr(base, field.offset), b_.getInt64Ty())
                                  : b_.CreateAdd(base, b_.getInt64(field.offset)),
                           field, direct ? false : user, fa.field);
  if (direct) {
    llvm::Value *p = b_.byte_ptr(base, field.offset);
    if (t.is_record())
      return p;
    if (t.is_scalar())
      return b_.load_int(p, t.size, t.is_signed);
    if (field.kind == FieldLayout::Kind::DataLoc) {
      // The string lives later in the record, at the offset in the low 16 bits.
      llvm::Value *loc = b_.load_int(p, 4, false);
      llvm::Value *str = b_.CreateAdd(b_.CreatePtrToInt(base, b_.getInt64Ty()),
                                      b_.CreateAnd(loc, b_.getInt64(0xffff)));
      llvm::Value *slot = value_slot(t.size, fa.field);
      b_.probe_read_str(slot, t.size, str, false);
      return slot;
    }
    // Context reads must be aligned loads; a helper copies byte arrays of any alignment.
    llvm::Value *slot = value_slot(t.size, fa.field);
    b_.probe_read(slot, t.size, b_.CreatePtrToInt(p, b_.getInt64Ty()), false);
    return slot;
  }
  llvm::Value *addr = b_.CreateAdd(base, b_.getInt64(field.offset));
  if (t.is_record())
    return addr;
  llvm::Value *slot = value_slot(t.size, fa.field);
  b_.probe_read(slot, t.size, addr, user);
  return t.is_scalar() ? b_.load_int(slot, t.size, t.is_signed) : slot;
}

// A bit field: the bytes that hold it (at most 8: the checker saw to it) are read into a
// zeroed u64, shifted down and masked (unsigned, as bpftrace reads them).
llvm::Value *Lowering::lower_bit_field(llvm::Value *addr, const FieldLayout &field, bool user,
                                       const std::string &name) {
  uint32_t bytes = (field.bit_offset + field.bit_size + 7) / 8;
  llvm::Value *slot = value_slot(8, name);
  b_.CreateStore(b_.getInt64(0), slot);
  b_.probe_read(slot, bytes, addr, user);
  llvm::Value *v = b_.CreateLShr(b_.load_int(slot, 8, false), b_.getInt64(field.bit_offset));
  if (field.bit_size >= 64)
    return v;
  return b_.CreateAnd(v, b_.getInt64((uint64_t{1} << field.bit_size) - 1));
}

// Arrays are bytes in memory (a slot, the context); an element is a load at its offset. A
// computed index is checked against the length: the verifier wants the offset bounded, and
// bpftrace reads 0 past the end, with a warning.
llvm::Value *Lowering::lower_index(const Index &x) {
  const Type &array = type_of(x.base);
  if (array.is_pointer())
    return lower_pointer_index(x);
  if (array.is_tuple()) {  // $t[1 + 1]: the element sema found, as $t.2
    size_t index = sema_.constants.at(&x);
    const Type &elem = array.elems[index];
    llvm::Value *p = b_.byte_ptr(lower_expr(*x.base), array.offsets[index]);
    return elem.is_scalar() ? b_.load_int(p, elem.size, elem.is_signed) : p;
  }
  if (auto *fa = dyn_cast<FieldAccess>(x.base); fa && array.is_array() && array.count == 0) {
    const Type &record = type_of(fa->base);  // as the checker decided (check_index)
    if (record.is_pointer() || (record.is_record() && record.remote))
      return lower_flexible_index(x);
  }
  // A string's elements are its bytes (chars).
  const Type elem = array.is_string() ? Type::integer(8, true) : array.elems[0];
  const uint64_t count = array.is_string() ? array.size : array.count;
  llvm::Value *base = lower_expr(*x.base);
  // An element that is itself an array (`$y[1][0]`) or a string is the address of its bytes.
  const bool scalar = elem.is_scalar();
  if (auto *lit = dyn_cast<IntLit>(x.index)) {
    llvm::Value *p = b_.byte_ptr(base, lit->value * elem.size);
    return scalar ? b_.load_int(p, elem.size, elem.is_signed) : p;
  }
  llvm::Value *i = lower_expr(*x.index);
  // Past the end: 0, or the bytes of a zeroed element.
  llvm::Value *outside = scalar ? static_cast<llvm::Value *>(b_.getInt64(0))
                                : value_slot(elem.size, "index_outside");
  auto *inside = new_block("index_inside");
  auto *past_end = new_block("index_past_end");
  auto *done = new_block("index_done");
  b_.CreateCondBr(b_.CreateICmpULT(i, b_.getInt64(count)), inside, past_end);
  // As bpftrace, an array read past its end says so at run time (a string's bytes do not).
  b_.SetInsertPoint(past_end);
  if (!array.is_string())
    runtime_warning(x.range, "Array access out of bounds. This can lead to unexpected results.");
  llvm::BasicBlock *from = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(inside);
  llvm::Value *p = b_.CreateGEP(b_.getInt8Ty(), base, b_.CreateMul(i, b_.getInt64(elem.size)));
  llvm::Value *v = scalar ? b_.load_int(p, elem.size, elem.is_signed) : p;
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  auto *phi = b_.CreatePHI(v->getType(), 2);
  phi->addIncoming(outside, from);
  phi->addIncoming(v, inside);
  return phi;
}

// p.y[i] of a flexible array member `y[0]`: the element i places after the field's offset,
// read from the memory p points to (no bound: the struct says nothing of its length).
llvm::Value *Lowering::lower_flexible_index(const Index &x) {
  auto &fa = static_cast<const FieldAccess &>(*x.base);
  const Type &elem = type_of(x.base).elems[0];
  const Type &record = type_of(fa.base);
  llvm::Value *addr = b_.CreateAdd(lower_expr(*fa.base), b_.getInt64(sema_.fields.at(&fa)->offset));
  addr = b_.CreateAdd(addr, b_.CreateMul(lower_expr(*x.index), b_.getInt64(elem.size)));
  llvm::Value *slot = value_slot(elem.size, "flexible_elem");
  b_.probe_read(slot, elem.size, addr, record.user_space);
  return elem.is_scalar() ? b_.load_int(slot, elem.size, elem.is_signed) : slot;
}

llvm::Value *Lowering::lower_cast(const Cast &cast) {
  if (cast.is_array || type_of(cast.operand).is_array())
    return lower_array_cast(cast);
  llvm::Value *v = lower_expr(*cast.operand);
  const Type &t = type_of(&cast);
  if (t.is_pointer() || t.size == 8)
    return v;
  // Keep the low bits, then extend as the target type says.
  llvm::Value *low = b_.CreateTrunc(v, b_.getIntNTy(t.size * 8));
  return t.is_signed ? b_.CreateSExt(low, b_.getInt64Ty()) : b_.CreateZExt(low, b_.getInt64Ty());
}

void Lowering::store_value(llvm::Value *dst, const Type &slot_type, const Expr &expr) {
  if (writes_whole_slot(slot_type, expr))
    return lower_into_slot(dst, expr);
  store_lowered(dst, slot_type, lower_expr(expr), type_of(&expr));
}

void Lowering::store_lowered(llvm::Value *dst, const Type &slot_type, llvm::Value *value,
                             const Type &value_type) {
  if (slot_type.is_scalar()) {
    b_.store_int(dst, value, slot_type.size);
  } else if (slot_type.is_struct() && value_type.is_record()) {
    // `*p` of a struct pointer is its address: the struct's bytes are read from there.
    b_.probe_read(dst, slot_type.size, value, value_type.user_space);
  } else if (slot_type.is_stack() || slot_type.is_rendered() || slot_type.is_array() ||
             slot_type.is_struct()) {
    b_.copy_bytes(dst, value, slot_type.size);
  } else if (slot_type.is_string() || slot_type.is_buffer()) {
    // Strings and buffers of any size unify; the rest of a wider slot is zero.
    uint32_t n = std::min(slot_type.size, value_type.size);
    b_.copy_bytes(dst, value, n);
    b_.zero_bytes(b_.byte_ptr(dst, n), slot_type.size - n);
  } else if (slot_type.is_tuple()) {
    if (slot_type == value_type) {
      b_.copy_bytes(dst, value, slot_type.size);
      return;
    }
    // Same shape, different widths: convert element by element.
    b_.zero_bytes(dst, slot_type.size);
    for (size_t i = 0; i < slot_type.elems.size(); i++) {
      // A record's fields by name: the value may list them in another order.
      size_t j = slot_type.is_named_tuple() ? value_type.field_index(slot_type.field_names[i]) : i;
      const Type &se = slot_type.elems[i], &ve = value_type.elems[j];
      llvm::Value *src = b_.byte_ptr(value, value_type.offsets[j]);
      llvm::Value *elem = ve.is_scalar() ? b_.load_int(src, ve.size, ve.is_signed) : src;
      store_lowered(b_.byte_ptr(dst, slot_type.offsets[i]), se, elem, ve);
    }
  } else {
    assert(false && "cannot store this type");
  }
}

llvm::Value *Lowering::map_key(const MapRef &map, const MapDesc &desc) {
  bool whole_key = desc.value.is_bucketed() || desc.is_array();
  uint32_t size = whole_key ? desc.bpf_key_size() : desc.user_key_size();
  if (map.keys.size() == 1 && size == desc.key.size && writes_whole_slot(desc.key, *map.keys[0])) {
    llvm::Value *key = b_.stack_slot(size, "key", /*zeroed=*/false);
    lower_into_slot(key, *map.keys[0]);
    return key;
  }
  llvm::Value *key = value_slot(size, "key");
  if (map.keys.empty())
    return key;  // maps without keys use the single key 0
  if (map.keys.size() == 1) {
    store_value(key, desc.key, *map.keys[0]);
    return key;
  }
  for (size_t i = 0; i < map.keys.size(); i++)
    store_value(b_.byte_ptr(key, desc.key.offsets[i]), desc.key.elems[i], *map.keys[i]);
  return key;
}

llvm::Value *Lowering::lower_map_read(const MapRef &map) {
  const MapDesc &desc = resources_.map_desc(map.name);
  llvm::Value *key = map_key(map, desc);
  if (desc.value.is_aggregation())
    return read_aggregation(desc, key);
  llvm::Value *found = b_.map_lookup(resources_.map_global(map.name), key);
  warn_missing_key(map, found);
  const Type &t = desc.value;
  if (!t.is_scalar()) {
    // A string or tuple is read where it lies: the map's value, or a zeroed slot when the key
    // is absent (an empty string, a zeroed tuple, as in bpftrace). Every user copies or reads
    // it at once. Copying it into a stack slot first let LLVM split the copy into one register
    // per byte, and comparing it with another string then spilled them all past the 512-byte
    // stack (`str(arg1) == @ep[tid]`).
    llvm::Value *zero = value_slot(t.size, "map_read");
    return b_.CreateSelect(b_.CreateIsNull(found), zero, found, "map_read");
  }
  return load_or_zero(
      found, [&](llvm::Value *value) { return b_.load_int(value, t.size, t.is_signed); }, "map");
}

llvm::Value *Lowering::load_or_zero(llvm::Value *found,
                                    const std::function<llvm::Value *(llvm::Value *)> &load,
                                    const std::string &name) {
  llvm::BasicBlock *miss = b_.GetInsertBlock();
  auto *hit = new_block((name + "_hit").c_str());
  auto *done = new_block((name + "_done").c_str());
  b_.CreateCondBr(b_.CreateIsNull(found), done, hit);
  b_.SetInsertPoint(hit);
  llvm::Value *v = load(found);
  llvm::BasicBlock *loaded = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  auto *phi = b_.CreatePHI(b_.getInt64Ty(), 2);
  phi->addIncoming(b_.getInt64(0), miss);
  phi->addIncoming(v, loaded);
  return phi;
}

}  // namespace rbt::codegen
