#include "imports.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rbt {

namespace {

bool ends_with(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string dir_of(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// Anyone may write there: anyone could swap what the script imports for their own code.
bool world_writable(const std::string &path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 && (st.st_mode & S_IWOTH);
}

std::string display_name(const std::string &canonical) {
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd))
    return canonical;
  std::string prefix = std::string(cwd) + (std::strcmp(cwd, "/") == 0 ? "" : "/");
  return canonical.compare(0, prefix.size(), prefix) == 0 ? canonical.substr(prefix.size())
                                                          : canonical;
}

}  // namespace

std::string script_path(const SourceFile &script) {
  struct stat st{};
  char real[PATH_MAX];
  if (script.name() == "stdin" || stat(script.name().c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      !realpath(script.name().c_str(), real))
    return "";
  return real;
}

std::string import_base_dir(const SourceFile &importer) {
  std::string path = script_path(importer);
  return path.empty() ? "." : dir_of(path);
}

std::vector<ImportFile> import_files(const SourceRange &at, const std::string &path,
                                     const std::string &base_dir, DiagnosticEngine &diags) {
  std::string quoted = "import \"" + path + "\": ";
  std::string full = !path.empty() && path[0] == '/' ? path : base_dir + "/" + path;
  char real[PATH_MAX];
  struct stat st{};
  if (!realpath(full.c_str(), real) || stat(real, &st) != 0) {
    diags.error(at, quoted + std::strerror(errno) + " (looked for " + full + ")");
    return {};
  }
  std::string canonical = real;
  std::string dir = S_ISDIR(st.st_mode) ? canonical : dir_of(canonical);
  if (world_writable(dir) || world_writable(canonical)) {
    diags.error(at, quoted + "refusing to import from the world-writable " +
                        (world_writable(canonical) ? canonical : dir) +
                        " (anyone could change what the script runs)");
    return {};
  }
  std::vector<std::string> names;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(canonical.c_str());
    if (!d) {
      diags.error(at, quoted + std::strerror(errno));
      return {};
    }
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name;
      struct stat est{};
      std::string entry = canonical + "/" + name;
      if (stat(entry.c_str(), &est) == 0 && S_ISREG(est.st_mode) &&
          (ends_with(name, ".bt") || ends_with(name, ".h") || ends_with(name, ".bpf.c")))
        names.push_back(entry);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
  } else {
    names.push_back(canonical);
  }
  std::vector<ImportFile> files;
  for (const std::string &f : names) {
    if (ends_with(f, ".bpf.c"))
      diags.error(at, quoted + f + " is BPF C source, which would need a C compiler at run "
                               "time; rbt has none (import .bt and .h files)");
    else if (ends_with(f, ".bt"))
      files.push_back({f, display_name(f), ImportKind::Script});
    else if (ends_with(f, ".h"))
      files.push_back({f, display_name(f), ImportKind::Header});
    else
      diags.error(at, quoted + "rbt imports .bt and .h files (and directories of them)");
  }
  return files;
}

bool read_import(const SourceRange &at, const std::string &path, std::string &text,
                 DiagnosticEngine &diags) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  if (in)
    s << in.rdbuf();
  if (!in) {
    diags.error(at, "import: cannot read " + path + ": " + std::strerror(errno));
    return false;
  }
  text = s.str();
  return true;
}

}  // namespace rbt
