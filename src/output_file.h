#pragma once
// Opening the files rbt writes (-o FILE, --emit-elf FILE, rbt report -o FILE) safely: rbt runs as
// root, so a symbolic link another user planted in a world-writable directory (/tmp) must not
// make it overwrite a file the user cannot write. Every descriptor is close-on-exec, so a -c
// command or system() never inherits one.

#include <cstdio>
#include <string>

#include "result.h"

namespace rbt {

// A descriptor open for writing (created or truncated), or an error that names the file and says
// why (a planted link gets a hint).
Result<int> open_output_fd(const std::string &path);

// The same as a stdio stream ("we").
Result<std::FILE *> open_output_file(const std::string &path);

// Writes all of bytes to path (opened as above); an error names the file and errno's text.
Status write_output_file(const std::string &path, const std::string &bytes);

}  // namespace rbt
