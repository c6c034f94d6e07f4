#include "emit_object.h"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <mutex>

#include "compare_operands.h"

extern "C" {
void LLVMInitializeBPFTargetInfo();
void LLVMInitializeBPFTarget();
void LLVMInitializeBPFTargetMC();
void LLVMInitializeBPFAsmPrinter();
void LLVMInitializeBPFAsmParser();  // for the inline assembly of log2_bucket
}

namespace rbt::codegen {

Result<std::unique_ptr<llvm::TargetMachine>> create_bpf_target_machine(const std::string &cpu) {
  // Only the BPF target is linked in; initialising all targets would cost start-up time.
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeBPFTargetInfo();
    LLVMInitializeBPFTarget();
    LLVMInitializeBPFTargetMC();
    LLVMInitializeBPFAsmPrinter();
    LLVMInitializeBPFAsmParser();
  });
  std::string triple = "bpfel", error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return make_error("creating the BPF back end", error);
  llvm::TargetOptions opts;
  // cpu v3 at least: 32-bit sub-registers and jmp32, available since Linux 5.1.
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, "", opts, std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return make_error("creating the BPF back end", "LLVM could not create a BPF target machine");
  return tm;
}

namespace {
constexpr const char *kPipeline =
    "always-inline,globaldce,function(sroa,early-cse<memssa>,dse,simplifycfg)";
}  // namespace

void optimize(llvm::Module &module, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  // Not the O2 pipeline: lowering emits straight-line code with few loops, and O2's dozens of
  // passes (InstCombine alone eight times) cost 4x this one's time for the same instructions
  // (bench/run insns and compile_time). Inline the stdlib, promote slots, merge repeated
  // helper calls, drop dead zeroing stores, tidy the CFG. No InstCombine: it took 13% of a
  // compile and saved one instruction in the five bench programs (a map-read predicate) while
  // costing 38 in the 300-line bench script; inlining already folds the stdlib's constant
  // arguments.
  llvm::ModulePassManager mpm;
  if (auto err = pb.parsePassPipeline(mpm, kPipeline))
    llvm::report_fatal_error(std::move(err));  // a constant string: only a build can break it
  mpm.run(module, mam);
  give_compares_own_operands(module);  // last: no pass may merge the copies again
}

Result<std::vector<char>> emit(llvm::Module &module, llvm::TargetMachine &tm, bool assembly) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager pm;
  auto type = assembly ? llvm::CodeGenFileType::AssemblyFile : llvm::CodeGenFileType::ObjectFile;
  if (tm.addPassesToEmitFile(pm, out, nullptr, type))
    return make_error("emitting BPF code", "the BPF target cannot emit this file type");
  pm.run(module);
  return std::vector<char>(buffer.begin(), buffer.end());
}

}  // namespace rbt::codegen
