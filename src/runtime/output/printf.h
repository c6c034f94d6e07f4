#pragma once
// Formats a printf event's payload with its format, in user space.

#include <cstdint>
#include <string>

#include "format_spec.h"
#include "manifest.h"

namespace rbt::output {

std::string format_printf(const ParsedFormat &format, const Type &args, const uint8_t *payload);

}  // namespace rbt::output
