#include "json.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "histogram.h"
#include "text.h"
#include "tseries.h"
#include "value_format.h"

namespace rbt::output {

using runtime::MapEntry;
using runtime::MapSnapshot;

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one.
size_t utf8_sequence(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t cp;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; k++) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not valid UTF-8.
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

void append_u00(std::string &out, unsigned char c) {
  static const char hex[] = "0123456789abcdef";
  out += "\\u00";
  out += hex[c >> 4];
  out += hex[c & 0xf];
}

// Entries of a map as a JSON object body, or the single value of a map without keys.
template <typename F> std::string entries(const MapSnapshot &snap, F value_of) {
  const MapDesc &d = *snap.desc;
  if (d.key.is_none())
    return value_of(snap.entries.front());
  std::string out = "{";
  bool first = true;
  for (const MapEntry &e : snap.entries) {
    out += first ? "" : ", ";
    first = false;
    out += json_string(json_key(d.key, e.key.data())) + ": " + value_of(e);
  }
  return out + "}";
}

}  // namespace

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); i++) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
    case '"': out += "\\\""; continue;
    case '\\': out += "\\\\"; continue;
    case '\n': out += "\\n"; continue;
    case '\r': out += "\\r"; continue;
    case '\t': out += "\\t"; continue;
    default: break;
    }
    if (c < 0x20) {
      append_u00(out, c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (size_t n = utf8_sequence(s, i)) {
      out.append(s.substr(i, n));
      i += n - 1;
    } else {
      append_u00(out, c);
    }
  }
  return out + "\"";
}

std::string json_number(const std::string &decimal) {
  // Integers a double cannot hold exactly are strings, as bpftrace emits them (RFC 8259).
  bool negative = !decimal.empty() && decimal[0] == '-';
  if (negative) {
    int64_t v = std::stoll(decimal);
    if (static_cast<int64_t>(static_cast<double>(v)) != v)
      return json_string(decimal);
  } else if (!decimal.empty()) {
    uint64_t v = std::stoull(decimal);
    double d = static_cast<double>(v);
    if (d >= 18446744073709551616.0 || static_cast<uint64_t>(d) != v)
      return json_string(decimal);
  }
  return decimal;
}

namespace {
// A held struct or a record: an object of the fields, in their order.
std::string json_fields(const Type &t, const uint8_t *p) {
  std::string s = "{";
  for (size_t i = 0; i < t.elems.size(); i++)
    s += (i ? ", " : "") + json_string(t.field_names[i]) + ": " +
         json_value(t.elems[i], p + t.offsets[i]);
  return s + "}";
}
}  // namespace

std::string json_value(const Type &t, const uint8_t *p) {
  // Arrays are unspaced and objects spaced, as bpftrace prints them.
  auto array = [](const std::vector<std::string> &items) {
    std::string s = "[";
    for (size_t i = 0; i < items.size(); i++)
      s += (i ? "," : "") + items[i];
    return s + "]";
  };
  if (t.is_rendered())
    return json_string(format_value(t, p));
  std::vector<std::string> items;
  switch (t.kind) {
  case TypeKind::Bool:
    return load_int(t, p) ? "true" : "false";
  case TypeKind::Int:
  case TypeKind::Pointer: {
    int64_t v = load_int(t, p);
    return json_number(t.is_signed ? std::to_string(v) : std::to_string(static_cast<uint64_t>(v)));
  }
  case TypeKind::String:
    return json_string(load_string(t, p));
  case TypeKind::Stack:
    // One string per frame, leaf first (perf mode's leading tab dropped).
    for (const std::string &frame : stack_frames(t, p)) {
      std::string_view f = frame;
      while (!f.empty() && f.front() == '\t')
        f.remove_prefix(1);
      items.push_back(json_string(f));
    }
    return array(items);
  case TypeKind::Buffer:
    // The bytes as numbers, signed as C chars: bpftrace's JSON of a buffer.
    for (char c : buffer_bytes(t, p))
      items.push_back(std::to_string(static_cast<int>(static_cast<signed char>(c))));
    return array(items);
  case TypeKind::Array:
    for (uint32_t i = 0; i < t.count; i++)
      items.push_back(json_value(t.elems[0], p + i * t.elems[0].size));
    return array(items);
  case TypeKind::Tuple:
    if (t.is_named_tuple())
      return json_fields(t, p);
    for (size_t i = 0; i < t.elems.size(); i++)
      items.push_back(json_value(t.elems[i], p + t.offsets[i]));
    return array(items);
  case TypeKind::Struct:
    return json_fields(t, p);
  default:
    return "null";
  }
}

// The type with its enums forgotten: JSON keeps an enum's values as numbers, as bpftrace does
// (programs parse them).
static Type numbers_only(Type t) {
  t.enum_name.clear();
  for (Type &e : t.elems)
    e = numbers_only(std::move(e));
  return t;
}

std::string json_key(const Type &enum_key, const uint8_t *p) {
  const Type key = numbers_only(enum_key);
  // bpftrace's rule: the key's text form, a tuple's parentheses dropped, every space removed
  // (so @[1, "a b"] is "1,ab"). A stack loses only its frames' indentation ("\nf+0\ng+4\n",
  // as in bpftrace): the spaces inside a frame stay, since a Ruby frame is "block (2 levels) in
  // <main>" and a C++ symbol has them too, and a key must read as the same frames as its text.
  auto strip = [](std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
    return s;
  };
  auto unindent = [](const std::string &s) {
    std::string out;
    bool line_start = true;
    for (char c : s) {
      if (line_start && c == ' ')
        continue;
      line_start = c == '\n';
      out += c;
    }
    return out;
  };
  if (key.is_stack())
    return unindent(format_value(key, p));
  if (!key.is_tuple() || key.is_named_tuple())
    return strip(format_value(key, p));
  std::string s;
  for (size_t i = 0; i < key.elems.size(); i++) {
    const Type &e = key.elems[i];
    std::string text = format_value(e, p + key.offsets[i]);
    s += (i ? "," : "") + (e.is_stack() ? unindent(text) : strip(text));
  }
  return s;
}

std::string json_buckets(const Type &t, const std::vector<uint64_t> &buckets, uint64_t div) {
  if (t.kind != TypeKind::Hist || div == 0)
    div = 1;  // as in text: lhist counts are never divided
  size_t first = buckets.size(), last = 0;
  for (size_t i = 0; i < buckets.size(); i++) {
    if (buckets[i]) {
      first = std::min(first, i);
      last = i;
    }
  }
  std::string out = "[";
  for (size_t i = first; first < buckets.size() && i <= last; i++) {
    // Closed bounds of bucket i; the first bucket has no lower bound, an lhist's last no upper.
    std::string min, max;
    if (t.kind == TypeKind::Hist && t.hist_k && i >= 2) {
      output::HistRange r = output::hist_bucket_range(i, t.hist_k);
      if (!r.exists)
        continue;
      min = std::to_string(r.lo);
      max = std::to_string(r.hi);
    } else if (t.kind == TypeKind::Hist) {
      if (i == 0) {
        max = "-1";
      } else if (i <= 2) {
        min = max = std::to_string(i - 1);
      } else {
        unsigned lo = static_cast<unsigned>(i - 2);  // [2^lo, 2^(lo+1) - 1]
        min = std::to_string(1ull << lo);
        max = std::to_string(lo + 1 >= 64 ? UINT64_MAX : (1ull << (lo + 1)) - 1);
      }
    } else if (i == 0) {
      max = std::to_string(t.lhist_min - 1);
    } else if (i == buckets.size() - 1) {
      min = std::to_string(t.lhist_max);
    } else {
      int64_t lo = t.lhist_min + static_cast<int64_t>(i - 1) * t.lhist_step;
      min = std::to_string(lo);
      max = std::to_string(std::min(lo + t.lhist_step, t.lhist_max) - 1);
    }
    out += i == first ? "{" : ",{";
    if (!min.empty())
      out += "\"min\": " + min + ", ";
    if (!max.empty())
      out += "\"max\": " + max + ", ";
    out += "\"count\": " + std::to_string(buckets[i] / div) + "}";
  }
  return out + "]";
}

std::string json_object(std::string_view type, std::string_view data) {
  std::string out = "{\"type\": ";
  out += json_string(type);
  out += ", \"data\": ";
  out += data;
  out += "}";
  return out;
}

std::string json_map(MapSnapshot &snap, uint64_t top, uint64_t div) {
  if (snap.entries.empty())
    return {};
  const MapDesc &d = *snap.desc;
  sort_entries(snap);
  keep_top(snap, top);
  std::string type, body;
  if (d.value.kind == TypeKind::TSeries) {
    type = "tseries";
    auto points = tseries_points(snap);
    size_t i = 0;  // entries() visits the entries in order
    body = entries(snap, [&](const MapEntry &) { return json_tseries(d.value, points[i++]); });
  } else if (d.value.is_histogram()) {
    type = "hist";
    body = entries(snap, [&](const MapEntry &e) {
      return json_buckets(d.value, entry_buckets(d, e), div);
    });
  } else if (d.value.kind == TypeKind::Stats) {
    type = "stats";
    body = entries(snap, [&](const MapEntry &e) {
      StatsValue s = entry_stats(d, e, div);
      return "{\"count\": " + s.count + ", \"average\": " + s.average + ", \"total\": " + s.total +
             "}";
    });
  } else if (d.value.kind == TypeKind::Avg) {
    type = "stats";
    body = entries(snap, [&](const MapEntry &e) { return json_number(entry_number(d, e, div)); });
  } else {
    type = "map";
    body = entries(snap, [&](const MapEntry &e) {
      switch (d.value.kind) {
      case TypeKind::Count:
      case TypeKind::Sum:
      case TypeKind::Min:
      case TypeKind::Max:
      case TypeKind::Int:
        return json_number(entry_number(d, e, div));
      default:
        return json_value(d.value, e.value.data());
      }
    });
  }
  return json_object(type, "{" + json_string(d.name) + ": " + body + "}");
}

void JsonWriter::line(const std::string &object) {
  fwrite(object.data(), 1, object.size(), out_);
  fputc('\n', out_);
}

void JsonWriter::attached_probes(size_t count) {
  if (!quiet_)
    // "count" at the top as well as in "data": bpftrace's current line has both.
    line("{\"type\": \"attached_probes\", \"count\": " + std::to_string(count) +
         ", \"data\": {\"probes\": " + std::to_string(count) + "}}");
}

void JsonWriter::benchmark_result(const std::vector<std::string> &names, size_t index,
                                  uint64_t average_ns, uint64_t iters) {
  line(json_object("benchmark_result", "{" + json_string(names[index]) + ": {\"average\": " +
                                           std::to_string(average_ns) + ", \"iters\": " +
                                           std::to_string(iters) + "}}"));
}

// bpftrace's helper_error object: its fields at the top level, no "data".
void JsonWriter::helper_error(const HelperError &e) {
  line("{\"type\": \"helper_error\", \"msg\": " + json_string(strerror(static_cast<int>(-e.retcode))) +
       ", \"helper\": " + json_string(e.helper) + ", \"retcode\": " + std::to_string(e.retcode) +
       ", \"filename\": " + json_string(e.file) + ", \"line\": " + std::to_string(e.line) +
       ", \"col\": " + std::to_string(e.col) + "}");
}

void JsonWriter::lost_events(uint64_t count) {
  line(json_object("lost_events", "{\"events\": " + std::to_string(count) + "}"));
}

void JsonWriter::map_updates_dropped(const std::string &map, uint64_t count, uint64_t max_keys) {
  line(json_object("map_full", "{\"map\": " + json_string(map) + ", \"dropped\": " +
                                   std::to_string(count) + ", \"max_map_keys\": " +
                                   std::to_string(max_keys) + "}"));
}

void JsonWriter::message(MessageKind kind, const std::string &text) {
  line(json_object(message_kind_name(kind), json_string(text)));
}

void JsonWriter::value(const Type &type, const uint8_t *bytes) {
  line(json_object("value", json_value(type, bytes)));
}

void JsonWriter::map(MapSnapshot &snapshot, uint64_t top, uint64_t div) {
  std::string object = json_map(snapshot, top, div);
  if (!object.empty())
    line(object);
}

}  // namespace rbt::output
