// Type checks of the builtins whose one argument is a bare word choosing a clock
// (nsecs(boot)) or a pid namespace (pid(curr_ns)); lower_clock_ns.cpp reads the same word.

#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

namespace {
// Whether the call's argument, if any, is one of `words` (a bare identifier, never evaluated).
bool word_is_one_of(const Call &call, std::initializer_list<const char *> words) {
  if (call.args.empty())
    return true;
  auto *word = dyn_cast<Builtin>(call.args[0]);
  if (!word)
    return false;
  for (const char *w : words)
    if (word->name == w)
      return true;
  return false;
}
}  // namespace

Type TypeChecker::check_nsecs_n(const Call &call) {
  if (!word_is_one_of(call, {"monotonic", "boot", "tai", "sw_tai"})) {
    diags_.error(call.args[0]->range, "nsecs()'s clock must be monotonic, boot, tai or sw_tai");
    return Type::none();
  }
  return Type::integer(64, false);
}

Type TypeChecker::check_pid_n(const Call &call) {
  if (!word_is_one_of(call, {"curr_ns", "init"})) {
    diags_.error(call.args[0]->range, "pid()'s namespace must be curr_ns or init");
    return Type::none();
  }
  return Type::integer(32, false);
}

Type TypeChecker::check_tid_n(const Call &call) {
  if (!word_is_one_of(call, {"curr_ns", "init"})) {
    diags_.error(call.args[0]->range, "tid()'s namespace must be curr_ns or init");
    return Type::none();
  }
  return Type::integer(32, false);
}

}  // namespace rbt::sema
