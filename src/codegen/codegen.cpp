#include "codegen.h"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include "emit_object.h"
#include "link_stdlib.h"
#include "lowering.h"

namespace rbt::codegen {

namespace {
std::string print_module(const llvm::Module &module) {
  std::string s;
  llvm::raw_string_ostream out(s);
  module.print(out, nullptr);
  return s;
}
}  // namespace

Result<CompiledObject> compile(const ast::Program &program, const sema::SemaInfo &sema,
                               const CodegenOptions &options) {
  auto tm = create_bpf_target_machine(options.cpu);
  if (!tm)
    return tm.error();

  llvm::LLVMContext context;
  // The BPF back end reports some errors (a stack over 512 bytes) through the context; LLVM's
  // default handler would print them and exit(1) from inside the library.
  std::string backend_errors;
  context.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo *di, void *errors) {
        auto &first = *static_cast<std::string *>(errors);
        if (di->getSeverity() != llvm::DS_Error || !first.empty())
          return;  // the stack error repeats for every slot: keep the first
        llvm::raw_string_ostream os(first);
        llvm::DiagnosticPrinterRawOStream printer(os);
        di->print(printer);
      },
      &backend_errors);
  llvm::Module module("rbt", context);
  module.setTargetTriple((*tm)->getTargetTriple().str());
  module.setDataLayout((*tm)->createDataLayout());

  DebugInfo debug_info(module);
  Resources resources(debug_info, sema);
  Lowering lowering(module, debug_info, resources, sema);
  lowering.set_filter_pid(options.filter_pid);
  if (options.warn_failed_reads)
    lowering.warn_failed_reads(options.source_name);
  unsigned index = 0;
  for (const ast::Probe *probe : program.probes)
    for (const ProbeDesc &desc : sema.probes.at(probe))
      lowering.lower_probe(*probe, desc, index++);
  if (!lowering.error().empty())
    return make_error("generating BPF code", lowering.error());
  resources.finish_scratch();

  for (const std::string &library : lowering.libraries())
    if (auto s = link_stdlib(module, library); !s)
      return s.error();

  auto *license_init = llvm::ConstantDataArray::getString(context, "GPL");
  auto *license = new llvm::GlobalVariable(module, license_init->getType(), true,
                                           llvm::GlobalValue::ExternalLinkage, license_init,
                                           "_license");
  license->setSection("license");
  std::vector<llvm::GlobalValue *> used{license};
  for (auto &g : module.globals())
    if (g.getSection() == ".maps")
      used.push_back(&g);
  llvm::appendToCompilerUsed(module, used);
  debug_info.finalize();

  CompiledObject out;
  if (options.keep_ir)
    out.ir = print_module(module);
  std::string verify_errors;
  llvm::raw_string_ostream verify_out(verify_errors);
  if (llvm::verifyModule(module, &verify_out))
    return make_error("generating code", "internal error: invalid LLVM IR:\n" + verify_errors,
                      "please report this with the script that caused it");

  optimize(module, **tm);
  if (options.keep_ir)
    out.ir_opt = print_module(module);
  if (options.keep_asm) {
    auto text = emit(module, **tm, true);
    if (!text)
      return text.error();
    out.asm_text.assign(text->begin(), text->end());
  }
  auto elf = emit(module, **tm, false);
  if (!elf)
    return elf.error();
  if (!backend_errors.empty())
    return make_error("generating BPF code", backend_errors);
  out.elf = std::move(*elf);
  out.manifest = resources.take_manifest();
  return out;
}

}  // namespace rbt::codegen
