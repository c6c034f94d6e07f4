#include "printf.h"

#include <cstdio>

#include "gfp_flags.h"
#include "value_format.h"

namespace rbt::output {

namespace {
template <typename... Args> std::string c_format(const std::string &spec, Args... args) {
  int n = snprintf(nullptr, 0, spec.c_str(), args...);
  if (n < 0)
    return {};  // EOVERFLOW; parse_format bounds widths, so only a bug could get here
  std::string s(static_cast<size_t>(n), '\0');
  snprintf(s.data(), s.size() + 1, spec.c_str(), args...);
  return s;
}
}  // namespace

std::string format_printf(const ParsedFormat &format, const Type &args, const uint8_t *payload) {
  std::string out;
  size_t arg = 0;
  for (const FormatPiece &piece : format.pieces) {
    out += piece.literal;
    if (!piece.conversion)
      continue;
    const Type &t = args.elems[arg];
    const uint8_t *p = payload + args.offsets[arg];
    arg++;
    // The spec keeps flags, width and precision; integers travel as 64 bits and are cut to the
    // conversion's length modifier (%hhx of 0x1234 prints 34, as C's printf would).
    std::string flags = piece.spec.substr(0, piece.spec.size() - 1);
    auto narrow_signed = [&](uint64_t v) -> long long {
      switch (piece.int_bits) {
      case 8: return static_cast<int8_t>(v);
      case 16: return static_cast<int16_t>(v);
      case 32: return static_cast<int32_t>(v);
      default: return static_cast<int64_t>(v);
      }
    };
    auto narrow_unsigned = [&](uint64_t v) -> unsigned long long {
      return piece.int_bits >= 64 ? v : v & ((1ULL << piece.int_bits) - 1);
    };
    switch (piece.conversion) {
    case 's':
      out += c_format(flags + "s", (t.is_string() ? load_string(t, p) : format_value(t, p)).c_str());
      break;
    case 'r': {
      std::string_view b = buffer_bytes(t, p);
      HexMode mode = piece.buffer_mode == 'x'   ? HexMode::AllEscaped
                     : piece.buffer_mode == 'h' ? HexMode::Spaced
                                                : HexMode::Escaped;
      out += c_format(flags + "s",
                      hex_bytes(reinterpret_cast<const uint8_t *>(b.data()), b.size(), mode).c_str());
      break;
    }
    case 'g':  // %gr
      out += c_format(flags + "s", gfp_flags_text(static_cast<uint64_t>(load_int(t, p))).c_str());
      break;
    case 'c':
      out += c_format(flags + "c", static_cast<int>(load_int(t, p)));
      break;
    case 'p':
      out += c_format(flags + "#llx", static_cast<unsigned long long>(load_int(t, p)));
      break;
    case 'd':
    case 'i':
      out += c_format(flags + "lld", narrow_signed(static_cast<uint64_t>(load_int(t, p))));
      break;
    default:  // u x X o
      out += c_format(flags + "ll" + piece.conversion,
                      narrow_unsigned(static_cast<uint64_t>(load_int(t, p))));
      break;
    }
  }
  return out;
}

}  // namespace rbt::output
