#include "firefox_reader.h"

#include <nlohmann/json.hpp>

#include <cmath>

#include "firefox_format.h"
#include "gzip.h"

namespace rbt::profile {

using json = nlohmann::ordered_json;  // keeps marker fields in file order
using namespace firefox;

namespace {

uint64_t ns_of(const json &ms) {
  return ms.is_number() ? static_cast<uint64_t>(std::llround(ms.get<double>() * 1e6)) : 0;
}

// A column's index from a table's schema, or throws.
size_t column(const json &table, const char *name) { return table.at("schema").at(name); }

struct ThreadReader {
  const json &thread;
  Profile &profile;
  std::vector<uint32_t> frames;                // thread frame → profile frame
  std::vector<std::vector<uint32_t>> stacks;   // thread stack → frames root first

  void read_frames() {
    const json &table = thread.at("frameTable");
    const json &strings = thread.at("stringTable");
    const json *exact = thread.contains(kFramesKey) ? &thread.at(kFramesKey) : nullptr;
    size_t loc = column(table, "location"), line = column(table, "line"),
           cat = column(table, "category");
    const json &data = table.at("data");
    for (size_t i = 0; i < data.size(); i++) {
      Frame f;
      if (exact && i < exact->size()) {
        const json &e = exact->at(i);
        f.kind = kind_from_name(e.at(0).get<std::string>()).value_or(FrameKind::Native);
        f.name = e.at(1).get<std::string>();
        f.file = e.at(2).get<std::string>();
        f.line = e.at(3).get<uint32_t>();
        f.module = e.at(4).get<std::string>();
      } else {
        const json &row = data[i];
        f.name = strings.at(row.at(loc).get<size_t>()).get<std::string>();
        // `name (in resource)`: the resource is a file (Ruby) or a module.
        size_t in = f.name.rfind(" (in ");
        if (in != std::string::npos && f.name.back() == ')') {
          f.module = f.name.substr(in + 5, f.name.size() - in - 6);
          f.name.resize(in);
        }
        if (row.size() > line && row[line].is_number())
          f.line = row[line].get<uint32_t>();
        if (row.size() > cat && row[cat].is_number())
          f.kind = kind_of_category(row[cat].get<uint32_t>());
      }
      frames.push_back(profile.intern(f));
    }
  }

  void read_stacks() {
    const json &table = thread.at("stackTable");
    size_t prefix = column(table, "prefix"), frame = column(table, "frame");
    for (const json &row : table.at("data")) {
      std::vector<uint32_t> s;
      if (!row.at(prefix).is_null()) {
        size_t p = row.at(prefix).get<size_t>();
        if (p >= stacks.size())
          throw std::out_of_range("a stack's prefix is not an earlier stack");
        s = stacks[p];
      }
      s.push_back(frames.at(row.at(frame).get<size_t>()));
      stacks.push_back(std::move(s));
    }
  }

  const std::vector<uint32_t> &stack(const json &index) {
    static const std::vector<uint32_t> kEmpty;
    return index.is_null() ? kEmpty : stacks.at(index.get<size_t>());
  }

  void read(uint32_t pid, uint32_t tid) {
    read_frames();
    read_stacks();
    const json &samples = thread.at("samples");
    size_t st = column(samples, "stack"), time = column(samples, "time");
    const json *cpus = thread.contains(kSampleCpusKey) ? &thread.at(kSampleCpusKey) : nullptr;
    size_t index = 0;
    for (const json &row : samples.at("data")) {
      Sample s;
      if (cpus && index < cpus->size())
        s.cpu = cpus->at(index).get<uint32_t>();
      index++;
      s.stack = stack(row.at(st));
      s.values = {1};
      s.time_ns = ns_of(row.at(time));
      s.pid = pid;
      s.tid = tid;
      profile.samples.push_back(std::move(s));
    }
    const json &markers = thread.at("markers");
    const json &strings = thread.at("stringTable");
    size_t name = column(markers, "name"), start = column(markers, "startTime"),
           end = column(markers, "endTime"), category = column(markers, "category"),
           payload = column(markers, "data");
    for (const json &row : markers.at("data")) {
      Marker m;
      m.name = strings.at(row.at(name).get<size_t>()).get<std::string>();
      m.start_ns = ns_of(row.at(start));
      m.end_ns = row.at(end).is_null() ? m.start_ns : ns_of(row.at(end));
      uint32_t c = row.at(category).is_number() ? row.at(category).get<uint32_t>() : 0;
      m.category = c < kCategoryCount ? kCategories[c].name : "Other";
      m.pid = pid;
      m.tid = tid;
      const json &d = row.at(payload);
      if (d.is_object()) {
        for (auto it = d.begin(); it != d.end(); ++it) {
          if (it.key() == "type")
            continue;
          if (it.key() == "stack" && it->is_object()) {  // a SyncProfile thread
            const json &samples = it->at("samples");
            if (!samples.at("data").empty())
              m.stack = stack(samples.at("data").at(0).at(column(samples, "stack")));
            continue;
          }
          if (it.key() == "cause") {  // the processed form, for completeness
            if (it->contains("stack"))
              m.stack = stack(it->at("stack"));
            continue;
          }
          m.data.emplace_back(it.key(), it->is_string() ? it->get<std::string>() : it->dump());
        }
      }
      profile.markers.push_back(std::move(m));
    }
  }
};

}  // namespace

std::optional<std::string> read_firefox(std::string_view bytes, Profile &out) {
  std::string text;
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
      static_cast<unsigned char>(bytes[1]) == 0x8b) {
    auto inflated = gzip_decompress(bytes);
    if (!inflated)
      return "not a complete gzip file";
    text = std::move(*inflated);
  } else {
    text = bytes;
  }
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded())
    return "not JSON";
  try {
    const json &meta = doc.at("meta");
    out.name = "rbt record";
    out.value_types = {{"samples", "count"}};
    out.start_ns = ns_of(meta.at("startTime"));
    out.period = static_cast<int64_t>(std::llround(meta.value("interval", 0.0) * 1e6));
    out.period_type = {"cpu", "nanoseconds"};
    if (meta.contains(kMetaKey)) {
      const json &r = meta.at(kMetaKey);
      out.name = r.value("name", out.name);
      out.lost = r.value("lost", uint64_t{0});
      out.duration_ns = r.value("durationNs", uint64_t{0});
      out.start_ns = r.value("startNs", out.start_ns);
      out.period = r.value("period", out.period);
    }
    for (const json &t : doc.at("threads")) {
      Thread thread;
      thread.pid = t.at("pid").is_string() ? std::stoul(t.at("pid").get<std::string>())
                                           : t.at("pid").get<uint32_t>();
      thread.tid = t.at("tid").is_string() ? std::stoul(t.at("tid").get<std::string>())
                                           : t.at("tid").get<uint32_t>();
      thread.name = t.value("name", "");
      thread.process_name = t.value("processName", "");
      ThreadReader{t, out, {}, {}}.read(thread.pid, thread.tid);
      out.threads.push_back(std::move(thread));
    }
  } catch (const std::exception &e) {
    return std::string("not a Gecko profile as rbt writes it: ") + e.what();
  }
  return std::nullopt;
}

}  // namespace rbt::profile
