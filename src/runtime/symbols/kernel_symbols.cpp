#include "kernel_symbols.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace rbt::runtime {

void KernelSymbols::load() {
  loaded_ = true;
  std::ifstream in("/proc/kallsyms");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string addr, type, name;
    f >> addr >> type >> name;
    if (type.empty() || (type[0] != 't' && type[0] != 'T' && type[0] != 'w' && type[0] != 'W'))
      continue;  // functions only: stacks hold return addresses into code
    uint64_t a = std::stoull(addr, nullptr, 16);
    if (a)
      symbols_.push_back({a, name});
  }
  std::sort(symbols_.begin(), symbols_.end(), [](auto &a, auto &b) { return a.addr < b.addr; });
}

std::optional<uint64_t> KernelSymbols::address_of(const std::string &name) {
  std::ifstream in("/proc/kallsyms");
  std::string addr, type, sym, line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    f >> addr >> type >> sym;
    if (sym == name) {
      uint64_t a = std::stoull(addr, nullptr, 16);
      return a ? std::optional<uint64_t>(a) : std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<std::string> KernelSymbols::symbolize(uint64_t addr) {
  if (!loaded_)
    load();
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                             [](uint64_t a, const Symbol &s) { return a < s.addr; });
  if (it == symbols_.begin())
    return std::nullopt;
  --it;
  return it->name + "+" + std::to_string(addr - it->addr);
}

}  // namespace rbt::runtime
