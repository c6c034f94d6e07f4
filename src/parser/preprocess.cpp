// The C preprocessor lines bpftrace's tools use, handled before lexing:
//
//   #ifndef BPFTRACE_HAVE_BTF            (blank: rbt always reads kernel types from BTF)
//   #include <linux/sched.h>             (blank; struct types come from BTF)
//   #else                                (blank)
//   #include <sys/socket.h>              (blank; its integer macros are looked up, below)
//   #endif                               (blank)
//   #define MAX 10                       (blank; MAX is replaced by 10 from here on)
//
// Every directive line becomes an empty line, so line numbers of diagnostics stay those of the
// file. Object-like macros are substituted by identifier outside strings and comments;
// function-like ones are refused with an error.

#include "preprocess.h"

#include <cctype>
#include <map>
#include <sstream>
#include <vector>

namespace rbt {

namespace {

bool is_ident_start(char c) { return isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

class Preprocessor {
public:
  Preprocessor(DiagnosticEngine &diags, const HeaderMacros &header_macros)
      : diags_(diags), header_macros_(header_macros) {
    // bpftrace defines it when the kernel has BTF; rbt requires BTF.
    macros_["BPFTRACE_HAVE_BTF"] = "1";
  }

  std::string run(const std::string &text) {
    std::vector<std::string> lines;
    std::stringstream in(text);
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
    bool ends_with_newline = !text.empty() && text.back() == '\n';
    std::string out;
    for (size_t i = 0; i < lines.size(); i++) {
      std::string line = lines[i];
      std::string t = trim(line);
      bool directive = !t.empty() && t[0] == '#' && !(i == 0 && t.rfind("#!", 0) == 0) &&
                       !in_comment_ && !in_string_;
      if (directive) {
        // A directive continues on the next line after a backslash.
        std::string full = t;
        size_t extra = 0;
        while (!full.empty() && full.back() == '\\' && i + extra + 1 < lines.size()) {
          full.pop_back();
          full += " " + trim(lines[i + ++extra]);
        }
        this->directive(full, static_cast<unsigned>(i + 1));
        out.append(extra + 1, '\n');
        i += extra;
        continue;
      }
      if (active())
        out += substitute(line);
      out += '\n';
    }
    if (!ends_with_newline && !out.empty())
      out.pop_back();
    if (!conds_.empty())
      diags_.error(conds_.back().range, "#if without #endif");
    return out;
  }

private:
  struct Cond {
    SourceRange range;
    bool parent_active;
    bool taken;   // some branch of this #if was active
    bool active;  // the current branch is
  };

  bool active() const { return conds_.empty() || conds_.back().active; }

  bool defined(const std::string &name) const {
    return macros_.count(name) || header_macros_.values.count(name);
  }

  // `#if` conditions as tools write them: 0, 1, NAME, defined(NAME), !defined NAME.
  bool evaluate(std::string e, const SourceRange &range) {
    e = trim(e);
    bool negate = false;
    while (!e.empty() && e[0] == '!') {
      negate = !negate;
      e = trim(e.substr(1));
    }
    bool value;
    if (e.rfind("defined", 0) == 0) {
      std::string name;
      for (char c : e.substr(7))
        if (is_ident_char(c))
          name += c;
      value = defined(name);
    } else if (!e.empty() && isdigit(static_cast<unsigned char>(e[0]))) {
      value = std::strtoll(e.c_str(), nullptr, 0) != 0;
    } else if (!e.empty() && is_ident_start(e[0]) &&
               e.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ==
                   std::string::npos) {
      auto it = macros_.find(e);
      value = it != macros_.end() && std::strtoll(it->second.c_str(), nullptr, 0) != 0;
    } else {
      diags_.error(range, "#if condition '" + e + "' is not supported (use #ifdef/#ifndef)");
      value = false;
    }
    return negate ? !value : value;
  }

  void directive(const std::string &line, unsigned lineno) {
    SourceRange range{lineno, 1, lineno, static_cast<unsigned>(line.size() + 1)};
    std::string body = trim(line.substr(1));
    size_t n = 0;
    while (n < body.size() && is_ident_char(body[n]))
      n++;
    std::string word = body.substr(0, n), rest = trim(body.substr(n));
    if (word == "ifdef" || word == "ifndef" || word == "if") {
      bool v = word == "if" ? evaluate(rest, range) : (defined(rest) == (word == "ifdef"));
      bool parent = active();
      conds_.push_back({range, parent, parent && v, parent && v});
      return;
    }
    if (word == "elif" || word == "else" || word == "endif") {
      if (conds_.empty()) {
        diags_.error(range, "#" + word + " without #if");
        return;
      }
      Cond &c = conds_.back();
      if (word == "endif") {
        conds_.pop_back();
      } else {
        bool v = word == "else" ? true : evaluate(rest, range);
        c.active = c.parent_active && !c.taken && v;
        c.taken = c.taken || c.active;
      }
      return;
    }
    if (!active())
      return;
    if (word == "define") {
      size_t m = 0;
      while (m < rest.size() && is_ident_char(rest[m]))
        m++;
      std::string name = rest.substr(0, m);
      if (name.empty()) {
        diags_.error(range, "#define needs a name");
      } else if (m < rest.size() && rest[m] == '(') {
        diags_.error(range, "function-like macro '" + name +
                                "' is not supported; use an rbt macro (macro " + name +
                                "(...) { ... })");
      } else {
        macros_[name] = trim(rest.substr(m));
      }
    } else if (word == "undef") {
      macros_.erase(rest);
    } else if (word == "include") {
      // Types come from BTF; integer macros of system headers are looked up by the driver.
      // A header nobody has is an error, as it is to bpftrace's clang, except the kernel's
      // own (linux/, net/, asm/, ...): without kernel sources BTF stands in for them.
      size_t open = line.find_first_of("<\"");
      std::string header = open == std::string::npos
                               ? ""
                               : line.substr(open + 1, line.find_first_of(">\"", open + 1) - open - 1);
      std::string top = header.substr(0, header.find('/'));
      static const std::set<std::string> kKernelDirs = {"linux", "net", "asm", "asm-generic",
                                                        "uapi", "trace", "kvm", "crypto",
                                                        "generated", "vdso", "xen", "scsi",
                                                        "sound", "rdma", "drm", "media"};
      if (header_macros_.missing.count(header) &&
          !(header.find('/') != std::string::npos && kKernelDirs.count(top))) {
        unsigned col = static_cast<unsigned>(open + 1);
        diags_.error({lineno, col, lineno, static_cast<unsigned>(col + header.size() + 2)},
                     "'" + header + "' file not found");
      }
    } else if (word != "pragma") {
      diags_.error(range, "unsupported preprocessor directive #" + word);
    }
  }

  // Replaces macro names in a line of script, outside strings and comments.
  std::string substitute(const std::string &line, int depth = 0) {
    std::string out;
    for (size_t i = 0; i < line.size();) {
      char c = line[i];
      if (in_comment_) {
        size_t end = line.find("*/", i);
        if (end == std::string::npos) {
          out += line.substr(i);
          break;
        }
        out += line.substr(i, end + 2 - i);
        i = end + 2;
        in_comment_ = false;
        continue;
      }
      if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') {
        out += line.substr(i);
        break;
      }
      if (c == '/' && i + 1 < line.size() && line[i + 1] == '*') {
        in_comment_ = true;
        out += "/*";
        i += 2;
        continue;
      }
      // A string may go on over lines (the lexer takes them): its end is looked for on the
      // next line.
      if (c == '"' || in_string_) {
        size_t j = in_string_ ? i : i + 1;
        while (j < line.size() && line[j] != '"')
          j += line[j] == '\\' ? 2 : 1;
        in_string_ = j >= line.size() && depth == 0;
        out += line.substr(i, j + 1 - i);
        i = j + 1;
        continue;
      }
      // Identifiers, and the names of $variables, @maps and probe parts, stay whole.
      if (is_ident_start(c) || c == '$' || c == '@') {
        size_t j = i + 1;
        while (j < line.size() && is_ident_char(line[j]))
          j++;
        std::string word = line.substr(i, j - i);
        bool field = i > 0 && (line[i - 1] == '.' || (i > 1 && line[i - 1] == '>' && line[i - 2] == '-'));
        auto it = macros_.find(word);
        if (!field && it != macros_.end() && depth < 16) {
          out += substitute(it->second, depth + 1);
        } else if (auto h = header_macros_.values.find(word);
                   !field && h != header_macros_.values.end()) {
          out += h->second;
        } else {
          out += word;
        }
        i = j;
        continue;
      }
      out += c;
      i++;
    }
    return out;
  }

  DiagnosticEngine &diags_;
  const HeaderMacros &header_macros_;
  std::map<std::string, std::string> macros_;
  std::vector<Cond> conds_;
  bool in_comment_ = false;
  bool in_string_ = false;  // a string literal opened on an earlier line and not yet closed
};

}  // namespace

bool needs_preprocessing(const std::string &text) {
  std::stringstream in(text);
  bool first = true;
  for (std::string line; std::getline(in, line); first = false) {
    std::string t = trim(line);
    if (!t.empty() && t[0] == '#' && !(first && t.rfind("#!", 0) == 0))
      return true;
  }
  return false;
}

std::vector<std::string> included_headers(const std::string &text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::string t = trim(line);
    if (t.rfind("#", 0) != 0)
      continue;
    t = trim(t.substr(1));
    if (t.rfind("include", 0) != 0)
      continue;
    t = trim(t.substr(7));
    if (t.size() > 2 && (t[0] == '<' || t[0] == '"'))
      out.push_back(t.substr(1, t.find_first_of(">\"", 1) - 1));
  }
  return out;
}

std::string preprocess(const std::string &text, DiagnosticEngine &diags,
                       const HeaderMacros &header_macros) {
  return Preprocessor(diags, header_macros).run(text);
}

}  // namespace rbt
