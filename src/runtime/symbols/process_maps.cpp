#include "process_maps.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace rbt::runtime {

std::vector<Mapping> parse_process_maps(const std::string &text) {
  std::vector<Mapping> maps;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    // start-end perms offset dev inode path
    std::istringstream f(line);
    std::string range, perms, offset, dev, inode, path;
    f >> range >> perms >> offset >> dev >> inode;
    std::getline(f >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] != '/')
      continue;
    Mapping m;
    size_t dash = range.find('-');
    m.start = std::stoull(range.substr(0, dash), nullptr, 16);
    m.end = std::stoull(range.substr(dash + 1), nullptr, 16);
    m.offset = std::stoull(offset, nullptr, 16);
    m.path = path;
    maps.push_back(std::move(m));
  }
  std::sort(maps.begin(), maps.end(), [](auto &a, auto &b) { return a.start < b.start; });
  return maps;
}

std::vector<Mapping> read_process_maps(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::stringstream text;
  text << in.rdbuf();
  return parse_process_maps(text.str());
}

bool runs_own_image(pid_t pid) {
  static const struct stat self = [] {
    struct stat st{};
    stat("/proc/self/exe", &st);  // rbt's own image, once
    return st;
  }();
  struct stat exe{};
  return self.st_ino && stat(("/proc/" + std::to_string(pid) + "/exe").c_str(), &exe) == 0 &&
         self.st_dev == exe.st_dev && self.st_ino == exe.st_ino;
}

}  // namespace rbt::runtime
