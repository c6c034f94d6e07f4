// Type checks for the timeline builtins, sample() and marker(): events that `rbt record` (or
// any script run with a recorder) puts on a thread's timeline. Each stack kind may appear
// once, so the recorder knows which stack is Ruby, native or kernel without guessing; nstack
// (the exact native stack) and ustack (frame pointers) are both the native stack, so one of them.

#include "type_checker.h"

namespace rbt::sema {

using namespace ast;

namespace {
const char *stack_kind_name(StackKind kind) {
  switch (kind) {
  case StackKind::Kernel: return "kstack";
  case StackKind::User: return "ustack";
  case StackKind::Ruby: return "rstack";
  case StackKind::Native: return "nstack";
  case StackKind::Mixed: return "rstack(native)";
  }
  return "stack";
}

// The recorder keeps a Ruby, a native (nstack or ustack) and a kernel stack per event
// (recorder.h) and merges them itself; rstack(native) holds all three, each walked as the
// mixed stack walks it (by function, the native walk ending at the root-most C method).
// Marks the slots a stack takes among an event's stacks (nstack and ustack share one;
// rstack(native) takes all three); false when one is taken already.
bool take_slots(StackKind kind, bool (&seen)[3]) {
  std::vector<int> slots;
  if (kind == StackKind::Mixed)
    slots = {static_cast<int>(StackKind::Kernel), static_cast<int>(StackKind::User),
             static_cast<int>(StackKind::Ruby)};
  else
    slots = {kind == StackKind::Native ? static_cast<int>(StackKind::User)
                                       : static_cast<int>(kind)};
  bool free = true;
  for (int s : slots)
    free = free && !seen[s];
  for (int s : slots)
    seen[s] = true;
  return free;
}

std::string one_of(StackKind kind) {
  if (kind == StackKind::Mixed)
    return "Ruby, native and kernel stack: rstack(native) is all three";
  return kind == StackKind::Native || kind == StackKind::User ? "native stack (nstack or ustack)"
                                                              : stack_kind_name(kind);
}
}  // namespace

// sample([rstack][, nstack | ustack][, kstack]) or sample(rstack(native)): the current thread's time, ids, CPU and comm are added
// by the lowering; the arguments are the stacks to walk, in any order, each kind once.
Type TypeChecker::check_sample(const Call &call) {
  bool ok = true, seen[3] = {false, false, false};
  for (const Expr *a : call.args) {
    Type t = check_expr(*a);
    if (t.is_none()) {
      ok = false;
      continue;
    }
    if (!t.is_stack()) {
      diags_.error(a->range, "sample()'s arguments must be stacks (rstack, ustack, kstack), not " +
                                 t.name());
      ok = false;
      continue;
    }
    if (!take_slots(t.stack_kind, seen)) {
      diags_.error(a->range, "sample() takes one " + one_of(t.stack_kind));
      ok = false;
    }
  }
  return ok ? Type::void_type() : Type::none();
}

// marker("NAME", start, end, pid, tid[, name][, int...][, stack...]): an interval (end ==
// start: an instant) of thread `tid` with up to four integer fields and its stacks. Times are
// nsecs values; the thread is explicit because intervals such as off-CPU time end in another
// task's context (sched_switch runs in the task that leaves the CPU). `name`, a string right
// after tid, is the thread's name (comm, or sched_switch's next_comm): taken in BPF it names
// the thread even when user space reads the event after the thread has exited.
Type TypeChecker::check_marker(const Call &call) {
  bool ok = expect_literal(*call.args[0], "marker()'s name") != nullptr;
  static const char *kFixed[] = {"start", "end", "pid", "tid"};
  bool seen[3] = {false, false, false};
  bool stacks = false;
  int ints = 0;
  for (size_t i = 1; i < call.args.size(); i++) {
    const Expr &a = *call.args[i];
    Type t = check_expr(a);
    if (t.is_none()) {
      ok = false;
      continue;
    }
    if (i <= 4) {
      ok = expect_int(a, t, std::string("marker()'s ") + kFixed[i - 1]) && ok;
      continue;
    }
    if (i == 5 && t.is_string())
      continue;  // the thread's name
    if (t.is_stack()) {
      if (!take_slots(t.stack_kind, seen)) {
        diags_.error(a.range, "marker() takes one " + one_of(t.stack_kind));
        ok = false;
      }
      stacks = true;
    } else if (!t.is_scalar()) {
      diags_.error(a.range, t.is_string()
                                ? "marker()'s thread name is the argument right after tid"
                                : "marker()'s fields must be integers or stacks, not " + t.name());
      ok = false;
    } else if (stacks) {
      diags_.error(a.range, "marker()'s integer fields come before its stacks");
      ok = false;
    } else if (++ints > 4) {
      diags_.error(a.range, "marker() takes at most four integer fields");
      ok = false;
    }
  }
  return ok ? Type::void_type() : Type::none();
}

}  // namespace rbt::sema
