#include "events.h"

#include <cerrno>
#include <cstring>

#include "output/printf.h"

namespace rbt::runtime {

EventReader::EventReader(const Manifest &manifest, std::FILE *out)
    : manifest_(manifest), out_(out) {
  for (auto &a : manifest.actions)
    formats_.push_back(a.kind == ActionKind::Printf ? parse_format(a.text) : ParsedFormat{});
}

EventReader::~EventReader() { ring_buffer__free(rb_); }

Status EventReader::open(const bpf_map *ringbuf) {
  rb_ = ring_buffer__new(bpf_map__fd(ringbuf), &EventReader::on_event, this, nullptr);
  if (!rb_) {
    int err = errno;
    return make_error("opening the event ring buffer", strerror(err), {}, err);
  }
  return Ok{};
}

int EventReader::epoll_fd() const { return ring_buffer__epoll_fd(rb_); }

int EventReader::drain() { return ring_buffer__consume(rb_); }

int EventReader::on_event(void *self, void *data, size_t size) {
  static_cast<EventReader *>(self)->handle(static_cast<const uint8_t *>(data), size);
  return 0;
}

void EventReader::handle(const uint8_t *data, size_t size) {
  if (size < 8)
    return;
  uint64_t id;
  memcpy(&id, data, 8);
  if (id == static_cast<uint64_t>(EventId::Exit)) {
    // The first exit() wins; events already queued behind it are still printed.
    if (!exit_requested_ && size >= 16) {
      int64_t code;
      memcpy(&code, data + 8, 8);
      exit_code_ = static_cast<int>(code);
    }
    exit_requested_ = true;
    return;
  }
  uint64_t index = id - static_cast<uint64_t>(EventId::FirstAction);
  if (id < static_cast<uint64_t>(EventId::FirstAction) || index >= formats_.size())
    return;
  const ActionDesc &action = manifest_.actions[index];
  switch (action.kind) {
  case ActionKind::Printf: {
    std::string text = output::format_printf(formats_[index], action.args, data + 8);
    fwrite(text.data(), 1, text.size(), out_);
    break;
  }
  default:
    break;
  }
}

}  // namespace rbt::runtime
