// Unary operators, and what pointers give: `*p`, `&$x`, `p[i]`, and casts between integer
// arrays and the bytes of strings and integers.

#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

Type int_type_named(const std::string &name) {
  if (name == "bool")
    return Type::boolean();
  if (name == "void")
    return Type::none();
  bool is_unsigned = name[0] == 'u';
  return Type::integer(std::stoi(name.substr(is_unsigned ? 4 : 3)), !is_unsigned);
}

Type pointer_to(Type pointee, uint32_t depth, bool user_space) {
  for (uint32_t i = 0; i < depth; i++)
    pointee = Type::pointer(std::move(pointee), user_space);
  return pointee;
}

Type TypeChecker::pointee_type(const Expr &at, const Type &pointer) {
  const Type &pointee = pointer.elems.empty() ? Type::none() : pointer.elems[0];
  // A string, tuple, array or rendered value (username) is there through &$x (a variable's slot): its bytes are copied.
  if (pointee.is_int() || pointee.is_record() || pointee.is_pointer() || pointee.is_string() ||
      pointee.is_tuple() || pointee.is_array() || pointee.is_rendered())
    return pointee;
  diags_.error(at.range, "cannot dereference " + pointer.name() +
                             ": what it points to is unknown (cast it, e.g. (int32 *)p)");
  return Type::none();
}

Type TypeChecker::check_unary(const Unary &u) {
  Type o = check_expr(*u.operand);
  if (o.is_none())
    return o;
  switch (u.op) {
  case UnaryOp::Deref:
    if (o.is_int()) {  // bpftrace reads an int64 there (its tools: loads.bt's *($avenrun + 8))
      info_.integer_derefs[&u] = probe_reads_user_space();
      return Type::integer(64, true);
    }
    if (!o.is_pointer()) {
      diags_.error(u.range, "cannot dereference a value of type " + o.name() + " (not a pointer)");
      return Type::none();
    }
    return pointee_type(u, o);
  case UnaryOp::AddrOf:
    // The address of a scratch variable: its slot in BPF memory (kernel space).
    if (!isa<Var>(u.operand) ||
        !(o.is_scalar() || o.is_string() || o.is_tuple() || o.is_array() || o.is_rendered())) {
      diags_.error(u.range, "& takes the address of a scratch variable holding an integer, a "
                            "pointer, a string, a tuple or an array");
      return Type::none();
    }
    return Type::pointer(o, false);
  default:
    break;
  }
  if (!expect_int(*u.operand, o, std::string("the operand of '") +
                                     (u.op == UnaryOp::Neg ? "-" : u.op == UnaryOp::Not ? "!" : "~") +
                                     "'"))
    return Type::none();
  return u.op == UnaryOp::Not ? Type::boolean()
                              : Type::integer(64, u.op == UnaryOp::Neg || o.is_signed);
}

Type TypeChecker::check_array_cast(const Cast &cast, const Type &operand) {
  if (cast.is_struct || cast.pointers || cast.type_name == "void") {
    diags_.error(cast.range, "an integer array can only be cast to an integer");
    return Type::none();
  }
  Type elem = int_type_named(cast.type_name);
  if (!cast.is_array) {
    // (uint64)$bytes: an array of as many bytes as the integer.
    if (operand.size != elem.size) {
      diags_.error(cast.range, "cannot cast " + operand.name() + " (" +
                                   std::to_string(operand.size) + " bytes) to " + elem.name() +
                                   ": the sizes differ");
      return Type::none();
    }
    return elem;
  }
  if (!operand.is_string() && !operand.is_int() && !operand.is_array()) {
    diags_.error(cast.range, "cannot cast " + operand.name() + " to an array");
    return Type::none();
  }
  uint32_t count = cast.array_count ? cast.array_count : operand.size / elem.size;
  if (count == 0 || count * elem.size != operand.size) {
    diags_.error(cast.range, "cannot cast " + operand.name() + " (" +
                                 std::to_string(operand.size) + " bytes) to " + elem.name() + "[" +
                                 (cast.array_count ? std::to_string(cast.array_count) : "") +
                                 "]: the sizes differ");
    return Type::none();
  }
  return Type::array(elem, count);
}

}  // namespace rbt::sema
