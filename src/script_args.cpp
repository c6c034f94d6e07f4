#include "script_args.h"

namespace rbt {

std::optional<std::string> add_script_args(const std::vector<std::string> &words, Options &opts) {
  for (const std::string &w : words) {
    if (w.size() <= 2 || w.compare(0, 2, "--") != 0) {
      opts.args.push_back(w);  // "--" itself (a second one) is a word like any other
      continue;
    }
    size_t eq = w.find('=');
    std::string name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (name.empty())
      return "'" + w + "' names no parameter (named parameters are --NAME=VALUE or --NAME)";
    // As in bpftrace, the last of repeated --name=value wins.
    opts.named_args[name] = eq == std::string::npos ? std::nullopt
                                                    : std::optional<std::string>(w.substr(eq + 1));
  }
  return std::nullopt;
}

}  // namespace rbt
