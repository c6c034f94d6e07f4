#pragma once
// Text of one value laid out as an rbt::Type: integers in decimal, strings up to their NUL,
// tuples as "(1, two, (3, 4))", as bpftrace prints map keys and values.

#include <cstdint>
#include <string>

#include "types.h"

namespace rbt::output {

std::string format_value(const Type &type, const uint8_t *bytes);
int64_t load_int(const Type &type, const uint8_t *bytes);  // sign- or zero-extended
std::string load_string(const Type &type, const uint8_t *bytes);

}  // namespace rbt::output
