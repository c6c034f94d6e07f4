// The Firefox Profiler's Gecko profile format (version kGeckoVersion), gzipped: what
// profiler.firefox.com opens from a file. One thread object per (pid, tid), each with its own
// string, frame and stack tables; samples and markers in milliseconds since meta.startTime.
// The format is documented in the profiler's repository (docs-developer/gecko-profile-format.md
// and src/types/gecko-profile.ts).

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "firefox_format.h"
#include "gzip.h"
#include "writers.h"

namespace rbt::profile {

using json = nlohmann::ordered_json;
using namespace firefox;

namespace {

// Milliseconds with microsecond precision: short, exact numbers in the file.
double ms(uint64_t ns) { return static_cast<double>(ns / 1000) / 1000.0; }

// The same number as JSON text, written directly: the big arrays (samples, stacks, frames,
// markers) are built as text, not as a JSON tree, so writing a long record takes little more
// memory than the file itself.
std::string ms_text(uint64_t ns) {
  uint64_t us = ns / 1000;
  std::string out = std::to_string(us / 1000);
  if (uint64_t frac = us % 1000) {
    char buf[8];
    snprintf(buf, sizeof(buf), ".%03u", static_cast<unsigned>(frac));
    std::string f = buf;
    while (f.back() == '0')
      f.pop_back();
    out += f;
  }
  return out;
}

std::string json_string(const std::string &s) { return json(s).dump(); }

bool is_integer(const std::string &s) {
  if (s.empty() || s.size() > 18)
    return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size())
    return false;
  for (; i < s.size(); i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

// Appends `row` to a JSON array's text (without its brackets).
void append_row(std::string &rows, const std::string &row) {
  if (!rows.empty())
    rows += ',';
  rows += row;
}

// One thread's tables as the Gecko format has them: frames and stacks interned per thread.
class ThreadTables {
public:
  explicit ThreadTables(const Profile &profile) : profile_(profile) {}

  uint32_t string(const std::string &s) {
    auto [it, added] = strings_.emplace(s, string_count_);
    if (added) {
      append_row(string_rows_, json_string(s));
      string_count_++;
    }
    return it->second;
  }

  // The stack index of `stack` (root first) as JSON text: "null" for an empty stack.
  std::string stack(const std::vector<uint32_t> &frames) {
    int64_t prefix = -1;
    for (uint32_t f : frames) {
      uint32_t frame = this->frame(f);
      auto [it, added] = stacks_.emplace(std::make_pair(prefix, frame), stack_count_);
      if (added) {
        append_row(stack_rows_, "[" + (prefix < 0 ? std::string("null") : std::to_string(prefix)) +
                                    "," + std::to_string(frame) + "]");
        stack_count_++;
      }
      prefix = it->second;
    }
    return prefix < 0 ? "null" : std::to_string(prefix);
  }

  // The thread's tables, as the text of object members.
  std::string members() const {
    return "\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[" + stack_rows_ +
           "]},\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,"
           "\"innerWindowID\":2,\"implementation\":3,\"line\":4,\"column\":5,\"category\":6,"
           "\"subcategory\":7},\"data\":[" +
           frame_rows_ + "]},\"stringTable\":[" + string_rows_ + "],\"" + kFramesKey + "\":[" +
           rbt_rows_ + "]";
  }

private:
  uint32_t frame(uint32_t index) {
    auto [it, added] = frames_.emplace(index, frame_count_);
    if (!added)
      return it->second;
    frame_count_++;
    const Frame &f = profile_.frames.at(index);
    // The location is what the profiler shows and how it groups frames into functions. The
    // form `name (in resource)` makes a function of `name` in a library-like resource: Ruby
    // methods in their file (one function per method, not per line; the line is its own
    // column), native functions in their binary, kernel functions in "kernel".
    std::string location = f.name;
    std::string resource = f.kind == FrameKind::Ruby     ? f.file
                           : f.kind == FrameKind::Kernel ? "kernel"
                           : f.kind == FrameKind::Native ? f.module.substr(f.module.rfind('/') + 1)
                                                         : "";
    if (!resource.empty() && resource.find(')') == std::string::npos)
      location += " (in " + resource + ")";
    append_row(frame_rows_, "[" + std::to_string(string(location)) + ",false,null,null," +
                                (f.line ? std::to_string(f.line) : std::string("null")) +
                                ",null," + std::to_string(frame_category(f.kind)) + ",0]");
    append_row(rbt_rows_,
               json::array({kind_name(f.kind), f.name, f.file, f.line, f.module}).dump());
    return it->second;
  }

  const Profile &profile_;
  std::map<std::string, uint32_t> strings_;
  std::map<uint32_t, uint32_t> frames_;  // profile frame → thread frame
  std::map<std::pair<int64_t, uint32_t>, uint32_t> stacks_;
  uint32_t string_count_ = 0, frame_count_ = 0, stack_count_ = 0;
  std::string string_rows_, frame_rows_, rbt_rows_, stack_rows_;
};

json categories() {
  json out = json::array();
  for (const auto &c : kCategories)
    out.push_back({{"name", c.name}, {"color", c.color}, {"subcategories", {"Other"}}});
  return out;
}

// One schema per marker type, with a field per data key (integers where every value is one).
json marker_schema(const Profile &profile) {
  std::map<std::string, std::vector<std::string>> keys;  // type → keys in first-seen order
  std::map<std::pair<std::string, std::string>, bool> numeric;
  for (const Marker &m : profile.markers) {
    auto &k = keys[marker_type(m.name)];
    for (const auto &[key, value] : m.data) {
      auto id = std::make_pair(marker_type(m.name), key);
      if (std::find(k.begin(), k.end(), key) == k.end()) {
        k.push_back(key);
        numeric[id] = true;
      }
      numeric[id] = numeric[id] && is_integer(value);
    }
  }
  json out = json::array();
  for (const auto &[type, ks] : keys) {
    json data = json::array();
    for (const auto &key : ks) {
      const char *format = !numeric[{type, key}] ? "string" : key == "bytes" ? "bytes" : "integer";
      data.push_back({{"key", key}, {"label", key}, {"format", format}, {"searchable", true}});
    }
    out.push_back({{"name", type},
                   {"display", {"marker-chart", "marker-table", "timeline-overview"}},
                   {"chartLabel", "{marker.name}"},
                   {"tableLabel", "{marker.name}"},
                   {"data", data}});
  }
  return out;
}

constexpr const char *kMarkerSchema =
    "{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,\"category\":4,\"data\":5}";
constexpr const char *kSampleSchema = "{\"stack\":0,\"time\":1,\"eventDelay\":2}";

// One thread object's JSON text.
std::string write_thread(const Profile &profile, const Thread &thread,
                         const std::vector<const Sample *> &samples,
                         const std::vector<const Marker *> &markers) {
  ThreadTables tables(profile);
  std::string sample_rows, cpus;
  for (const Sample *s : samples) {
    append_row(sample_rows, "[" + tables.stack(s->stack) + "," + ms_text(s->time_ns) + ",0]");
    append_row(cpus, std::to_string(s->cpu));
  }
  std::string marker_rows;
  for (const Marker *m : markers) {
    bool instant = m->end_ns <= m->start_ns;
    json data = {{"type", marker_type(m->name)}};
    for (const auto &[key, value] : m->data)
      data[key] = is_integer(value) ? json(std::strtoll(value.c_str(), nullptr, 10)) : json(value);
    std::string text = data.dump();
    // A marker's stack is a one-sample "SyncProfile" thread whose stack indexes this thread's
    // stack table; the profiler turns it into the marker's cause.
    std::string stack = tables.stack(m->stack);
    if (stack != "null") {
      text.pop_back();  // the closing brace
      text += ",\"stack\":{\"name\":\"SyncProfile\",\"registerTime\":null,"
              "\"unregisterTime\":null,\"processType\":\"default\",\"tid\":" +
              std::to_string(thread.tid) + ",\"pid\":" + std::to_string(thread.pid) +
              ",\"markers\":{\"schema\":" + kMarkerSchema +
              ",\"data\":[]},\"samples\":{\"schema\":" + kSampleSchema + ",\"data\":[[" +
              stack + "," + ms_text(m->start_ns) + ",0]]}}}";
    }
    append_row(marker_rows, "[" + std::to_string(tables.string(m->name)) + "," +
                                ms_text(m->start_ns) + "," +
                                (instant ? std::string("null") : ms_text(m->end_ns)) + "," +
                                (instant ? "0" : "1") + "," +
                                std::to_string(marker_category(m->category)) + "," + text + "]");
  }
  std::string name = thread.name.empty() ? std::to_string(thread.tid) : thread.name;
  return "{\"name\":" + json_string(name) +
         ",\"processType\":\"default\",\"processName\":" + json_string(thread.process_name) +
         ",\"pid\":" + std::to_string(thread.pid) + ",\"tid\":" + std::to_string(thread.tid) +
         ",\"registerTime\":0,\"unregisterTime\":null,\"samples\":{\"schema\":" + kSampleSchema +
         ",\"data\":[" + sample_rows + "]},\"markers\":{\"schema\":" + kMarkerSchema +
         ",\"data\":[" + marker_rows + "]},\"" + kSampleCpusKey + "\":[" + cpus + "]," +
         tables.members() + "}";
}

}  // namespace

std::optional<std::string> write_firefox(const std::vector<Profile> &profiles, std::string &out) {
  if (profiles.size() != 1)
    return "a Firefox profile holds one recorded profile, not " + std::to_string(profiles.size());
  const Profile &p = profiles[0];
  // Threads: the profile's, plus any a sample or marker names that it does not list.
  std::map<std::pair<uint32_t, uint32_t>, Thread> threads;
  for (const Thread &t : p.threads)
    threads[{t.pid, t.tid}] = t;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<const Sample *>> samples;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<const Marker *>> markers;
  for (const Sample &s : p.samples)
    samples[{s.pid, s.tid}].push_back(&s);
  for (const Marker &m : p.markers)
    markers[{m.pid, m.tid}].push_back(&m);
  for (auto &[id, _] : samples)
    threads.try_emplace(id, Thread{id.first, id.second, {}, {}});
  for (auto &[id, _] : markers)
    threads.try_emplace(id, Thread{id.first, id.second, {}, {}});
  for (auto &[id, list] : samples)
    std::stable_sort(list.begin(), list.end(),
                     [](const Sample *a, const Sample *b) { return a->time_ns < b->time_ns; });
  for (auto &[id, list] : markers)
    std::stable_sort(list.begin(), list.end(), [](const Marker *a, const Marker *b) {
      return a->start_ns < b->start_ns;
    });

  double interval = p.period > 0 ? static_cast<double>(p.period) / 1e6 : 1.0;
  json meta = {{"version", kGeckoVersion},
               {"interval", interval},
               {"startTime", ms(p.start_ns)},
               {"shutdownTime", nullptr},
               {"processType", 0},
               {"product", "rbt"},
               {"stackwalk", 1},
               {"debug", 0},
               {"gcpoison", 0},
               {"asyncstack", 0},
               {"platform", "Linux"},
               {"categories", categories()},
               {"markerSchema", marker_schema(p)},
               {kMetaKey,
                {{"name", p.name},
                 {"lost", p.lost},
                 {"samples", p.samples.size()},
                 {"durationNs", p.duration_ns},
                 {"startNs", p.start_ns},
                 {"period", p.period},
                 {"periodType", {p.period_type.type, p.period_type.unit}}}}};
  if (p.duration_ns)
    meta["profilingEndTime"] = ms(p.duration_ns);
  std::string text = "{\"meta\":" + meta.dump() + ",\"libs\":[],\"threads\":[";
  bool first = true;
  for (const auto &[id, t] : threads) {
    text += first ? "" : ",";
    text += write_thread(p, t, samples[id], markers[id]);
    first = false;
  }
  text += "],\"processes\":[],\"pausedRanges\":[]}";
  out += gzip_compress(text);
  return std::nullopt;
}

}  // namespace rbt::profile
