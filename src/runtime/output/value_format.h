#pragma once
// Text of one value laid out as an rbt::Type: integers in decimal, strings up to their NUL,
// tuples as "(1, two, (3, 4))", as bpftrace prints map keys and values.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest.h"
#include "types.h"

namespace rbt::output {

std::string format_value(const Type &type, const uint8_t *bytes);

// Stack values need the stack maps and symbols only the running session has, so the session
// installs the function that turns one into frame lines (leaf first).
using StackFrames = std::function<std::vector<std::string>(const Type &, const uint8_t *)>;
void set_stack_frames(StackFrames frames);
std::vector<std::string> stack_frames(const Type &type, const uint8_t *bytes);
// ksym/usym values: the symbol an address falls in ("vfs_read+5"), installed likewise.
using SymbolName = std::function<std::string(bool user, uint64_t addr, uint64_t pid)>;
void set_symbol_name(SymbolName name);
// strftime() and cgroup_path() values are {u64 index, u64 value}: the index names one of the
// manifest's strings (a strftime format; a cgroup_path filter), so the session, which holds
// them, installs the function that renders (kind, index, nanoseconds or cgroup id).
using IndexedText = std::function<std::string(TypeKind kind, uint64_t index, uint64_t value)>;
void set_indexed_text(IndexedText text);
// The script's enums (the manifest's): an Int value whose type names one prints as its
// enumerator's name, when it has one (a value outside the enum prints as a number).
void set_enums(std::vector<EnumDesc> enums);

// Bytes as bpftrace prints buffers: printable ASCII kept and the rest as \xNN (%r, and buf
// values); every byte as \xNN (%rx); or "0a fe" (%rh).
enum class HexMode { Escaped, AllEscaped, Spaced };
std::string hex_bytes(const uint8_t *bytes, size_t size, HexMode mode = HexMode::Escaped);
// The bytes a buffer value holds (its length, at most its room).
std::string_view buffer_bytes(const Type &type, const uint8_t *bytes);
// inet_ntop of an ntop() value; empty for an unknown family, as bpftrace.
std::string inet_text(const uint8_t *bytes);

int64_t load_int(const Type &type, const uint8_t *bytes);  // sign- or zero-extended
std::string load_string(const Type &type, const uint8_t *bytes);
// What follows a string that may have been cut short (Type::may_be_cut): the script's
// str_trunc_trailer, set by the session before any output.
void set_str_trunc_trailer(std::string trailer);

}  // namespace rbt::output
