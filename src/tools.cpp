#include "tools.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace rbt {
namespace fs = std::filesystem;

namespace {

constexpr const char *kExtension = ".rbt";

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return "";
  return fs::path(std::string(buf, n)).parent_path().string();
}

// Every installed tool: name → path (earlier directories shadow later ones).
std::map<std::string, std::string> installed_tools() {
  std::map<std::string, std::string> tools;
  for (const std::string &dir : tool_dirs()) {
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(dir, ec)) {
      const fs::path &p = entry.path();
      if (p.extension() == kExtension && entry.is_regular_file(ec))
        tools.emplace(p.stem().string(), p.string());
    }
  }
  return tools;
}

// The first line of the header comment, after the #! line.
std::string purpose_of(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#!", 0) == 0 || line.empty())
      continue;
    if (line.rfind("//", 0) != 0)
      return "";
    size_t start = line.find_first_not_of("/ ");
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); j++)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> tool_dirs() {
  std::vector<std::string> dirs;
  if (const char *env = getenv("RBT_TOOLS_DIR"); env && *env)
    dirs.push_back(env);
  std::string dir = self_dir();
  if (!dir.empty()) {
    dirs.push_back(dir + "/share/rbt/stdlib");     // build tree (a link to stdlib/)
    dirs.push_back(dir + "/../share/rbt/stdlib");  // cmake --install prefix
  }
  return dirs;
}

std::optional<std::string> find_tool(const std::string &name) {
  if (name.empty() || name.find('/') != std::string::npos)
    return std::nullopt;
  auto tools = installed_tools();
  std::string stem = name.size() > 4 && name.ends_with(kExtension) ? name.substr(0, name.size() - 4)
                                                                    : name;
  if (auto it = tools.find(stem); it != tools.end())
    return it->second;
  return std::nullopt;
}

std::vector<std::string> close_tool_names(const std::string &name) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto &[tool, path] : installed_tools()) {
    size_t d = edit_distance(name, tool);
    bool related = tool.find(name) != std::string::npos || name.find(tool) != std::string::npos ||
                   edit_distance("ruby" + name, tool) <= 2;
    if (d <= std::max<size_t>(2, name.size() / 3) || (related && name.size() >= 2))
      scored.emplace_back(related ? std::min<size_t>(d, 1) : d, tool);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> names;
  for (auto &[d, tool] : scored)
    if (names.size() < 5)
      names.push_back(tool);
  return names;
}

int list_tools(FILE *out) {
  auto tools = installed_tools();
  size_t width = 0;
  for (const auto &[name, path] : tools)
    width = std::max(width, name.size());
  for (const auto &[name, path] : tools)
    fprintf(out, "%-*s  %s\n", static_cast<int>(width), name.c_str(), purpose_of(path).c_str());
  return static_cast<int>(tools.size());
}

// The rest of the header comment line that starts with MARKER, if there is one.
static std::optional<std::string> header_line(const std::string &script_text,
                                              const std::string &marker) {
  std::istringstream in(script_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#!", 0) == 0)
      continue;
    if (line.rfind("//", 0) != 0)
      break;  // only the header comment declares anything
    if (line.rfind(marker, 0) == 0)
      return line.substr(marker.size());
  }
  return std::nullopt;
}

std::vector<std::string> tool_defaults(const std::string &script_text) {
  std::vector<std::string> values;
  if (auto rest = header_line(script_text, "// defaults:")) {
    std::istringstream words(*rest);
    for (std::string w; words >> w;)
      values.push_back(w);
  }
  return values;
}

bool tool_needs_target(const std::string &script_text) {
  return header_line(script_text, "// needs: -p PID or -c COMMAND").has_value();
}

size_t tool_syscall_argument(const std::string &script_text) {
  auto rest = header_line(script_text, "// syscall: $");
  return rest ? std::strtoul(rest->c_str(), nullptr, 10) : 0;
}

std::optional<long> syscall_number(const std::string &name) {
  static const std::map<std::string, long> table = {
#include "syscall_table.inc"  // generated by src/CMakeLists.txt
  };
  auto it = table.find(name);
  if (it == table.end())
    return std::nullopt;
  return it->second;
}

}  // namespace rbt
