// Compile time of a script without the kernel's part: parse → type check → codegen to a BPF
// ELF in memory, the same calls and the same machine Environment as the driver (src/driver.cpp),
// repeated; prints the median and minimum of each stage in milliseconds.
//
//   compile_bench FILE [RUNS [THREADS]]   (RUNS defaults to 20; one extra warm-up run is not
//   counted; THREADS defaults to the CPUs the process may use, as rbt does)
//
// Output, one line: `runs=20 parse_ms=.. sema_ms=.. codegen_ms=.. total_ms=.. min_total_ms=..
// cold_total_ms=..` (medians, except min_ and cold_, the first compile in the process).
//
// RBT_BENCH_LLVM_ARGS passes options to LLVM, e.g. '-time-passes' (a table of each pass's
// time on stderr at exit) or '-disable-machine-sink', to find what a compile spends its time on.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <llvm/Support/Timer.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen.h"
#include "machine_types.h"
#include "options.h"
#include "parse.h"
#include "sema/sema.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Times {
  double parse = 0, sema = 0, codegen = 0;
};

// One full compile; false (with the reason on stderr) when the script does not compile.
bool compile_once(const std::string &name, const std::string &text, unsigned threads, Times &t) {
  auto start = Clock::now();
  rbt::SourceFile source(name, text);
  rbt::DiagnosticEngine diags(source);
  rbt::ast::ASTContext ctx;
  rbt::ast::Program *program = rbt::parse(source, ctx, diags);
  t.parse = ms_since(start);
  if (!program) {
    diags.render(std::cerr);
    return false;
  }
  start = Clock::now();
  rbt::sema::SemaInfo info;
  rbt::Options options;
  rbt::MachineTypes machine;
  rbt::sema::Environment env = machine.environment(options);
  bool ok = rbt::sema::analyse(*program, diags, info, env);
  t.sema = ms_since(start);
  if (!ok) {
    diags.render(std::cerr);
    return false;
  }
  start = Clock::now();
  rbt::codegen::CodegenOptions options_cg;
  options_cg.cpu = rbt::MachineTypes::bpf_cpu();  // as the driver does
  options_cg.threads = threads;
  options_cg.source_name = name;  // as the driver does
  options_cg.source_text = text;
  auto object = rbt::codegen::compile(*program, info, options_cg);
  t.codegen = ms_since(start);
  if (!object) {
    std::cerr << "compile_bench: " << object.error().what << ": " << object.error().why << "\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) {
    std::cerr << "usage: compile_bench FILE [RUNS [THREADS]]\n";
    return 2;
  }
  if (const char *llvm_args = std::getenv("RBT_BENCH_LLVM_ARGS")) {
    std::vector<std::string> words{"compile_bench"};
    std::istringstream split(llvm_args);
    for (std::string w; split >> w;)
      words.push_back(w);
    std::vector<const char *> cargs;
    for (const std::string &w : words)
      cargs.push_back(w.c_str());
    if (!llvm::cl::ParseCommandLineOptions(static_cast<int>(cargs.size()), cargs.data()))
      return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "compile_bench: cannot read " << argv[1] << "\n";
    return 2;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const int runs = argc >= 3 ? std::atoi(argv[2]) : 20;
  const unsigned threads =
      argc == 4 ? static_cast<unsigned>(std::atoi(argv[3])) : rbt::MachineTypes::usable_cpus();
  if (runs < 1 || threads < 1) {
    std::cerr << "compile_bench: RUNS and THREADS must be at least 1\n";
    return 2;
  }

  // The first compile in a process pays first-use costs (LLVM target set-up, kernel BTF), as
  // every `rbt` run does; it is reported on its own and not counted in the medians.
  Times t;
  if (!compile_once(argv[1], text, threads, t))
    return 1;
  const double cold = t.parse + t.sema + t.codegen;
  std::vector<double> parse, sema, codegen, total;
  for (int i = 0; i < runs; i++) {
    if (!compile_once(argv[1], text, threads, t))
      return 1;
    parse.push_back(t.parse);
    sema.push_back(t.sema);
    codegen.push_back(t.codegen);
    total.push_back(t.parse + t.sema + t.codegen);
  }
  std::printf("runs=%d parse_ms=%.3f sema_ms=%.3f codegen_ms=%.3f total_ms=%.3f "
              "min_total_ms=%.3f cold_total_ms=%.3f\n",
              runs, median(parse), median(sema), median(codegen), median(total),
              *std::min_element(total.begin(), total.end()), cold);
  llvm::TimerGroup::printAll(llvm::errs());  // -time-passes: the code generator's passes
  return 0;
}
