// A self-contained interactive flamegraph: one SVG with its CSS and JavaScript inline
// (svg_script.cpp), nothing fetched from the network. Root at the bottom, callees above,
// children in name order, width proportional to the value. Frames are coloured by kind (Ruby
// red, C methods yellow, native blue, kernel orange, key parts purple) with a shade from the
// name's hash, so the same frame has the same colour in every graph.
#include <algorithm>
#include <cstdio>
#include <map>

#include "svg_script.h"
#include "writers.h"

namespace rbt::profile {

namespace {

constexpr int kWidth = 1200, kFrameHeight = 16, kTop = 56, kBottom = 28, kPad = 10;
constexpr double kMinWidthPx = 0.1;  // narrower frames are left out, as flamegraph.pl does

// Frames are merged by name; names are numbered in sorted order so children keyed by that
// number are in name order, and a path step is an integer comparison, not a string one.
struct Node {
  uint32_t name;  // index into Names
  int64_t value = 0;
  std::map<uint32_t, size_t> children;
};

struct Names {
  std::vector<std::string> text;
  std::vector<FrameKind> kind;
};

class Tree {
public:
  Tree() { nodes_.push_back({0, 0, {}}); }
  void add(const std::vector<uint32_t> &path, int64_t value) {
    size_t n = 0;
    nodes_[0].value += value;
    for (uint32_t name : path) {
      auto [it, added] = nodes_[n].children.emplace(name, nodes_.size());
      if (added)
        nodes_.push_back({name, 0, {}});
      n = it->second;
      nodes_[n].value += value;
    }
  }
  const std::vector<Node> &nodes() const { return nodes_; }

private:
  std::vector<Node> nodes_;
};

uint32_t name_hash(const std::string &s) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : s)
    h = (h ^ c) * 16777619u;
  return h;
}

std::string colour(FrameKind kind, const std::string &name) {
  uint32_t h = name_hash(name);
  double a = (h & 0xff) / 255.0, b = ((h >> 8) & 0xff) / 255.0;
  // {base, spread} per channel; the spread is filled by the hash.
  struct Range {
    int r, dr, g, dg, b, db;
  };
  Range c{190, 30, 190, 0, 190, 0};  // Truncated: grey
  switch (kind) {
  case FrameKind::Ruby: c = {215, 40, 50, 45, 60, 35}; break;
  case FrameKind::RubyCfunc: c = {225, 25, 195, 45, 50, 50}; break;
  case FrameKind::Native: c = {80, 50, 160, 50, 215, 35}; break;
  case FrameKind::Kernel: c = {235, 20, 135, 45, 30, 40}; break;
  case FrameKind::Key: c = {175, 25, 160, 25, 220, 25}; break;
  case FrameKind::Truncated: break;
  }
  int r = c.r + int(c.dr * a);
  int g = kind == FrameKind::Truncated ? r : c.g + int(c.dg * b);
  int bl = kind == FrameKind::Truncated ? r : c.b + int(c.db * a);
  return "rgb(" + std::to_string(r) + "," + std::to_string(g) + "," + std::to_string(bl) + ")";
}

void append_escaped(std::string &out, const std::string &s) {
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default:
      // XML 1.0 forbids most control characters even escaped: show them as spaces.
      out += (static_cast<unsigned char>(c) < 0x20 && c != '\n') ? ' ' : c;
    }
  }
}

std::string fixed(double v) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

// "1,234,567": counts are easier to read grouped.
std::string grouped(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); i++) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string truncated_label(const std::string &name, double width) {
  int fit = static_cast<int>((width - 6) / 7.2);
  if (fit < 3)
    return {};
  if (static_cast<int>(name.size()) <= fit)
    return name;
  return name.substr(0, fit - 2) + "..";
}

}  // namespace

std::optional<std::string> write_svg(const std::vector<Profile> &profiles, std::string &out) {
  Tree tree;
  std::string unit = "samples";
  for (const Profile &p : profiles) {
    if (!p.value_types.empty() && p.value_types[0].unit != "count") {
      unit = p.value_types[0].unit;
      break;
    }
  }
  bool name_roots = profiles.size() > 1;  // several maps: one root frame per map
  std::map<std::string, uint32_t> ranks;
  std::map<std::string, FrameKind> kinds;
  std::vector<std::vector<std::string>> texts(profiles.size());
  for (size_t p = 0; p < profiles.size(); p++) {
    if (name_roots)
      kinds.emplace(profiles[p].name, FrameKind::Key);
    for (const Frame &f : profiles[p].frames)
      kinds.emplace(texts[p].emplace_back(frame_text(f)), f.kind);
  }
  Names names;
  names.text.push_back("all");
  names.kind.push_back(FrameKind::Key);
  for (const auto &[text, kind] : kinds) {
    ranks[text] = static_cast<uint32_t>(names.text.size());
    names.text.push_back(text);
    names.kind.push_back(kind);
  }
  std::vector<uint32_t> path;
  for (size_t p = 0; p < profiles.size(); p++) {
    std::vector<uint32_t> frame_name;
    for (const std::string &t : texts[p])
      frame_name.push_back(ranks[t]);
    for (const Sample &s : profiles[p].samples) {
      if (s.values.empty() || s.values[0] <= 0)
        continue;
      path.clear();
      if (name_roots)
        path.push_back(ranks[profiles[p].name]);
      for (uint32_t f : s.stack)
        path.push_back(frame_name[f]);
      tree.add(path, s.values[0]);
    }
  }
  const std::vector<Node> &nodes = tree.nodes();
  int64_t total = nodes[0].value;
  double scale = total > 0 ? double(kWidth - 2 * kPad) / double(total) : 0;

  // Depth-first, children in name order; frames too narrow to see are left out with their
  // subtrees. `x` is in value units.
  struct Item {
    size_t node;
    int64_t x;
    int depth;
  };
  std::vector<Item> items, stack{{0, 0, 0}};
  int max_depth = 0;
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    const Node &n = nodes[it.node];
    if (it.depth > 0 && double(n.value) * scale < kMinWidthPx)
      continue;
    items.push_back(it);
    max_depth = std::max(max_depth, it.depth);
    int64_t x = it.x;
    std::vector<Item> kids;
    for (const auto &[name, child] : n.children) {
      (void)name;
      kids.push_back({child, x, it.depth + 1});
      x += nodes[child].value;
    }
    stack.insert(stack.end(), kids.rbegin(), kids.rend());
  }
  // Items in document order: depth-first from the root, which is also drawing order.
  int height = kTop + (max_depth + 1) * kFrameHeight + kBottom;

  std::string title = profiles.size() == 1 ? "Flame graph of " + profiles[0].name : "Flame graph";
  out += "<?xml version=\"1.0\" standalone=\"no\"?>\n";
  out += "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         std::to_string(kWidth) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
         std::to_string(kWidth) + " " + std::to_string(height) + "\" data-width=\"" +
         std::to_string(kWidth) + "\" data-pad=\"" + std::to_string(kPad) + "\" data-unit=\"";
  append_escaped(out, unit);
  out += "\">\n<style type=\"text/css\"><![CDATA[";
  out += kFlamegraphStyle;
  out += "]]></style>\n";
  out += "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"rgb(248,248,248)\"/>\n";
  out += "<text id=\"title\" x=\"" + std::to_string(kWidth / 2) +
         "\" y=\"22\" text-anchor=\"middle\">";
  append_escaped(out, title);
  out += "</text>\n";
  out += "<text id=\"reset\" class=\"ctl off\" x=\"" + std::to_string(kPad) +
         "\" y=\"22\">Reset zoom</text>\n";
  out += "<text id=\"search\" class=\"ctl\" x=\"" + std::to_string(kWidth - kPad) +
         "\" y=\"22\" text-anchor=\"end\">Search (Ctrl-F)</text>\n";
  out += "<text id=\"clear\" class=\"ctl off\" x=\"" + std::to_string(kWidth - kPad) +
         "\" y=\"40\" text-anchor=\"end\">Clear search</text>\n";
  // Legend: which colour is which kind of frame.
  static const std::pair<FrameKind, const char *> kLegend[] = {
      {FrameKind::Ruby, "Ruby"}, {FrameKind::RubyCfunc, "C method"},
      {FrameKind::Native, "native"}, {FrameKind::Kernel, "kernel"}, {FrameKind::Key, "key"}};
  int lx = kPad;
  for (const auto &[kind, name] : kLegend) {
    out += "<rect x=\"" + std::to_string(lx) + "\" y=\"31\" width=\"10\" height=\"10\" fill=\"" +
           colour(kind, "") + "\"/><text x=\"" + std::to_string(lx + 14) + "\" y=\"40\">" + name +
           "</text>\n";
    lx += 28 + 8 * static_cast<int>(std::char_traits<char>::length(name));
  }
  if (total == 0) {
    out += "<text x=\"" + std::to_string(kWidth / 2) + "\" y=\"" + std::to_string(kTop + 12) +
           "\" text-anchor=\"middle\">No samples</text>\n";
  }
  out += "<g id=\"frames\">\n";
  for (const Item &it : items) {
    const Node &n = nodes[it.node];
    double x = double(it.x) * scale, w = double(n.value) * scale;
    int y = kTop + (max_depth - it.depth) * kFrameHeight;
    const std::string &name = names.text[n.name];
    out += "<g class=\"f\" data-x=\"" + std::to_string(it.x) + "\" data-w=\"" +
           std::to_string(n.value) + "\" data-d=\"" + std::to_string(it.depth) + "\"><title>";
    append_escaped(out, name);
    char pct[32];
    snprintf(pct, sizeof(pct), "%.2f%%", total ? 100.0 * double(n.value) / double(total) : 0.0);
    out += "\n" + grouped(n.value) + " ";
    append_escaped(out, unit);
    out += ", " + std::string(pct) + "</title><rect x=\"" + fixed(kPad + x) + "\" y=\"" +
           std::to_string(y) + "\" width=\"" + fixed(w) + "\" height=\"" +
           std::to_string(kFrameHeight - 1) + "\" fill=\"" + colour(names.kind[n.name], name) +
           "\" rx=\"2\"/><text x=\"" + fixed(kPad + x + 3) + "\" y=\"" +
           std::to_string(y + kFrameHeight - 4) + "\">";
    append_escaped(out, truncated_label(name, w));
    out += "</text></g>\n";
  }
  out += "</g>\n";
  out += "<text id=\"matched\" x=\"" + std::to_string(kWidth - kPad) + "\" y=\"" +
         std::to_string(height - 10) + "\" text-anchor=\"end\"></text>\n";
  out += "<text id=\"details\" x=\"" + std::to_string(kPad) + "\" y=\"" +
         std::to_string(height - 10) + "\"> </text>\n";
  out += "<script type=\"text/ecmascript\"><![CDATA[";
  out += kFlamegraphScript;
  out += "]]></script>\n</svg>\n";
  return std::nullopt;
}

}  // namespace rbt::profile
