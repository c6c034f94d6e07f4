#pragma once
// A script's text and name, with line lookup for diagnostics.

#include <string>
#include <string_view>
#include <vector>

namespace rbt {

class SourceFile {
public:
  SourceFile(std::string name, std::string text);
  const std::string &name() const { return name_; }
  const std::string &text() const { return text_; }
  // Line `line` (1-based) without its newline; empty when out of range.
  std::string_view line(unsigned line) const;

private:
  std::string name_;
  std::string text_;
  std::vector<size_t> line_starts_;
};

}  // namespace rbt
