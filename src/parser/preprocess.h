#pragma once
// The C preprocessor subset of bpftrace scripts (#include, #define, #if/#ifdef/#ifndef/#else/
// #endif), applied to the text before lexing (preprocess.cpp says how).

#include <map>
#include <set>
#include <string>
#include <vector>

#include "diagnostics.h"

namespace rbt {

// Integer-valued macros of the headers a script includes (AF_INET → 2), found by the driver
// with the system's C preprocessor; empty when it has none.
struct HeaderMacros {
  std::map<std::string, std::string> values;
  std::set<std::string> missing;  // headers the system's C preprocessor did not find
};

// Whether `text` has a preprocessor line (other than a first-line `#!`).
bool needs_preprocessing(const std::string &text);
// The headers `#include`d, as written between <> or "".
std::vector<std::string> included_headers(const std::string &text);
// The text with directives blanked (line numbers kept) and macros substituted.
std::string preprocess(const std::string &text, DiagnosticEngine &diags,
                       const HeaderMacros &header_macros);

}  // namespace rbt
