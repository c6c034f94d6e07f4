#pragma once
// `import "path";` (bpftrace's): which files an import names and whether rbt may read them.
// parse.cpp parses them and merges what they define.

#include <string>
#include <vector>

#include "diagnostics.h"
#include "source.h"

namespace rbt {

enum class ImportKind { Script, Header };  // a .bt file, a .h file (C definitions only)

struct ImportFile {
  std::string path;  // canonical: each file is imported once, however it is named
  std::string name;  // as diagnostics name it: relative to the current directory when inside it
  ImportKind kind;
};

// The directory an importer's relative paths start from: the script's own, or the current
// directory for stdin and -e.
std::string import_base_dir(const SourceFile &importer);

// The canonical path of a script given as a file (an import of it imports nothing new); empty
// for stdin and -e.
std::string script_path(const SourceFile &script);

// The files `path` names: itself, or a directory's .bt and .h files (not its subdirectories'),
// in name order. A missing file, a world-writable place or a .bpf.c file is an error at `at`.
std::vector<ImportFile> import_files(const SourceRange &at, const std::string &path,
                                     const std::string &base_dir, DiagnosticEngine &diags);

// A file's whole text; false (reported at `at`) when it cannot be read.
bool read_import(const SourceRange &at, const std::string &path, std::string &text,
                 DiagnosticEngine &diags);

}  // namespace rbt
