#include "skb_output.h"

#include <cerrno>
#include <cstring>

#include "clock_ns.h"

namespace rbt::runtime {

namespace {
// pcap's file header: magic, version 2.4, no time zone, snap length, LINKTYPE_RAW (101).
struct PcapHeader {
  uint32_t magic = 0xa1b2c3d4;
  uint16_t major = 2, minor = 4;
  int32_t zone = 0;
  uint32_t sigfigs = 0, snaplen = 65535, linktype = 101;
};
struct PcapRecord {
  uint32_t sec, usec, captured, length;
};
}  // namespace

Result<std::unique_ptr<SkbOutput>> SkbOutput::open(bpf_object *obj, const Manifest &manifest) {
  const bpf_map *map = bpf_object__find_map_by_name(obj, kSkbOutputMap);
  if (!map)
    return std::unique_ptr<SkbOutput>();
  auto out = std::make_unique<SkbOutput>();
  for (size_t id = 0; id < manifest.actions.size(); id++) {
    const ActionDesc &a = manifest.actions[id];
    if (a.kind != ActionKind::SkbOutput)
      continue;
    std::FILE *f = fopen(a.text.c_str(), "wb");
    if (!f)
      return make_error("opening skboutput()'s file " + a.text, strerror(errno));
    PcapHeader h;
    fwrite(&h, sizeof h, 1, f);
    out->files_[static_cast<uint64_t>(EventId::FirstAction) + id] = f;  // as events name it
  }
  out->boot_ns_ = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
  out->pb_ = perf_buffer__new(bpf_map__fd(map), 16, &SkbOutput::on_sample, nullptr, out.get(),
                              nullptr);
  if (!out->pb_)
    return make_error("opening skboutput()'s perf buffer", strerror(errno));
  return out;
}

SkbOutput::~SkbOutput() {
  if (pb_)
    perf_buffer__free(pb_);
  for (auto &[id, f] : files_)
    fclose(f);
}

// A sample: the meta, then offset + len packet bytes (the perf record pads the end to 8 bytes,
// so the length comes from the meta). The first `offset` bytes are left out, as bpftrace does.
void SkbOutput::on_sample(void *self, int, void *data, __u32 size) {
  auto *out = static_cast<SkbOutput *>(self);
  SkbOutputMeta meta;
  if (size < sizeof meta)
    return;
  memcpy(&meta, data, sizeof meta);
  auto file = out->files_.find(meta.action);
  if (file == out->files_.end())
    return;
  uint64_t have = size - sizeof meta;
  if (meta.offset >= have)
    return;
  uint64_t bytes = std::min<uint64_t>(meta.len, have - meta.offset);
  uint64_t ns = out->boot_ns_ + meta.nsecs;
  PcapRecord r{static_cast<uint32_t>(ns / 1000000000), static_cast<uint32_t>(ns % 1000000000 / 1000),
               static_cast<uint32_t>(bytes), static_cast<uint32_t>(bytes)};
  fwrite(&r, sizeof r, 1, file->second);
  fwrite(static_cast<const char *>(data) + sizeof meta + meta.offset, 1, bytes, file->second);
  fflush(file->second);
}

}  // namespace rbt::runtime
