#include "format_spec.h"

#include <cstring>

namespace rbt {

size_t ParsedFormat::conversions() const {
  size_t n = 0;
  for (auto &p : pieces)
    n += p.conversion != 0;
  return n;
}

ParsedFormat parse_format(const std::string &f) {
  ParsedFormat out;
  FormatPiece cur;
  for (size_t i = 0; i < f.size(); i++) {
    if (f[i] != '%') {
      cur.literal += f[i];
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '%') {
      cur.literal += '%';
      i++;
      continue;
    }
    std::string spec = "%";
    size_t j = i + 1;
    while (j < f.size() && strchr("-+ #0", f[j]))
      spec += f[j++];
    // Width and precision: C's printf takes an int and fails beyond it (bpftrace aborted on
    // %99999999999999999999d); a field wider than kMaxFieldWidth is surely a mistake.
    auto number = [&](const char *what) {
      size_t start = j;
      while (j < f.size() && isdigit(static_cast<unsigned char>(f[j])))
        spec += f[j++];
      if (j - start > 5 || (j > start && std::stoul(f.substr(start, j - start)) > kMaxFieldWidth))
        out.error = std::string(what) + " " + f.substr(start, j - start) + " is too large (at most " +
                    std::to_string(kMaxFieldWidth) + ")";
    };
    number("width");
    if (j < f.size() && f[j] == '.') {
      spec += f[j++];
      if (out.error.empty())
        number("precision");
    }
    if (!out.error.empty())
      return out;
    // Integers travel as 64 bits; the length modifier says how many of them print.
    std::string length;
    while (j < f.size() && strchr("hljzt", f[j]))
      length += f[j++];
    if (length == "hh")
      cur.int_bits = 8;
    else if (length == "h")
      cur.int_bits = 16;
    else if (length.empty())  // C's int: bpftrace (and C) print %x of 0x12345678abcdef as 78abcdef
      cur.int_bits = 32;
    else if (length == "l" || length == "ll" || length == "j" || length == "z" || length == "t")
      cur.int_bits = 64;
    else {
      out.error = "unknown length modifier '" + length + "'";
      return out;
    }
    if (j >= f.size()) {
      out.error = "incomplete conversion at the end of the format";
      return out;
    }
    char c = f[j];
    // %gr: GFP flags by name (bpftrace's); %g alone is no conversion rbt has (no floats).
    bool gfp = c == 'g' && j + 1 < f.size() && f[j + 1] == 'r';
    if (!gfp && !strchr("diuxXocspr", c)) {
      out.error = std::string("unknown conversion '%") + c + "'";
      return out;
    }
    cur.spec = spec + c;
    cur.conversion = c;
    // bpftrace's buffer conversions put their modifier after the letter: %rx, %rh.
    if (c == 'r' && j + 1 < f.size() && (f[j + 1] == 'x' || f[j + 1] == 'h'))
      cur.buffer_mode = f[++j];
    if (gfp)
      cur.buffer_mode = f[++j];
    out.pieces.push_back(std::move(cur));
    cur = FormatPiece{};
    i = j;
  }
  if (!cur.literal.empty())
    out.pieces.push_back(std::move(cur));
  return out;
}

bool format_accepts(char conversion, const Type &t) {
  switch (conversion) {
  case 'r':
    return t.is_buffer();
  case 's':
    return t.is_scalar() || t.is_string() || t.is_tuple() || t.is_stack() || t.is_buffer() ||
           t.is_array() || t.is_struct() || t.is_rendered();
  default:
    return t.is_scalar();
  }
}

std::string conversion_name(const FormatPiece &piece) {
  std::string s = {'%', piece.conversion};
  if (piece.buffer_mode)
    s += piece.buffer_mode;
  return s;
}

const char *conversion_wants(char conversion) {
  switch (conversion) {
  case 'r': return "a buffer (buf())";
  case 's': return "a printable value";
  default: return "an integer";
  }
}

}  // namespace rbt
