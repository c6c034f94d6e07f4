#include "diagnostics.h"

#include <sstream>

namespace rbt {

void DiagnosticEngine::error(const SourceRange &range, std::string message, std::string note) {
  diags_.push_back({Severity::Error, range, std::move(message), std::move(note)});
  errors_++;
}

void DiagnosticEngine::warning(const SourceRange &range, std::string message, std::string note) {
  diags_.push_back({Severity::Warning, range, std::move(message), std::move(note)});
}

// The source line of r and a caret under its range (nothing for a range without a place).
void DiagnosticEngine::render_snippet(std::ostream &out, const SourceRange &r) const {
  std::string_view line = file_of(r).line(r.line);
  out << line << "\n";
  // Keep tabs so the caret lines up with the source as a terminal shows it.
  std::string marker;
  for (unsigned i = 1; i < r.col && i - 1 < line.size(); i++)
    marker += line[i - 1] == '\t' ? '\t' : ' ';
  unsigned end = r.end_line == r.line && r.end_col > r.col ? r.end_col
                                                           : static_cast<unsigned>(line.size()) + 1;
  if (end <= r.col)
    end = r.col + 1;
  marker += '^';
  for (unsigned c = r.col + 1; c < end; c++)
    marker += '~';
  out << marker << "\n";
}

void DiagnosticEngine::render(std::ostream &out, bool with_warnings) const {
  for (auto &d : diags_) {
    if (d.severity == Severity::Warning && !with_warnings)
      continue;
    const auto &r = d.range;
    out << file_of(r).name() << ":" << r.line << ":" << r.col << ": "
        << (d.severity == Severity::Error ? "error" : "warning") << ": " << d.message << "\n";
    if (r.line != 0 && r.col != 0)
      render_snippet(out, r);
    if (!d.note.empty())
      out << "note: " << d.note << "\n";
    // Inside a macro's body: which call (and which call of that, ...) produced the text.
    for (const SourceRange *site = r.expanded_from; site; site = site->expanded_from) {
      out << file_of(*site).name() << ":" << site->line << ":" << site->col << ": note: expanded from here\n";
      render_snippet(out, *site);
    }
  }
}

std::string DiagnosticEngine::render() const {
  std::ostringstream s;
  render(s);
  return s.str();
}

}  // namespace rbt
