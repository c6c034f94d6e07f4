// Type checks of rstack (a Ruby stack value, walked by stdlib/bpf/ruby_stack.bpf.c), nstack
// (the native stack unwound by CFI, stdlib/bpf/native_stack.bpf.c) and rstack(native), both
// merged into one stack. Apart from kstack/ustack because their depth limits are the walkers'
// (1024 and 128), not perf's (127).

#include "type_checker.h"

#include "../../../stdlib/bpf/native_unwind.h"  // nstack's depth limit
#include "../../../stdlib/bpf/ruby_layouts.h"   // the walker's depth limits

namespace rbt::sema {

using namespace ast;

Type TypeChecker::check_rstack(const Builtin &) {
  return Type::stack(StackKind::Ruby, RBT_RUBY_DEFAULT_DEPTH, StackMode::Bpftrace);
}

// rstack(N): N an integer literal from 1 to 1024. rstack(native[, N]): the mixed stack, N Ruby
// frames at most.
Type TypeChecker::check_rstack_n(const Call &call) {
  StackKind kind = StackKind::Ruby;
  uint32_t depth = RBT_RUBY_DEFAULT_DEPTH;
  for (size_t i = 0; i < call.args.size(); i++) {
    const Expr &arg = *call.args[i];
    auto *word = dyn_cast<Builtin>(&arg);
    if (word && i == 0 && word->name == "native") {
      kind = StackKind::Mixed;
      continue;
    }
    if (word && i == 0) {
      diags_.error(arg.range, "rstack()'s first argument must be the word native or a depth");
      return Type::none();
    }
    if (i == 0 && call.args.size() == 2) {
      diags_.error(arg.range, "rstack()'s first argument of two must be the word native");
      return Type::none();
    }
    check_expr(arg);
    auto n = const_int(arg);
    if (!n || *n < 1 || *n > RBT_RUBY_MAX_DEPTH) {
      diags_.error(arg.range, "rstack()'s depth must be an integer literal from 1 to " +
                                  std::to_string(RBT_RUBY_MAX_DEPTH));
      return Type::none();
    }
    depth = static_cast<uint32_t>(*n);
  }
  return Type::stack(kind, depth, StackMode::Bpftrace);
}

Type TypeChecker::check_nstack(const Builtin &) {
  return Type::stack(StackKind::Native, RBT_NATIVE_DEFAULT_DEPTH, StackMode::Bpftrace);
}

// nstack(N): N an integer literal from 1 to 128.
Type TypeChecker::check_nstack_n(const Call &call) {
  const Expr &arg = *call.args[0];
  check_expr(arg);
  auto n = const_int(arg);
  if (!n || *n < 1 || *n > RBT_NATIVE_MAX_DEPTH) {
    diags_.error(arg.range, "nstack()'s depth must be an integer literal from 1 to " +
                                std::to_string(RBT_NATIVE_MAX_DEPTH));
    return Type::none();
  }
  return Type::stack(StackKind::Native, static_cast<uint32_t>(*n), StackMode::Bpftrace);
}

}  // namespace rbt::sema

namespace rbt::sema {

// rlabel/rpath/rline([stack, ]index): `stack` an rstack value (the frame is read from the stack
// it names, no new walk), `index` an integer literal: 0 is the leaf, 1 its caller..., -1 the
// root (the outermost frame, `<main>`), -2 the frame the root called...
bool TypeChecker::check_rframe_args(const Call &call, const std::string &name) {
  bool ok = true;
  if (call.args.size() == 2) {
    Type t = check_expr(*call.args[0]);
    if (!t.is_none() && !(t.is_stack() && t.stack_kind == StackKind::Ruby)) {
      diags_.error(call.args[0]->range,
                   name + "()'s stack must be an rstack value, not " + t.name());
      ok = false;
    }
  }
  const Expr &index = *call.args.back();
  check_expr(index);
  auto n = const_int(index);
  if (!n || *n < -RBT_RUBY_MAX_DEPTH || *n >= RBT_RUBY_MAX_DEPTH) {
    diags_.error(index.range, name + "()'s frame index must be an integer literal from -" +
                                  std::to_string(RBT_RUBY_MAX_DEPTH) + " (root first) to " +
                                  std::to_string(RBT_RUBY_MAX_DEPTH - 1) + " (leaf first)");
    ok = false;
  } else {
    info_.constants[&call] = static_cast<uint64_t>(*n);  // the index, for the lowering
  }
  return ok;
}

Type TypeChecker::check_rlabel(const Call &call) {
  return check_rframe_args(call, "rlabel") ? Type::string(RBT_RUBY_LABEL_LEN) : Type::none();
}

Type TypeChecker::check_rpath(const Call &call) {
  return check_rframe_args(call, "rpath") ? Type::string(RBT_RUBY_PATH_LEN) : Type::none();
}

Type TypeChecker::check_rline(const Call &call) {
  return check_rframe_args(call, "rline") ? Type::integer(64, false) : Type::none();
}

}  // namespace rbt::sema
