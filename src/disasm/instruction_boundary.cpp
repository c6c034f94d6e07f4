#include "instruction_boundary.h"

#include <elf.h>

#include <memory>
#include <mutex>

#include <llvm/ADT/ArrayRef.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

extern "C" {
void LLVMInitializeX86TargetInfo();
void LLVMInitializeX86TargetMC();
void LLVMInitializeX86Disassembler();
}

namespace rbt::disasm {

namespace {

// The pieces of LLVM's MC layer an x86-64 disassembler needs, built once.
struct X86Decoder {
  std::unique_ptr<llvm::MCRegisterInfo> regs;
  std::unique_ptr<llvm::MCAsmInfo> asm_info;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> disassembler;
};

const X86Decoder *x86_decoder() {
  static std::once_flag once;
  static X86Decoder decoder;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86Disassembler();
    const std::string triple = "x86_64-unknown-linux-gnu";
    std::string error;
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
    if (!target)
      return;
    llvm::MCTargetOptions options;
    decoder.regs.reset(target->createMCRegInfo(triple));
    if (!decoder.regs)
      return;
    decoder.asm_info.reset(target->createMCAsmInfo(*decoder.regs, triple, options));
    decoder.subtarget.reset(target->createMCSubtargetInfo(triple, "", ""));
    if (!decoder.asm_info || !decoder.subtarget)
      return;
    decoder.context = std::make_unique<llvm::MCContext>(llvm::Triple(triple), decoder.asm_info.get(),
                                                        decoder.regs.get(), decoder.subtarget.get());
    decoder.disassembler.reset(target->createMCDisassembler(*decoder.subtarget, *decoder.context));
  });
  return decoder.disassembler ? &decoder : nullptr;
}

// x86 instructions have lengths from 1 to 15 bytes: walk them from the function's start.
Boundary x86_boundary(const uint8_t *code, size_t size, uint64_t offset) {
  const X86Decoder *d = x86_decoder();
  if (!d)
    return Boundary::Unknown;
  llvm::ArrayRef<uint8_t> bytes(code, size);
  uint64_t pos = 0;
  while (pos < offset) {
    if (pos >= size)
      return Boundary::Unknown;
    llvm::MCInst inst;
    uint64_t length = 0;
    auto status = d->disassembler->getInstruction(inst, length, bytes.slice(pos), pos,
                                                  llvm::nulls());
    if (status != llvm::MCDisassembler::Success || length == 0)
      return Boundary::Unknown;
    pos += length;
  }
  return pos == offset ? Boundary::Yes : Boundary::No;
}

}  // namespace

Boundary instruction_boundary(uint16_t e_machine, const uint8_t *code, size_t size,
                              uint64_t offset) {
  if (offset == 0)
    return Boundary::Yes;
  switch (e_machine) {
  case EM_X86_64: return x86_boundary(code, size, offset);
  case EM_AARCH64: return offset % 4 == 0 ? Boundary::Yes : Boundary::No;  // fixed 4-byte instructions
  default: return Boundary::Unknown;
  }
}

}  // namespace rbt::disasm
