#pragma once
// printf format strings, parsed once: the type checker validates arguments against the
// conversions, the runtime formats events with them. Same syntax as bpftrace's printf.

#include <string>
#include <vector>

namespace rbt {

struct FormatPiece {
  std::string literal;     // text printed before the conversion ("%%" already folded)
  std::string spec;        // the C conversion with flags/width/precision, no length modifier
  char conversion = 0;     // 'd' 'i' 'u' 'x' 'X' 'o' 'c' 's' 'p', or 0 for trailing text only
};

struct ParsedFormat {
  std::vector<FormatPiece> pieces;
  std::string error;  // non-empty when the format is malformed
  size_t conversions() const;
};

ParsedFormat parse_format(const std::string &format);

}  // namespace rbt
