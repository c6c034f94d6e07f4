#include "run_object.h"

#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "core_btf.h"
#include "diagnostics.h"
#include "error_report.h"
#include "output_file.h"
#include "session.h"
#include "symbols/library_resolver.h"

namespace rbt {

cache::ObjectCache::Resolver resolves_in(const Options &options) {
  pid_t pid = options.pid;
  return [pid](const std::string &pattern) { return runtime::resolution_in_process(pattern, pid); };
}

namespace {

// Signals that end a session are handled synchronously by Session::run (signalfd); blocking
// them from the start means a Ctrl-C during load is not lost and never kills rbt half-attached.
void block_session_signals(const Manifest &manifest) {
  sigset_t set;
  sigemptyset(&set);
  for (int signo : self_signals(manifest))
    sigaddset(&set, signo);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, nullptr);
}

// A program the verifier gave up on (E2BIG: it walks at most a million instructions, each
// iteration of a `while` or `unroll` and each path through its branches anew) type-checked,
// so the mistake is the script's size, not the kernel's: an error with a caret under the probe
// saying what to change, as a compile error would. Other refusals stay the verifier's words.
Error locate_rejection(Error e, const ProbeDesc *probe, const Options &options) {
  if (e.err != E2BIG || !probe || probe->line == 0 || options.program_text.empty())
    return e;
  SourceFile source(options.program_name, options.program_text);
  DiagnosticEngine diags(source);
  diags.error({probe->line, probe->col, probe->end_line, probe->end_col},
              "this probe is too large for the kernel's verifier (it checks at most 1,000,000 "
              "instructions along all of the program's paths)",
              "loop fewer times in `while` and `unroll` (each iteration is checked anew; a "
              "`for ($i : a..b)` body is checked once), use fewer branches, or split the work "
              "between probes");
  e.diagnostic = diags.render();
  return e;
}

// stdout (the dumps, the script's text beside a profile, or everything) got all it was given.
// Called right after the writes, so errno still says why an earlier one failed.
Status check_stdout() {
  int earlier = errno;
  std::cout.flush();
  errno = 0;
  bool flushed = fflush(stdout) == 0;
  int err = flushed ? earlier : errno;
  if (!flushed || !std::cout || ferror(stdout))
    return make_error("writing output", strerror(err ? err : EIO), {}, err ? err : EIO);
  return Ok{};
}

}  // namespace

// The minimal-BTF side entry for `obj` on this boot's kernel, made once (core_btf.h).
static std::string core_btf_path(const cache::ObjectCache &cache, bpf_object *obj) {
  std::string btf = runtime::core_btf_key(obj);
  if (btf.empty())
    return {};
  cache::Sha256 key;
  key.update(btf);
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;  // one kernel BTF per boot
  utsname u{};
  uname(&u);
  key.update(boot + u.release + u.version);
  return cache.side_file("core-" + cache::hex(key.finish()) + ".btf", [obj] {
    auto made = runtime::minimal_core_btf(obj);
    return made ? *made : std::string();
  });
}

int run_object(const Options &options, const cache::CacheEntry &object,
               const cache::ObjectCache &cache, runtime::Timeline *timeline) {
  if (!options.emit_elf.empty()) {
    auto written = write_output_file(options.emit_elf,
                                     std::string(object.elf.data(), object.elf.size()));
    if (!written)
      return fail(written.error(), options.verbose);
  }
  if (auto written = check_stdout(); !written)
    return fail(written.error(), options.verbose);

  // Load, run, print.
  std::FILE *out = stdout;
  std::FILE *file = nullptr;
  if (!options.output_file.empty()) {
    auto opened = open_output_file(options.output_file);
    if (!opened)
      return fail(opened.error(), options.verbose);
    file = *opened;
    out = file;
  }
  // A profile takes -o FILE (or stdout); the script's text output moves to stdout (or stderr).
  std::FILE *profile_out = nullptr;
  if (options.profile_format == "pprof" && !file && isatty(STDOUT_FILENO))
    return fail(make_error("-f pprof", "a pprof profile is gzipped binary, not for a terminal",
                           "write it to a file: -o profile.pb.gz"),
                options.verbose);
  if (!options.profile_format.empty()) {
    profile_out = out;
    out = file ? stdout : stderr;
  }
  block_session_signals(object.manifest);
  runtime::SessionOptions so;
  so.out = out;
  so.format = options.format;
  so.quiet = options.quiet;
  so.verbose = options.verbose;
  so.dump_verifier = options.wants_dump("verifier");
  so.pid = options.pid;
  so.command = options.command;
  so.attach_marker = getenv("RBT_ATTACH_MARKER") != nullptr;
  so.bpftrace_notice = getenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED") != nullptr;
  so.bench = options.bench;
  if (profile_out) {
    so.profile_format = profile::format_from_name(options.profile_format);
    so.profile_out = profile_out;
    so.sum_unit = options.sum_unit;
  }
  so.timeline = timeline;
  so.rstack_needs_ruby = options.rstack_needs_ruby;
  so.ringbuf_bytes = options.ringbuf_bytes;
  if (cache.enabled())
    so.core_btf_path = [&cache](bpf_object *obj) { return core_btf_path(cache, obj); };
  runtime::Session session(object.manifest, so);
  if (auto s = session.load(object.elf); !s)
    return fail(locate_rejection(s.error(), session.rejected_probe(), options), so.verbose);
  if (options.dry_run)
    return 0;
  if (auto s = session.check_probes(); !s)
    return fail(s.error(), so.verbose);
  if (auto s = session.start_command(); !s)
    return fail(s.error(), so.verbose);
  if (auto s = session.run_begin(); !s)
    return fail(s.error(), so.verbose);
  // BEGIN runs before any other probe can fire; if it calls exit(), nothing else attaches.
  if (!session.exit_requested()) {
    if (auto s = session.attach(); !s)
      return fail(s.error(), so.verbose);
  }
  session.announce();
  if (!session.exit_requested()) {
    if (auto s = session.run(); !s)
      return fail(s.error(), so.verbose);
  }
  if (auto s = session.run_end(); !s)
    return fail(s.error(), so.verbose);
  // Stop the probes before reading the maps, so printing sees a settled state.
  session.detach_probes();
  auto printed = options.print_maps_at_exit ? session.print_maps() : Status(Ok{});
  session.report_dropped_updates();
  int code = session.exit_code();
  session.detach();
  if (!printed)
    return fail(printed.error(), so.verbose);
  if (auto written = session.check_output(); !written)
    return fail(written.error(), so.verbose);
  if (file && fclose(file) != 0)
    return fail(make_error("writing " + options.output_file, strerror(errno)), so.verbose);
  if (auto written = check_stdout(); !written)
    return fail(written.error(), so.verbose);
  return code;
}

}  // namespace rbt
