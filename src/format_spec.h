#pragma once
// printf format strings, parsed once: the type checker validates arguments against the
// conversions, the runtime formats events with them. Same syntax as bpftrace's printf.

#include <string>
#include <vector>

#include "types.h"

namespace rbt {

struct FormatPiece {
  std::string literal;     // text printed before the conversion ("%%" already folded)
  std::string spec;        // the C conversion with flags/width/precision, no length modifier
  // 'd' 'i' 'u' 'x' 'X' 'o' 'c' 's' 'p' 'r', 'g' (%gr: GFP flags by name, an integer), or 0
  // for trailing text only
  char conversion = 0;
  // 'r': 'x' for %rx (every byte as \xNN), 'h' for %rh ("0a fe"); 'g': 'r' (%gr)
  char buffer_mode = 0;
  // Integer conversions: the bits of the value printed, from the C length modifier: hh 8, h 16,
  // none 32 (C's int, as bpftrace: %d of 2^32 + 1 prints 1), l ll j z t 64.
  unsigned int_bits = 64;
};

struct ParsedFormat {
  std::vector<FormatPiece> pieces;
  std::string error;  // non-empty when the format is malformed
  size_t conversions() const;
};

// The largest width or precision a conversion may give (%65535d).
constexpr unsigned long kMaxFieldWidth = 65535;

ParsedFormat parse_format(const std::string &format);

// Whether a value of `type` may be printed by `conversion`: integer conversions take integers
// and pointers, %r/%rx/%rh buffers, %s anything that has a text form.
bool format_accepts(char conversion, const Type &type);
// For messages: "%d", "%rx"; and what a conversion wants, "an integer", "a buffer (buf())".
std::string conversion_name(const FormatPiece &piece);
const char *conversion_wants(char conversion);

}  // namespace rbt
