#include "header_macros.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace rbt {

namespace {

// A header name a shell command line may carry as is.
bool plain_header_name(const std::string &h) {
  if (h.empty() || h[0] == '-' || h.find("..") != std::string::npos)
    return false;
  for (char c : h)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '/' && c != '.' && c != '-' &&
        c != '+')
      return false;
  return true;
}

// "2", "(2)", "0x10U", "(1UL << 3)" stays out: only plain integer literals, optionally in ().
bool integer_literal(std::string v, std::string &out) {
  while (v.size() >= 2 && v.front() == '(' && v.back() == ')')
    v = v.substr(1, v.size() - 2);
  if (v.empty() || !isdigit(static_cast<unsigned char>(v[0])))
    return false;
  while (!v.empty() && (v.back() == 'u' || v.back() == 'U' || v.back() == 'l' || v.back() == 'L'))
    v.pop_back();
  char *end = nullptr;
  unsigned long long n = strtoull(v.c_str(), &end, 0);
  if (*end != '\0')
    return false;
  out = std::to_string(n);
  return true;
}

// False when the C preprocessor did not find the header.
bool read_defines(const std::string &header, std::map<std::string, std::string> &raw) {
  char path[] = "/tmp/rbt_header_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0)
    return true;  // no verdict: nothing was tried
  bool found = true;
  std::string include = "#include <" + header + ">\n";
  bool written = write(fd, include.data(), include.size()) == static_cast<ssize_t>(include.size());
  close(fd);
  if (written) {
    std::string cmd = std::string("cpp -dM -E -x c ") + path + " 2>/dev/null";
    if (FILE *p = popen(cmd.c_str(), "r")) {
      char buf[4096];
      while (fgets(buf, sizeof buf, p)) {
        std::string line(buf);
        if (line.rfind("#define ", 0) != 0)
          continue;
        line = line.substr(8);
        size_t sp = line.find(' ');
        if (sp == std::string::npos || line.substr(0, sp).find('(') != std::string::npos)
          continue;
        std::string value = line.substr(sp + 1);
        while (!value.empty() && isspace(static_cast<unsigned char>(value.back())))
          value.pop_back();
        raw[line.substr(0, sp)] = value;
      }
      int status = pclose(p);
      found = !(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    }
  }
  unlink(path);
  return found;
}

}  // namespace

HeaderMacros read_header_macros(const std::vector<std::string> &headers) {
  std::map<std::string, std::string> raw;
  HeaderMacros out;
  for (const std::string &h : headers)
    if (plain_header_name(h) && !read_defines(h, raw))
      out.missing.insert(h);
  for (auto &[name, value] : raw) {
    // Constants are upper case; the compiler's own (linux, unix, __x86_64__) must never
    // replace a word of the script.
    if (name[0] == '_' || name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
                              std::string::npos)
      continue;
    // Follow aliases (AF_INET → PF_INET → 2) a few steps.
    std::string v = value, literal;
    for (int i = 0; i < 4 && raw.count(v); i++)
      v = raw[v];
    if (integer_literal(v, literal))
      out.values[name] = literal;
  }
  return out;
}

}  // namespace rbt
