#pragma once
// skboutput(): packets that programs send through the perf event array kSkbOutputMap, written
// to each call's pcap file (LINKTYPE_RAW, as bpftrace: no link-layer header).

#include <bpf/libbpf.h>

#include <cstdio>
#include <map>
#include <memory>

#include "manifest.h"
#include "result.h"

namespace rbt::runtime {

class SkbOutput {
public:
  // Nothing to do (nullptr) when the object has no skboutput() call. Opens (truncates) every
  // call's file now, so a run that sends no packet still leaves an empty capture.
  static Result<std::unique_ptr<SkbOutput>> open(bpf_object *obj, const Manifest &manifest);
  ~SkbOutput();
  int epoll_fd() const { return perf_buffer__epoll_fd(pb_); }
  void consume() { perf_buffer__consume(pb_); }

private:
  static void on_sample(void *self, int cpu, void *data, __u32 size);
  perf_buffer *pb_ = nullptr;
  std::map<uint64_t, std::FILE *> files_;  // by action id (EventId::FirstAction + index)
  uint64_t boot_ns_ = 0;                   // CLOCK_REALTIME minus CLOCK_MONOTONIC
};

}  // namespace rbt::runtime
