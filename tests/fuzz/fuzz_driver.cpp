// libFuzzer target for the whole driver: the input's first line is a command line, the rest a
// script file; rbt's own main (rbt::cli_main) runs them with --dry-run, so the script goes
// through option parsing, the script file reader, the parser, the type checker, codegen and
// libbpf's loader and the kernel's verifier, and nothing is attached. Needs root (BPF).
//
//   -q -f json -d ast\nBEGIN { printf("%d\n", 1); }
//
// Only options that cannot run commands, write files or attach are passed on (-c, -p, -o,
// --emit-elf, --unsafe, record, report and combined short options such as -qc are dropped):
// the fuzzer must not run `-c 'rm -rf /'`. Built with -DRBT_FUZZ=ON; run with scripts/fuzz.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"

namespace {

// Options passed on as they are, and those of them whose next word is their value.
const std::set<std::string> kAllowed = {"-e", "-f", "-d", "-q", "-v", "-k", "-h", "-V", "--",
                                        "--help", "--version", "--sum-unit", "--list-tools"};
const std::set<std::string> kTakesValue = {"-e", "-f", "-d", "--sum-unit"};

std::string script_path() {
  static const std::string path = [] {
    char tmpl[] = "/tmp/rbt-fuzz-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd >= 0)
      close(fd);
    return std::string(tmpl);
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string input(reinterpret_cast<const char *>(data), size);
  size_t nl = input.find('\n');
  std::string line = input.substr(0, nl);
  std::string script = nl == std::string::npos ? "" : input.substr(nl + 1);

  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;)
    words.push_back(w);
  std::vector<std::string> args = {"rbt", "--dry-run"};
  bool has_program = false;
  for (size_t i = 0; i < words.size(); i++) {
    const std::string &w = words[i];
    if (w.size() > 1 && w[0] == '-') {
      if (!kAllowed.count(w))
        continue;
      args.push_back(w);
      if (kTakesValue.count(w) && i + 1 < words.size())
        args.push_back(words[++i]);
      has_program = has_program || w == "-e";
    } else if (w != "-" && w != "record" && w != "report") {
      args.push_back(w);  // a positional: the script file or a tool's name, then $1..$N
    }
  }
  // The rest of the input is the script file, first among the positionals (after -e, $1).
  FILE *f = fopen(script_path().c_str(), "w");
  if (!f)
    return 0;
  fwrite(script.data(), 1, script.size(), f);
  fclose(f);
  size_t first_positional = args.size();
  for (size_t i = 2; i < args.size(); i++)
    if (args[i][0] != '-' && !kTakesValue.count(args[i - 1])) {
      first_positional = i;
      break;
    }
  if (!has_program)
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(first_positional), script_path());

  std::vector<char *> argv;
  for (auto &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  rbt::cli_main(static_cast<int>(args.size()), argv.data());
  fflush(stdout);
  fflush(stderr);
  return 0;
}
