#pragma once
// One output interface for everything a session prints on stdout (or -o FILE): the attach
// banner, printf/time/cat/system text, print() of values and maps, and the maps at exit.
// TextWriter prints bpftrace's text; JsonWriter prints NDJSON. The session and the event
// reader only talk to a Writer, so the output format is decided once, in make_writer().

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "maps.h"
#include "options.h"
#include "types.h"

namespace rbt::output {

// What a piece of free text is; JSON names it in "type", text ignores it.
enum class MessageKind { Printf, Time, Cat, Syscall };

// The JSON "type" of a message: "printf", "time", "cat", "syscall".
const char *message_kind_name(MessageKind kind);

class Writer {
public:
  explicit Writer(std::FILE *out) : out_(out) {}
  virtual ~Writer() = default;
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  // After attaching: text prints "Attached N probes" on stderr, JSON an attached_probes line.
  virtual void attached_probes(size_t count) = 0;
  // printf, time, cat and system output.
  virtual void message(MessageKind kind, const std::string &text) = 0;
  // print(value) of an integer, string or tuple laid out as `type`.
  virtual void value(const Type &type, const uint8_t *bytes) = 0;
  // print(@m, top, div) and the maps at exit: sorts the entries, keeps the last `top`
  // (0 = all) and divides values by `div` (1 = unchanged).
  virtual void map(runtime::MapSnapshot &snapshot, uint64_t top, uint64_t div) = 0;
  // Before the maps printed at exit (text: two empty lines, as bpftrace).
  virtual void exit_maps_begin() = 0;

  void flush() { fflush(out_); }

protected:
  std::FILE *out_;
};

// A writer for `format` on `out`; `quiet` (-q) drops the attached-probes output.
std::unique_ptr<Writer> make_writer(OutputFormat format, std::FILE *out, bool quiet);

}  // namespace rbt::output
