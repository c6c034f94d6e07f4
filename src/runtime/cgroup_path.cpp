#include "cgroup_path.h"

#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

namespace rbt::runtime {

namespace {

namespace fs = std::filesystem;

struct Hierarchy {
  std::string name;  // "unified" or the v1 mount directory's name ("memory")
  std::string root;  // where it is mounted
  bool v2 = false;
};

// /proc/mounts escapes blanks in paths as octal (\040).
std::string unescape_mount_path(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// cgroup2 first, then v1 hierarchies by name, as bpftrace orders them.
std::vector<Hierarchy> mounted_hierarchies(const std::string &mounts, const std::string &filter) {
  std::vector<Hierarchy> found;
  std::ifstream in(mounts);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string device, dir, fstype;
    if (!(fields >> device >> dir >> fstype) || (fstype != "cgroup" && fstype != "cgroup2"))
      continue;
    Hierarchy h;
    h.root = unescape_mount_path(dir);
    h.v2 = fstype == "cgroup2";
    h.name = h.v2 ? "unified" : fs::path(h.root).filename().string();
    if (fnmatch(filter.c_str(), h.name.c_str(), 0) == 0)
      found.push_back(std::move(h));
  }
  std::stable_sort(found.begin(), found.end(), [](const Hierarchy &a, const Hierarchy &b) {
    return a.v2 != b.v2 ? a.v2 : !a.v2 && a.name < b.name;
  });
  return found;
}

bool has_inode(const std::string &path, uint64_t ino) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && st.st_ino == ino;
}

// The path of the cgroup directory whose inode is `id` (a cgroup's id is its kernfs inode
// number) below `root`, "/" for the root itself, "" when absent. A walk of the hierarchy is
// expensive, so hits are remembered and checked again before being reused (ids are reused
// after a cgroup is removed).
std::string path_in_hierarchy(uint64_t id, const std::string &root) {
  static std::map<std::pair<uint64_t, std::string>, std::string> cache;
  auto key = std::make_pair(id, root);
  if (auto it = cache.find(key); it != cache.end() && has_inode(root + it->second, id))
    return it->second;
  if (has_inode(root, id))
    return cache[key] = "/";
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    // Cgroups are directories; their control files need no stat.
    if (!it->is_directory(ec) || it->is_symlink(ec)) {
      it.disable_recursion_pending();
      continue;
    }
    std::string path = it->path().string();
    if (has_inode(path, id))
      return cache[key] = path.substr(root.size());
  }
  return "";
}

}  // namespace

std::string cgroup_path_text(uint64_t cgroup_id, const std::string &filter,
                             const std::string &mounts) {
  std::string text;
  for (const Hierarchy &h : mounted_hierarchies(mounts, filter)) {
    std::string path = path_in_hierarchy(cgroup_id, h.root);
    if (!path.empty())
      text += (text.empty() ? "" : ",") + h.name + ":" + path;
  }
  return text;
}

}  // namespace rbt::runtime
