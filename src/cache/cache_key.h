#pragma once
// The key of a compiled object: everything that decides what the compiler produces from a
// script, hashed. Two runs with the same key compile the same object, so the second may reuse
// the first's. Inputs: rbt (version and rbt-full's build id), the script, its name and arguments, the
// options that reach the compiler, the BPFTRACE_* and RBT_* environment, the working directory
// and PATH (relative and bare binary names resolve through them), the kernel (release, this
// boot, its BTF, loaded modules), what the dynamic loader would find (ld.so.cache, the library
// and PATH directories) and, with -p, the process's root directory (its identity, not the pid:
// processes of one root share objects). The binaries a script probes are not in the key: their
// identities (with -p, seen through the process's root) and, with -p, what the probes'
// binaries resolved to through the process are stored in the entry and checked on use.

#include <string>

#include "options.h"
#include "result.h"
#include "sha256.h"

namespace rbt::cache {

// The key's inputs as text, one "name: value" line each (shown by tests and for debugging);
// an error when one of them cannot be read (then nothing is cached).
Result<std::string> key_text(const Options &options);

// rbt-full, the whole of rbt with the compiler: installed next to rbt (launcher_main.cpp).
std::string full_binary_path();

// The compiler's identity: rbt-full's GNU build id, else that file's identity.
std::string build_id();

}  // namespace rbt::cache
