#pragma once
// One output interface for everything a session prints on stdout (or -o FILE): the attach
// banner, printf/time/cat/system text, print() of values and maps, and the maps at exit.
// TextWriter prints bpftrace's text; JsonWriter prints NDJSON. The session and the event
// reader only talk to a Writer, so the output format is decided once, in make_writer().

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "maps.h"
#include "options.h"
#include "types.h"

namespace rbt::output {

// What a piece of free text is; JSON names it in "type", text ignores it.
enum class MessageKind { Printf, Time, Cat, Syscall, Join };

// -k: a helper that failed in a probe (a memory read): where in the script, which helper, and
// its (negative errno) result.
struct HelperError {
  std::string file;
  uint32_t line = 0, col = 0;
  std::string helper;
  int64_t retcode = 0;
};

// The JSON "type" of a message: "printf", "time", "cat", "syscall", "join".
const char *message_kind_name(MessageKind kind);

class Writer {
public:
  explicit Writer(std::FILE *out) : out_(out) {}
  virtual ~Writer() { write_held(release()); }
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  // After attaching: text prints "Attached N probes" on stderr, JSON an attached_probes line.
  virtual void attached_probes(size_t count) = 0;
  // printf, time, cat, system and join output (join's text comes without its newline).
  virtual void message(MessageKind kind, const std::string &text) = 0;
  // print(value) of an integer, string or tuple laid out as `type`.
  virtual void value(const Type &type, const uint8_t *bytes) = 0;
  // print(@m, top, div) and the maps at exit: sorts the entries, keeps the last `top`
  // (0 = all) and divides values by `div` (1 = unchanged).
  virtual void map(runtime::MapSnapshot &snapshot, uint64_t top, uint64_t div) = 0;
  // -k's failed helper (text: "FILE:L:C: WARNING: Failed to HELPER: MSG (RC)" on stderr; JSON:
  // a helper_error line, as bpftrace).
  virtual void helper_error(const HelperError &e) = 0;
  // Events the ring buffer dropped since the last report (text: "Lost N events" on stderr).
  virtual void lost_events(uint64_t count) = 0;
  // Updates a full map refused, at exit (text: "rbt: warning: @: N updates dropped, map full
  // (max_map_keys=K)" on stderr).
  virtual void map_updates_dropped(const std::string &map, uint64_t count, uint64_t max_keys) = 0;
  // Before the maps printed at exit (text: two empty lines, as bpftrace).
  virtual void exit_maps_begin() = 0;
  // --mode bench: the result of benchmark `index` of `names` (text: a table, its header before
  // the first; JSON: a benchmark_result line), the average time of one run and the runs made.
  virtual void benchmark_result(const std::vector<std::string> &names, size_t index,
                                uint64_t average_ns, uint64_t iters) = 0;

  // Flushes, remembering the first failed write (a full disk, /dev/full) for error().
  void flush() {
    if (fflush(out_) != 0 && error_ == 0)
      error_ = errno;
  }
  // errno of the first write that failed (EIO when only the stream's error flag says so), or 0.
  int error() {
    flush();
    if (error_ == 0 && ferror(out_))
      error_ = EIO;
    return error_;
  }

  // Output written between hold() and release() is kept in memory; release() returns to the
  // real output and hands back what was held, for the caller to write with write_held().
  // BEGIN runs before the probes attach, but its output follows the attached-probes line, as
  // in bpftrace.
  void hold();
  std::string release();
  void write_held(const std::string &text);

protected:
  std::FILE *out_;

private:
  std::FILE *real_out_ = nullptr;  // while holding
  int error_ = 0;
  char *held_ = nullptr;
  size_t held_size_ = 0;
};

// A writer for `format` on `out`; `quiet` (-q) drops the attached-probes output.
std::unique_ptr<Writer> make_writer(OutputFormat format, std::FILE *out, bool quiet);

}  // namespace rbt::output
