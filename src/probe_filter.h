#pragma once
// --probe-filter REGEX: keeps the attach points whose names the regular expression matches
// (anywhere in the name, as std::regex_search), and every BEGIN/END probe, as bpftrace does.

#include <string>

#include "ast.h"

namespace rbt {

// Whether `regex` is a valid ECMAScript regular expression; else its error in `why`.
bool valid_probe_filter(const std::string &regex, std::string &why);

// Drops the attach points `regex` does not match, then the probes left with none. Returns the
// number of probes left.
size_t filter_probes(ast::Program &program, const std::string &regex);

}  // namespace rbt
