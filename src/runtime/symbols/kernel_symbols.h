#pragma once
// Kernel addresses to `function+offset`, from /proc/kallsyms (read once, on first use).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rbt::runtime {

class KernelSymbols {
public:
  std::optional<std::string> symbolize(uint64_t addr);
  // The address of any kernel symbol (functions and data, as kaddr() wants), by one pass over
  // /proc/kallsyms; nullopt when absent or hidden (kptr_restrict shows zeroes).
  static std::optional<uint64_t> address_of(const std::string &name);

private:
  struct Symbol {
    uint64_t addr;
    std::string name;
  };
  void load();
  bool loaded_ = false;
  std::vector<Symbol> symbols_;  // sorted by address
};

}  // namespace rbt::runtime
