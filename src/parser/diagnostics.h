#pragma once
// Diagnostics for mistakes in the user's script. Each carries a source range and renders as
//   file:line:col: error: message
//   <the source line>
//          ^~~~~
// Passes keep going after an error so one run reports several; the pipeline stops between
// passes when any error was reported.

#include <ostream>
#include <string>
#include <vector>

#include "source.h"

namespace rbt {

// A half-open source range; lines and columns are 1-based.
struct SourceRange {
  unsigned line = 0, col = 0;
  unsigned end_line = 0, end_col = 0;  // column just past the last character
  // Text a macro expansion copied: the call that expanded it (whose own range says whether
  // it was itself expanded). Diagnostics add a "note: expanded from here" for each. Owned by
  // the ASTContext.
  const SourceRange *expanded_from = nullptr;
  // The imported file the range is in (`import "helpers.bt";`); null: the script itself.
  const SourceFile *file = nullptr;
};

enum class Severity { Error, Warning };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceRange range;
  std::string message;
  std::string note;  // optional extra line printed after the caret
};

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceFile &source) : source_(source) {}

  void error(const SourceRange &range, std::string message, std::string note = {});
  void warning(const SourceRange &range, std::string message, std::string note = {});

  bool has_errors() const { return errors_ > 0; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  const SourceFile &source() const { return source_; }
  const SourceFile &file_of(const SourceRange &r) const { return r.file ? *r.file : source_; }

  // with_warnings false: errors only (--no-warnings, when the errors must still be shown).
  void render(std::ostream &out, bool with_warnings = true) const;
  std::string render() const;

private:
  void render_snippet(std::ostream &out, const SourceRange &r) const;

  const SourceFile &source_;
  std::vector<Diagnostic> diags_;
  unsigned errors_ = 0;
};

}  // namespace rbt
