#pragma once
// C struct definitions at the top of a script (`struct foo { int a; char name[16]; };`), as
// bpftrace accepts them for casts of pointers the kernel has no BTF for (user-space data). The
// fields are laid out with the C ABI of x86-64 and BPF (natural alignment), into the same
// RecordLayout the kernel's BTF structs use, so field access works the same on both.

#include <functional>
#include <memory>
#include <string>

#include "record_layout.h"
#include "result.h"

namespace rbt::sema {

// Parses one definition's text, from `struct` to its closing brace. `find` resolves `struct X`
// used inside (a struct defined earlier in the script, else the kernel's). The error says which
// field did not parse.
Result<std::shared_ptr<RecordLayout>> parse_c_struct(
    const std::string &text, const std::function<const RecordLayout *(const std::string &)> &find);

}  // namespace rbt::sema
