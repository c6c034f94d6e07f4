#include "driver.h"
#include "header_macros.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "ast_printer.h"
#include "codegen.h"
#include "config_env.h"
#include "machine_types.h"
#include "output_file.h"
#include "parse.h"
#include "privileges.h"
#include "sema/sema.h"
#include "session.h"

namespace rbt {

namespace {

void print_error(const Error &e, bool verbose) {
  if (!e.diagnostic.empty()) {
    fputs(e.diagnostic.c_str(), stderr);
    if (verbose && !e.detail.empty())
      fprintf(stderr, "%s%s", e.detail.c_str(), e.detail.back() == '\n' ? "" : "\n");
    return;
  }
  std::string msg = e.what;
  if (!e.why.empty())
    msg += (msg.empty() ? "" : ": ") + e.why;
  fprintf(stderr, "rbt: error: %s\n", msg.c_str());
  if (verbose && !e.detail.empty())
    fprintf(stderr, "%s%s", e.detail.c_str(), e.detail.back() == '\n' ? "" : "\n");
  if (!e.hint.empty())
    fprintf(stderr, "hint: %s\n", e.hint.c_str());
}

int fail(const Error &e, bool verbose) {
  print_error(e, verbose);
  return 1;
}

// Signals that end a session are handled synchronously by Session::run (signalfd); blocking
// them from the start means a Ctrl-C during load is not lost and never kills rbt half-attached.
void block_session_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, nullptr);
}

// Threads to compile on: the CPUs rbt may use, or RBT_COMPILE_THREADS (1 compiles one module,
// a way around the partitioned build if it ever misbehaves).
Result<unsigned> compile_threads() {
  const char *env = getenv("RBT_COMPILE_THREADS");
  if (!env)
    return MachineTypes::usable_cpus();
  char *end = nullptr;
  unsigned long n = strtoul(env, &end, 10);
  if (*env == '\0' || *end != '\0' || n < 1 || n > 64)
    return make_error("RBT_COMPILE_THREADS", "'" + std::string(env) + "' is not a number from 1 to 64",
                      "unset it to use every CPU rbt may run on");
  return static_cast<unsigned>(n);
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

int run_driver(const Options &options, runtime::Timeline *timeline) {
  // Every run loads BPF programs (--dry-run too): say what is missing before any work.
  if (auto s = check_tracing_privileges(); !s)
    return fail(s.error(), options.verbose);
  // Parse and check.
  SourceFile source(options.program_name, options.program_text);
  DiagnosticEngine diags(source);
  ast::ASTContext ast_context;
  HeaderMacros header_macros;
  if (needs_preprocessing(source.text()))
    header_macros = read_header_macros(included_headers(source.text()));
  ast::Program *program = parse(source, ast_context, diags, header_macros);
  if (!program) {
    diags.render(std::cerr);
    return 1;
  }
  if (options.wants_dump("ast"))
    ast::print_ast(std::cout, *program);
  sema::SemaInfo sema;
  MachineTypes machine;
  sema::Environment env = machine.environment(options);
  auto config_env = config_from_environment();
  if (!config_env)
    return fail(config_env.error(), options.verbose);
  env.config_env = *config_env;
  if (!sema::analyse(*program, diags, sema, env)) {
    diags.render(std::cerr);
    return 1;
  }
  diags.render(std::cerr);  // warnings
  if (options.wants_dump("types"))
    ast::print_ast(std::cout, *program, &sema);

  // Compile.
  codegen::CodegenOptions cg;
  cg.keep_ir = options.wants_dump("ir") || options.wants_dump("ir-opt");
  cg.keep_asm = options.wants_dump("asm");
  cg.filter_pid = options.pid > 0 && options.filter_pid_in_probes;
  cg.cpu = MachineTypes::bpf_cpu();
  auto threads = compile_threads();
  if (!threads)
    return fail(threads.error(), options.verbose);
  cg.threads = *threads;
  cg.warn_failed_reads = options.warn_failed_reads;
  cg.source_name = options.program_name;
  cg.source_text = options.program_text;
  auto object = codegen::compile(*program, sema, cg);
  if (!object)
    return fail(object.error(), options.verbose);
  if (options.verbose)
    fprintf(stderr, "Compiled %zu programs in %u part%s\n", object->manifest.probes.size(),
            object->parts, object->parts == 1 ? "" : "s (one thread each, linked)");
  if (options.wants_dump("ir"))
    std::cout << object->ir;
  if (options.wants_dump("ir-opt"))
    std::cout << object->ir_opt;
  if (options.wants_dump("asm"))
    std::cout << object->asm_text;
  if (!options.emit_elf.empty()) {
    auto written = write_output_file(options.emit_elf,
                                     std::string(object->elf.data(), object->elf.size()));
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
  block_session_signals();
  runtime::SessionOptions so;
  so.out = out;
  so.format = options.format;
  so.quiet = options.quiet;
  so.verbose = options.verbose;
  so.dump_verifier = options.wants_dump("verifier");
  so.pid = options.pid;
  so.command = options.command;
  so.attach_marker = getenv("RBT_ATTACH_MARKER") != nullptr;
  if (profile_out) {
    so.profile_format = profile::format_from_name(options.profile_format);
    so.profile_out = profile_out;
    so.sum_unit = options.sum_unit;
  }
  so.timeline = timeline;
  so.rstack_needs_ruby = options.rstack_needs_ruby;
  so.ringbuf_bytes = options.ringbuf_bytes;
  runtime::Session session(object->manifest, so);
  if (auto s = session.load(object->elf); !s)
    return fail(s.error(), so.verbose);
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
