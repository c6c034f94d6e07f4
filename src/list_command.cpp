#include "list_command.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <vector>

#include "listing.h"
#include "parse.h"
#include "script_text.h"
#include "warnings.h"

namespace rbt {

namespace {

int report(const Error &e) {
  fprintf(stderr, "rbt: error: %s%s%s\n", e.what.c_str(), e.what.empty() ? "" : ": ", e.why.c_str());
  if (!e.hint.empty())
    fprintf(stderr, "hint: %s\n", e.hint.c_str());
  return 1;
}

// The listing pattern of one attach point of a script. Timers and perf events list as their
// kind without the count (`interval:ms:100` is listed as `interval:ms:`); BEGIN/END list as
// nothing.
std::string listing_pattern(const std::string &attach_point) {
  size_t colon = attach_point.find(':');
  if (colon == std::string::npos)
    return {};  // BEGIN, END, self-contained words
  std::string type = attach_point.substr(0, colon);
  static const char *kCounted[] = {"interval", "i", "profile", "p", "software", "s", "hardware", "h"};
  for (const char *t : kCounted) {
    if (type != t)
      continue;
    size_t second = attach_point.find(':', colon + 1);
    return second == std::string::npos ? attach_point + ":" : attach_point.substr(0, second + 1);
  }
  return attach_point;
}

// The attach points of a script's probes, or nullopt after printing its syntax errors.
std::optional<std::vector<std::string>> script_attach_points(const std::string &name,
                                                             const std::string &text) {
  SourceFile source(name, text);
  DiagnosticEngine diags(source);
  ast::ASTContext ctx;
  ast::Program *program = parse(source, ctx, diags);
  if (!program) {
    diags.render(std::cerr);
    return std::nullopt;
  }
  std::vector<std::string> points;
  for (const ast::Probe *probe : program->probes)
    for (const ast::AttachPoint *ap : probe->attach_points)
      points.push_back(ap->text);
  return points;
}

}  // namespace

int run_list_command(const Options &options, bool have_program) {
  std::string pattern = options.list_pattern;
  std::vector<std::string> patterns;
  // `rbt -l script.bt` lists the script's probes, as `rbt -l -e 'PROGRAM'` does.
  std::error_code ec;
  bool script_file = !have_program && !pattern.empty() &&
                     std::filesystem::is_regular_file(pattern, ec);
  if (!have_program && !script_file && pattern.find(':') == std::string::npos &&
      (pattern.ends_with(".bt") || pattern.ends_with(".rbt")) && !warnings_suppressed)
    fprintf(stderr, "rbt: warning: '%s' looks like a script file but does not exist: listing it "
                    "as a pattern\n", pattern.c_str());
  if (have_program || script_file) {
    std::string name = have_program ? options.program_name : pattern;
    std::string text = options.program_text;
    if (script_file) {
      std::ifstream in(pattern);
      std::optional<std::string> read;
      if (in)
        read = read_script_text(in);
      if (!read) {
        fprintf(stderr, "rbt: error: reading %s: %s\nhint: give a script file\n",
                pattern.c_str(), in ? script_too_long_message().c_str() : strerror(errno));
        return 1;
      }
      text = std::move(*read);
    }
    auto points = script_attach_points(name, text);
    if (!points)
      return 1;
    for (const std::string &p : *points)
      if (std::string listed = listing_pattern(p); !listed.empty())
        patterns.push_back(listed);
    if (patterns.empty())
      return 0;
  } else {
    patterns.push_back(pattern);
  }
  for (const std::string &p : patterns) {
    auto s = runtime::list_probes(p, options.pid, options.verbose, stdout);
    if (!s)
      return report(s.error());
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {  // a full disk or /dev/full: not a silent 0
    fprintf(stderr, "rbt: error: writing output: %s\n", strerror(errno ? errno : EIO));
    return 1;
  }
  return 0;
}

}  // namespace rbt
