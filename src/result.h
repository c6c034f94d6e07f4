#pragma once
// Result<T>: how the environment and the kernel say "no" (missing file, verifier rejection,
// attach failure). Carries errno and a message chain; printed by the driver as
//   rbt: error: <what>: <why>
//   hint: <hint>
// Script mistakes do not use this: they go through the DiagnosticEngine with a source range.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace rbt {

struct Error {
  std::string what;  // the thing being done, e.g. "attaching kprobe:vfs_read"
  std::string why;   // the cause, e.g. "this kernel has no kprobe support (CONFIG_KPROBES)"
  std::string hint;  // optional advice printed on its own line
  std::string detail;  // optional extra text shown with -v (e.g. the verifier log's tail)
  // A mistake located in the script, already rendered as `file:line:col: error: ...` with the
  // source line and its caret: printed as it is, instead of what/why (a back-end error that
  // belongs to one probe, found after the front end's diagnostics were done).
  std::string diagnostic;
  int err = 0;       // errno when the kernel said no, else 0

  // Prefixes the context, so errors read outside-in ("loading program x: map y: ...").
  Error &context(const std::string &outer) {
    what = what.empty() ? outer : outer + ": " + what;
    return *this;
  }
};

template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T &value() {
    assert(ok() && "value() of a failed Result");
    return std::get<0>(v_);
  }
  T &operator*() { return value(); }
  T *operator->() { return &value(); }
  Error &error() {
    assert(!ok() && "error() of a successful Result");
    return std::get<1>(v_);
  }

private:
  std::variant<T, Error> v_;
};

// Result<void> stand-in: success carries nothing.
struct Ok {};
using Status = Result<Ok>;

inline Error make_error(std::string what, std::string why, std::string hint = {}, int err = 0) {
  Error e;
  e.what = std::move(what);
  e.why = std::move(why);
  e.hint = std::move(hint);
  e.err = err;
  return e;
}

}  // namespace rbt
