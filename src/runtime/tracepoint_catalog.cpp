#include "tracepoint_catalog.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "tracefs.h"

namespace rbt::runtime {

namespace {

// Subdirectories of dir (tracefs puts control files such as "enable" next to them).
std::vector<std::string> subdirs(const std::string &dir) {
  std::vector<std::string> out;
  DIR *d = opendir(dir.c_str());
  if (!d)
    return out;
  while (dirent *ent = readdir(d))
    if (ent->d_type == DT_DIR && ent->d_name[0] != '.')
      out.emplace_back(ent->d_name);
  closedir(d);
  return out;
}

}  // namespace

Result<std::vector<TracepointName>> tracepoint_events() {
  auto root = tracefs_root();
  if (!root)
    return root.error();
  std::vector<TracepointName> out;
  // available_events is one read instead of thousands of directory scans; the events/ tree is
  // the fallback for kernels or mounts without it.
  std::ifstream in(*root + "/available_events");
  std::string line;
  while (in && std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon != std::string::npos)
      out.push_back({line.substr(0, colon), line.substr(colon + 1)});
  }
  if (out.empty()) {
    std::string events = *root + "/events";
    for (auto &cat : subdirs(events))
      for (auto &ev : subdirs(events + "/" + cat))
        out.push_back({cat, ev});
  }
  if (out.empty())
    return make_error("reading " + *root + "/available_events", "no tracepoints found",
                      "run rbt as root", EACCES);
  std::sort(out.begin(), out.end(), [](const TracepointName &a, const TracepointName &b) {
    return a.category != b.category ? a.category < b.category : a.event < b.event;
  });
  return out;
}

Result<std::vector<std::string>> tracepoint_fields(const std::string &category,
                                                   const std::string &event) {
  auto root = tracefs_root();
  if (!root)
    return root.error();
  std::string path = *root + "/events/" + category + "/" + event + "/format";
  std::ifstream in(path);
  if (!in) {
    int err = errno;
    return make_error("reading " + path, strerror(err), {}, err);
  }
  std::vector<std::string> fields;
  std::string line;
  // Lines look like "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;".
  while (std::getline(in, line)) {
    size_t start = line.find("field:");
    if (start == std::string::npos)
      continue;
    start += strlen("field:");
    size_t end = line.find(';', start);
    std::string decl = line.substr(start, end == std::string::npos ? end : end - start);
    size_t name_start = decl.find_last_of(" *");
    std::string name = decl.substr(name_start == std::string::npos ? 0 : name_start + 1);
    if (name.rfind("common_", 0) == 0)
      continue;
    fields.push_back(decl);
  }
  return fields;
}

}  // namespace rbt::runtime
