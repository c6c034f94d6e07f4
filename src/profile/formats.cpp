#include "formats.h"

#include "writers.h"

namespace rbt::profile {

namespace {

struct FormatInfo {
  Format format;
  const char *name;
};
constexpr FormatInfo kFormats[] = {
    {Format::Folded, "folded"}, {Format::Pprof, "pprof"},     {Format::Speedscope, "speedscope"},
    {Format::Svg, "svg"},       {Format::Firefox, "firefox"}, {Format::Top, "text"},
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::optional<Format> format_from_name(std::string_view name) {
  for (const auto &f : kFormats)
    if (name == f.name)
      return f.format;
  return std::nullopt;
}

const char *format_name(Format format) {
  for (const auto &f : kFormats)
    if (f.format == format)
      return f.name;
  return "?";
}

std::optional<Format> format_from_path(std::string_view path) {
  // Longest suffixes first: .speedscope.json before .json, .pb.gz before .gz.
  if (ends_with(path, ".speedscope.json"))
    return Format::Speedscope;
  if (ends_with(path, ".pb.gz") || ends_with(path, ".pprof"))
    return Format::Pprof;
  if (ends_with(path, ".folded"))
    return Format::Folded;
  if (ends_with(path, ".svg"))
    return Format::Svg;
  if (ends_with(path, ".json.gz"))
    return Format::Firefox;
  return std::nullopt;
}

std::optional<std::string> write_profiles(Format format, const std::vector<Profile> &profiles,
                                          std::string &out, const WriteOptions &options) {
  switch (format) {
  case Format::Folded: return write_folded(profiles, out);
  case Format::Pprof: return write_pprof(profiles, out);
  case Format::Speedscope: return write_speedscope(profiles, out);
  case Format::Svg: return write_svg(profiles, out);
  case Format::Firefox: return write_firefox(profiles, out);
  case Format::Top: return write_top(profiles, out, options);
  }
  return "unknown profile format";
}

}  // namespace rbt::profile
