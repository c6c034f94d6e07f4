#pragma once
// C definitions at the top of a script, as bpftrace accepts them: structs and unions for casts
// of pointers the kernel has no BTF for (user-space data), with bit fields, arrays and nested
// definitions; enums whose enumerators become constants. Records are laid out with the C ABI
// of x86-64 and BPF (natural alignment, System V bit-field packing; `__attribute__((packed))`
// packs), into the same RecordLayout the kernel's BTF structs use, so field access works the
// same on both.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "record_layout.h"
#include "result.h"

namespace rbt::sema {

// `enum NAME { A = 1, B, ... }`; NAME is empty for an anonymous enum.
struct CEnum {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> values;
};

// What one definition declares: its record (or enum), and the named or anonymous ones nested
// in it (an anonymous record is named after its field: `Foo.bar`), inner ones first.
struct CDefinitions {
  std::vector<std::shared_ptr<RecordLayout>> records;
  std::vector<CEnum> enums;
};

// Parses one definition's text, from `struct`/`union`/`enum` to its closing brace and
// attributes. `find` resolves `struct X` used inside (one defined earlier in the script, else
// the kernel's); `constant` an enumerator defined earlier. The error says what did not parse.
Result<CDefinitions> parse_c_definition(
    const std::string &text, const std::function<const RecordLayout *(const std::string &)> &find,
    const std::function<std::optional<int64_t>(const std::string &)> &constant);

}  // namespace rbt::sema
