// debugf(fmt, args...): a line in the kernel's trace buffer (bpf_trace_vprintk), read from
// /sys/kernel/tracing/trace_pipe; the kernel formats it (%d %u %x %s %c %p, with l/ll), so
// rbt's printf conversions do not apply. Lowered by codegen/lower_debugf.cpp.

#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

// The kernel formats at most this many values (MAX_BPRINTF_VARARGS).
constexpr size_t kDebugfMaxArgs = 12;

Type TypeChecker::check_debugf(const Call &call) {
  bool ok = true;
  for (const Expr *a : call.args) {
    Type t = check_expr(*a);
    if (a != call.args[0] && !t.is_none() && !t.is_scalar() && !t.is_string()) {
      diags_.error(a->range, "debugf() prints integers, pointers and strings, not " + t.name());
      ok = false;
    }
  }
  if (!isa<StrLit>(call.args[0])) {
    diags_.error(call.args[0]->range, "debugf()'s format must be a string literal");
    ok = false;
  }
  if (call.args.size() - 1 > kDebugfMaxArgs) {
    diags_.error(call.range, "debugf() formats at most " + std::to_string(kDebugfMaxArgs) +
                                 " values (the kernel's limit)");
    ok = false;
  }
  return ok ? Type::void_type() : Type::none();
}

}  // namespace rbt::sema
