#pragma once
// bpftrace's config variables set in the environment (BPFTRACE_MAX_STRLEN=9999 rbt ...). As in
// bpftrace they take precedence over the script's config block; a bad value is an error.

#include "result.h"
#include "sema/sema.h"

namespace rbt {

Result<sema::ConfigOverrides> config_from_environment();

}  // namespace rbt
