#include "codegen.h"
#include "uprobe_groups.h"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "backend_error.h"
#include "emit_object.h"
#include "link_objects.h"
#include "link_stdlib.h"
#include "link_walker.h"
#include "lowering.h"
#include "partition.h"

namespace rbt::codegen {

namespace {

std::string print_module(const llvm::Module &module) {
  std::string s;
  llvm::raw_string_ostream out(s);
  module.print(out, nullptr);
  return s;
}

// One LLVM module with the whole script lowered into it, in a context of its own (partition.h).
struct ModuleBuild {
  std::unique_ptr<llvm::TargetMachine> tm;
  llvm::LLVMContext context;
  std::string backend_errors;  // the first error the BPF back end reported
  bool stack_exceeded = false;  // that error: a function needs more than 512 bytes of stack
  // Each generated function's probe, so that a back-end error names a place in the script.
  std::map<std::string, const ast::Probe *> function_probes;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<DebugInfo> debug_info;
  std::unique_ptr<Resources> resources;
  bool ruby_walker = false;  // link the walker object (link_walker.h) with the parts
};

Result<std::unique_ptr<ModuleBuild>> lower_script(const ast::Program &program,
                                                  const sema::SemaInfo &sema,
                                                  const CodegenOptions &options,
                                                  uint64_t stack_budget) {
  auto build = std::make_unique<ModuleBuild>();
  auto tm = create_bpf_target_machine(options.cpu);
  if (!tm)
    return tm.error();
  build->tm = std::move(*tm);
  // The BPF back end reports some errors (a stack over 512 bytes) through the context; LLVM's
  // default handler would print them and exit(1) from inside the library.
  build->context.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo *di, void *errors) {
        auto &first = *static_cast<std::string *>(errors);
        if (di->getSeverity() != llvm::DS_Error || !first.empty())
          return;  // the stack error repeats for every slot: keep the first
        llvm::raw_string_ostream os(first);
        llvm::DiagnosticPrinterRawOStream printer(os);
        di->print(printer);
      },
      &build->backend_errors);
  build->module = std::make_unique<llvm::Module>("rbt", build->context);
  llvm::Module &module = *build->module;
  module.setTargetTriple(build->tm->getTargetTriple().str());
  module.setDataLayout(build->tm->createDataLayout());

  build->debug_info =
      std::make_unique<DebugInfo>(module, options.source_name, options.source_text);
  build->resources = std::make_unique<Resources>(*build->debug_info, sema);
  Lowering lowering(module, *build->debug_info, *build->resources, sema);
  lowering.set_filter_pid(options.filter_pid);
  lowering.set_pid_from_own_namespace(options.pid_from_own_namespace);
  lowering.set_stack_budget(stack_budget);
  lowering.set_source_name(options.source_name);
  lowering.set_source_text(options.source_text);
  if (options.warn_failed_reads)
    lowering.warn_failed_reads(options.source_name, options.source_text);
  unsigned index = 0;
  for (const ast::Probe *probe : program.probes)
    for (const auto &group : uprobe_groups(sema.probes.at(probe), options.uprobe_multi)) {
      build->function_probes["probe_" + std::to_string(index)] = probe;
      if (group.size() > 1)
        lowering.lower_probe(*probe, group, index++);
      else
        lowering.lower_probe(*probe, group.front(), index++);
    }
  if (!lowering.error().empty())
    return make_error("generating BPF code", lowering.error());
  build->resources->finish_scratch();

  for (const std::string &library : lowering.libraries())
    if (auto s = link_stdlib(module, library); !s)
      return s.error();
  build->ruby_walker = lowering.uses_ruby_walker();
  return build;
}

// Cuts the module to one part of the plan, then optimizes and emits it.
Result<CompiledObject> finish_part(ModuleBuild &build, const CodegenOptions &options,
                                   const PartitionPlan &plan, unsigned part) {
  llvm::Module &module = *build.module;
  std::vector<llvm::GlobalValue *> used = keep_partition(module, plan, part);
  if (part == 0)  // one license for the linked object
    used.push_back(build.debug_info->define_license());
  llvm::appendToCompilerUsed(module, used);
  build.debug_info->finalize();

  CompiledObject out;
  if (options.keep_ir)
    out.ir = print_module(module);
  std::string verify_errors;
  llvm::raw_string_ostream verify_out(verify_errors);
  if (llvm::verifyModule(module, &verify_out))
    return make_error("generating code", "internal error: invalid LLVM IR:\n" + verify_errors,
                      "please report this with the script that caused it");

  optimize(module, *build.tm);
  share_partition_maps(module, plan);
  if (options.keep_ir)
    out.ir_opt = print_module(module);
  if (options.keep_asm) {
    auto text = emit(module, *build.tm, true);
    if (!text)
      return text.error();
    out.asm_text.assign(text->begin(), text->end());
  }
  auto elf = emit(module, *build.tm, false);
  if (!elf)
    return elf.error();
  build.stack_exceeded = build.backend_errors.find("stack limit is exceeded") != std::string::npos;
  if (!build.backend_errors.empty())
    return backend_error(build.backend_errors, build.function_probes, options.source_name,
                         options.source_text);
  out.elf = std::move(*elf);
  out.manifest = build.resources->take_manifest();
  return out;
}

// compile() with value slots on the stack up to `stack_budget` bytes per function;
// `stack_exceeded` tells whether a part failed for a stack over 512 bytes.
Result<CompiledObject> compile_with_budget(const ast::Program &program, const sema::SemaInfo &sema,
                                           const CodegenOptions &options, uint64_t stack_budget,
                                           std::atomic<bool> &stack_exceeded) {
  // -d ir/asm show one module, as written.
  const unsigned threads =
      options.keep_ir || options.keep_asm ? 1 : std::max(1u, options.threads);
  size_t programs = 0;
  for (const ast::Probe *probe : program.probes)
    programs += sema.probes.at(probe).size();
  // How many parts there will be is known only once the script is lowered. For a script with
  // many programs, threads for the parts it may need start at once and lower it themselves, so
  // their lowering overlaps this thread's; each makes the same plan from its own copy and stops
  // if it has no part. For fewer programs that guess costs more than it saves (a thread's
  // first LLVM set-up contends with this one's): the threads start once the plan wants them.
  const unsigned helpers = static_cast<unsigned>(
      std::max<size_t>(1, std::min({size_t{threads}, size_t{kMaxPartitions}, programs})) - 1);
  const bool start_early = programs >= kEarlyThreadPrograms;

  // Room for every part a plan can make: library programs (rstack's discovery) count too.
  std::vector<std::optional<Result<CompiledObject>>> parts(
      std::max(helpers + 1, std::min(threads, kMaxPartitions)));
  PartitionPlan plan;  // part 0's, written before the threads are joined
  bool ruby_walker = false;  // part 0's
  std::vector<std::jthread> workers;
  std::function<std::optional<Result<CompiledObject>>(unsigned)> compile_part;
  auto start_parts = [&](unsigned from, unsigned to) {
    for (unsigned part = from; part < to; part++)
      workers.emplace_back([&, part] { parts[part] = compile_part(part); });
  };
  compile_part = [&](unsigned part) -> std::optional<Result<CompiledObject>> {
    auto build = lower_script(program, sema, options, stack_budget);
    if (!build)  // every thread meets the same error: part 0 reports it
      return part == 0 ? std::optional<Result<CompiledObject>>(build.error()) : std::nullopt;
    PartitionPlan own = plan_partitions(*(*build)->module, threads);
    if (part >= own.parts)
      return std::nullopt;
    if (part == 0) {
      plan = own;
      ruby_walker = (*build)->ruby_walker;
      if (!start_early)
        start_parts(1, own.parts);
    }
    auto finished = finish_part(**build, options, own, part);
    if ((*build)->stack_exceeded)
      stack_exceeded = true;
    return finished;
  };
  if (start_early)
    start_parts(1, helpers + 1);
  parts[0] = compile_part(0);
  workers.clear();  // joins
  if (!*parts[0] || (plan.parts == 1 && !ruby_walker))
    return std::move(*parts[0]);

  std::vector<std::vector<char>> objects;
  // The walker first: the parts' declarations of its entry points then resolve to a
  // definition the linker already holds.
  if (ruby_walker)
    objects.push_back(ruby_walker_object(options.cpu));
  for (unsigned part = 0; part < plan.parts; part++) {
    if (!parts[part])  // cannot happen: every thread plans from the same module
      return make_error("generating BPF code", "internal error: part " + std::to_string(part) +
                                                   " of " + std::to_string(plan.parts) +
                                                   " was not compiled");
    if (!*parts[part])
      return parts[part]->error();
    objects.push_back(std::move((*parts[part])->elf));
  }
  auto linked = link_objects(objects);
  if (!linked)
    return linked.error();
  CompiledObject out = std::move(**parts[0]);
  out.elf = std::move(*linked);
  out.parts = plan.parts;
  return out;
}

}  // namespace

// Values too large for the BPF stack move to scratch memory, never fail: lowering keeps value
// slots within kStackBudget of each function's 512 bytes, which leaves room for LLVM's spills
// and the inlined stdlib's locals in all but unusual functions (41 string constants stored in
// a map in one BEGIN: capable.bt). When the back end still finds a stack over 512 bytes, the
// script compiles again with every value slot in scratch pages; only if that fails too is it an
// error (a caret on the probe, backend_error.h).
Result<CompiledObject> compile(const ast::Program &program, const sema::SemaInfo &sema,
                               const CodegenOptions &options) {
  std::atomic<bool> stack_exceeded = false;
  auto compiled = compile_with_budget(program, sema, options, kStackBudget, stack_exceeded);
  if (compiled || !stack_exceeded)
    return compiled;
  stack_exceeded = false;
  return compile_with_budget(program, sema, options, 0, stack_exceeded);
}

}  // namespace rbt::codegen
