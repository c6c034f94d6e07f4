// Type checks of rstack (a Ruby stack value, walked by stdlib/bpf/ruby_stack.bpf.c). Apart
// from kstack/ustack because its depth limit is the walker's (1024), not perf's (127).

#include "type_checker.h"

#include "../../../stdlib/bpf/ruby_layouts.h"  // the walker's depth limits

namespace rbt::sema {

using namespace ast;

Type TypeChecker::check_rstack(const Builtin &) {
  return Type::stack(StackKind::Ruby, RBT_RUBY_DEFAULT_DEPTH, StackMode::Bpftrace);
}

// rstack(N): N an integer literal from 1 to 1024.
Type TypeChecker::check_rstack_n(const Call &call) {
  const Expr &arg = *call.args[0];
  check_expr(arg);
  auto n = const_int(arg);
  if (!n || *n < 1 || *n > RBT_RUBY_MAX_DEPTH) {
    diags_.error(arg.range, "rstack()'s depth must be an integer literal from 1 to " +
                                std::to_string(RBT_RUBY_MAX_DEPTH));
    return Type::none();
  }
  return Type::stack(StackKind::Ruby, static_cast<uint32_t>(*n), StackMode::Bpftrace);
}

}  // namespace rbt::sema
