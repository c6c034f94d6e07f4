#pragma once
// A tracepoint's record (the `args` of a tracepoint probe), read from tracefs's format file.

#include <string>

#include "record_layout.h"
#include "result.h"

namespace rbt::runtime {

Result<RecordLayout> read_tracepoint_format(const std::string &category, const std::string &event);

// Parses the text of a format file (exposed for tests). common_* fields are left out.
RecordLayout parse_tracepoint_format(const std::string &name, const std::string &text);

}  // namespace rbt::runtime
