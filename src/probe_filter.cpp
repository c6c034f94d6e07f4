#include "probe_filter.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace rbt {

namespace {
bool is_begin_or_end(const std::string &text) {
  std::string t;
  for (char c : text)
    t += static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return t == "begin" || t == "end";
}
}  // namespace

bool valid_probe_filter(const std::string &regex, std::string &why) {
  try {
    std::regex re(regex);
  } catch (const std::regex_error &e) {
    why = e.what();
    return false;
  }
  return true;
}

size_t filter_probes(ast::Program &program, const std::string &regex) {
  std::regex re(regex);
  for (ast::Probe *probe : program.probes) {
    auto &points = probe->attach_points;
    points.erase(std::remove_if(points.begin(), points.end(),
                                [&](const ast::AttachPoint *ap) {
                                  return !is_begin_or_end(ap->text) &&
                                         !std::regex_search(ap->text, re);
                                }),
                 points.end());
  }
  auto &probes = program.probes;
  probes.erase(std::remove_if(probes.begin(), probes.end(),
                              [](const ast::Probe *p) { return p->attach_points.empty(); }),
               probes.end());
  return probes.size();
}

}  // namespace rbt
