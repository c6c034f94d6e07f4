#include "driver.h"
#include "header_macros.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>

#include "ast_printer.h"
#include "codegen.h"
#include "config_env.h"
#include "error_report.h"
#include "machine_types.h"
#include "object_cache.h"
#include "parse.h"
#include "privileges.h"
#include "probe_filter.h"
#include "run_object.h"
#include "sema/sema.h"
#include "warnings.h"

namespace rbt {

namespace {

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

// Parse → check → compile into `object`; -1 when it compiled, else the exit status. Warnings
// go to stderr and into the object, for the cache to print again when it reuses it.
int compile_program(const Options &options, cache::CacheEntry &object) {
  SourceFile source(options.program_name, options.program_text);
  DiagnosticEngine diags(source);
  ast::ASTContext ast_context;
  HeaderMacros header_macros;
  // --include FILE counts as an `#include <FILE>` line of the script.
  std::vector<std::string> headers = options.includes;
  if (needs_preprocessing(source.text()))
    for (std::string &h : included_headers(source.text()))
      headers.push_back(std::move(h));
  if (!headers.empty())
    header_macros = read_header_macros(headers);
  ast::Program *program = parse(source, ast_context, diags, header_macros);
  if (!program) {
    diags.render(std::cerr, !warnings_suppressed);
    return 1;
  }
  if (!options.probe_filter.empty() && filter_probes(*program, options.probe_filter) == 0) {
    fprintf(stderr, "rbt: error: No probes to attach: --probe-filter '%s' matches none of the "
                    "script's probes\nhint: the filter is a regular expression searched for in "
                    "each probe's name as written (interval:ms:100)\n",
            options.probe_filter.c_str());
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
    // A named parameter the script has not, or of the wrong type: the command line's mistake.
    for (const std::string &e : sema.usage_errors)
      fprintf(stderr, "rbt: error: %s\n", e.c_str());
    if (!sema.usage_errors.empty()) {
      fprintf(stderr, "hint: the script's getopt() calls name its parameters; give them "
                      "after `--`\n");
      return 2;
    }
    diags.render(std::cerr, !warnings_suppressed);
    return 1;
  }
  if (sema.named_params_help) {
    // bpftrace's wording ("expected program options"), one parameter a line.
    printf("%s\n", sema.named_params.empty() ? "the script reads no named parameters (getopt())"
                                             : "expected program options:");
    for (const auto &[name, p] : sema.named_params)
      printf("  --%s%s%s (default %s)\n", name.c_str(), p.description.empty() ? "" : ": ",
             p.description.c_str(), p.default_text.c_str());
    return 0;
  }
  std::ostringstream warnings;
  diags.render(warnings);
  if (!warnings_suppressed)
    std::cerr << warnings.str();
  object.warnings = machine.warnings() + warnings.str();
  for (const auto &[path, in_process_root] : machine.files_read())
    object.inputs.push_back(cache::identify_file(path, in_process_root, options.pid));
  object.resolutions = machine.resolutions();
  if (options.wants_dump("types"))
    ast::print_ast(std::cout, *program, &sema);

  codegen::CodegenOptions cg;
  cg.keep_ir = options.wants_dump("ir") || options.wants_dump("ir-opt");
  cg.keep_asm = options.wants_dump("asm");
  cg.filter_pid = options.pid > 0 && options.filter_pid_in_probes;
  cg.pid_from_own_namespace = MachineTypes::in_child_pid_namespace();
  cg.cpu = MachineTypes::bpf_cpu();
  cg.uprobe_multi = MachineTypes::has_uprobe_multi();
  auto threads = compile_threads();
  if (!threads)
    return fail(threads.error(), options.verbose);
  cg.threads = *threads;
  cg.warn_failed_reads = options.warn_failed_reads;
  cg.source_name = options.program_name;
  cg.source_text = options.program_text;
  auto compiled = codegen::compile(*program, sema, cg);
  if (!compiled)
    return fail(compiled.error(), options.verbose);
  if (options.verbose)
    fprintf(stderr, "Compiled %zu programs in %u part%s\n", compiled->manifest.probes.size(),
            compiled->parts, compiled->parts == 1 ? "" : "s (one thread each, linked)");
  if (options.wants_dump("ir"))
    std::cout << compiled->ir;
  if (options.wants_dump("ir-opt"))
    std::cout << compiled->ir_opt;
  if (options.wants_dump("asm"))
    std::cout << compiled->asm_text;
  object.elf = std::move(compiled->elf);
  object.manifest = std::move(compiled->manifest);
  object.parts = compiled->parts;
  return -1;
}

}  // namespace

int run_driver(const Options &options, runtime::Timeline *timeline) {
  // Every run loads BPF programs (--dry-run too): say what is missing before any work.
  if (auto s = check_tracing_privileges(); !s)
    return fail(s.error(), options.verbose);
  // Compile, or reuse the object an earlier run compiled from the same inputs: the key and
  // what it covers are in cache/cache_key.h.
  auto cache = cache::ObjectCache::open(options);
  std::string why_not;
  std::optional<cache::CacheEntry> object = cache.lookup(why_not, true, resolves_in(options));
  if (object) {
    cache.announce(*object, options.verbose);
  } else {
    if (options.verbose && cache.enabled())
      fprintf(stderr, "Not in cache (%s): compiling\n", why_not.c_str());
    object.emplace();
    if (int code = compile_program(options, *object); code >= 0)
      return code;
    cache.store(*object);
  }
  return run_object(options, *object, cache, timeline);
}

}  // namespace rbt
