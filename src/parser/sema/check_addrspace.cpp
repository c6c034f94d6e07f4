// uptr(p) and kptr(p): the same address, marked as one in user or kernel memory, for str(),
// buf() and dereferences that would otherwise guess from the probe (bpftrace's address-space
// casts). An integer becomes a void pointer.

#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

// The type of uptr(p) (user) or kptr(p): p's pointer type in that address space, or a void
// pointer for an integer address.
Type TypeChecker::check_address_space(const Call &call, bool user) {
  Type t = check_expr(*call.args[0]);
  if (!t.is_scalar()) {
    if (!t.is_none())
      diags_.error(call.args[0]->range,
                   call.name + "() takes a pointer or an address, not " + t.name());
    return Type::none();
  }
  if (!t.is_pointer())
    return Type::pointer(Type::none(), user);
  t.user_space = user;
  return t;
}

Type TypeChecker::check_uptr(const Call &call) { return check_address_space(call, true); }
Type TypeChecker::check_kptr(const Call &call) { return check_address_space(call, false); }

}  // namespace rbt::sema
