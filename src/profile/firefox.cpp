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

// One thread's tables as the Gecko format has them: frames and stacks interned per thread.
class ThreadTables {
public:
  explicit ThreadTables(const Profile &profile) : profile_(profile) {}

  uint32_t string(const std::string &s) {
    auto [it, added] = strings_.emplace(s, static_cast<uint32_t>(string_table_.size()));
    if (added)
      string_table_.push_back(s);
    return it->second;
  }

  // The stack index of `stack` (root first), or null for an empty stack.
  json stack(const std::vector<uint32_t> &frames) {
    json prefix = nullptr;
    for (uint32_t f : frames) {
      uint32_t frame = this->frame(f);
      int64_t p = prefix.is_null() ? -1 : prefix.get<int64_t>();
      auto [it, added] = stacks_.emplace(std::make_pair(p, frame),
                                         static_cast<uint32_t>(stack_table_.size()));
      if (added)
        stack_table_.push_back(json::array({prefix, frame}));
      prefix = it->second;
    }
    return prefix;
  }

  void fill(json &thread) {
    thread["stackTable"] = {{"schema", {{"prefix", 0}, {"frame", 1}}}, {"data", stack_table_}};
    thread["frameTable"] = {{"schema",
                             {{"location", 0},
                              {"relevantForJS", 1},
                              {"innerWindowID", 2},
                              {"implementation", 3},
                              {"line", 4},
                              {"column", 5},
                              {"category", 6},
                              {"subcategory", 7}}},
                            {"data", frame_table_}};
    thread["stringTable"] = string_table_;
    thread[kFramesKey] = rbt_frames_;
  }

private:
  uint32_t frame(uint32_t index) {
    auto [it, added] = frames_.emplace(index, static_cast<uint32_t>(frame_table_.size()));
    if (!added)
      return it->second;
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
    json line = f.line ? json(f.line) : json(nullptr);
    frame_table_.push_back(json::array(
        {string(location), false, nullptr, nullptr, line, nullptr, frame_category(f.kind), 0}));
    rbt_frames_.push_back(json::array({kind_name(f.kind), f.name, f.file, f.line, f.module}));
    return it->second;
  }

  const Profile &profile_;
  std::map<std::string, uint32_t> strings_;
  json string_table_ = json::array();
  std::map<uint32_t, uint32_t> frames_;  // profile frame → thread frame
  json frame_table_ = json::array();
  json rbt_frames_ = json::array();
  std::map<std::pair<int64_t, uint32_t>, uint32_t> stacks_;
  json stack_table_ = json::array();
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

json write_thread(const Profile &profile, const Thread &thread,
                  const std::vector<const Sample *> &samples,
                  const std::vector<const Marker *> &markers) {
  ThreadTables tables(profile);
  json sample_data = json::array();
  for (const Sample *s : samples)
    sample_data.push_back(json::array({tables.stack(s->stack), ms(s->time_ns), 0}));
  json marker_data = json::array();
  for (const Marker *m : markers) {
    bool instant = m->end_ns <= m->start_ns;
    json data = {{"type", marker_type(m->name)}};
    for (const auto &[key, value] : m->data)
      data[key] = is_integer(value) ? json(std::strtoll(value.c_str(), nullptr, 10)) : json(value);
    // A marker's stack is a one-sample "SyncProfile" thread whose stack indexes this thread's
    // stack table; the profiler turns it into the marker's cause.
    json stack = tables.stack(m->stack);
    if (!stack.is_null())
      data["stack"] = {
          {"name", "SyncProfile"},
          {"registerTime", nullptr},
          {"unregisterTime", nullptr},
          {"processType", "default"},
          {"tid", thread.tid},
          {"pid", thread.pid},
          {"markers",
           {{"schema",
             {{"name", 0}, {"startTime", 1}, {"endTime", 2}, {"phase", 3}, {"category", 4},
              {"data", 5}}},
            {"data", json::array()}}},
          {"samples",
           {{"schema", {{"stack", 0}, {"time", 1}, {"eventDelay", 2}}},
            {"data", json::array({json::array({stack, ms(m->start_ns), 0})})}}}};
    marker_data.push_back(json::array({tables.string(m->name), ms(m->start_ns),
                                       instant ? json(nullptr) : json(ms(m->end_ns)),
                                       instant ? 0 : 1, marker_category(m->category), data}));
  }
  json t = {{"name", thread.name.empty() ? std::to_string(thread.tid) : thread.name},
            {"processType", "default"},
            {"processName", thread.process_name},
            {"pid", thread.pid},
            {"tid", thread.tid},
            {"registerTime", 0},
            {"unregisterTime", nullptr},
            {"samples",
             {{"schema", {{"stack", 0}, {"time", 1}, {"eventDelay", 2}}}, {"data", sample_data}}},
            {"markers",
             {{"schema",
               {{"name", 0}, {"startTime", 1}, {"endTime", 2}, {"phase", 3}, {"category", 4},
                {"data", 5}}},
              {"data", marker_data}}}};
  tables.fill(t);
  return t;
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
  json thread_list = json::array();
  for (const auto &[id, t] : threads)
    thread_list.push_back(write_thread(p, t, samples[id], markers[id]));
  json doc = {{"meta", meta},
              {"libs", json::array()},
              {"threads", thread_list},
              {"processes", json::array()},
              {"pausedRanges", json::array()}};
  out += gzip_compress(doc.dump());
  return std::nullopt;
}

}  // namespace rbt::profile
