#include "debug_info.h"

#include <algorithm>

#include <linux/bpf.h>

#include <llvm/BinaryFormat/Dwarf.h>

namespace rbt::codegen {

DebugInfo::DebugInfo(llvm::Module &module, const std::string &file_name,
                     const std::string &source)
    : module_(module), dib_(module) {
  // Without a source, LLVM's BTF writer would open the file name relative to the current
  // directory for the line text (a file called like the script there, or rbt's own binary).
  file_ = dib_.createFile(file_name, "", std::nullopt, llvm::StringRef(source));
  cu_ = dib_.createCompileUnit(llvm::dwarf::DW_LANG_C11, file_, "rbt", true, "", 0);
  int_ = dib_.createBasicType("int", 32, llvm::dwarf::DW_ATE_signed);
  u8_ = dib_.createBasicType("unsigned char", 8, llvm::dwarf::DW_ATE_unsigned_char);
  auto *void_ptr = dib_.createPointerType(nullptr, 64);
  probe_fn_type_ = dib_.createSubroutineType(dib_.getOrCreateTypeArray({int_, void_ptr}));
  module.addModuleFlag(llvm::Module::Max, "Dwarf Version", 5);
  module.addModuleFlag(llvm::Module::Warning, "Debug Info Version",
                       llvm::DEBUG_METADATA_VERSION);
}

llvm::DIType *DebugInfo::int_array(uint64_t count) {
  auto *range = dib_.getOrCreateSubrange(0, static_cast<int64_t>(count));
  return dib_.createArrayType(32 * count, 32, int_, dib_.getOrCreateArray({range}));
}

llvm::DIType *DebugInfo::bytes(uint64_t size) {
  auto *range = dib_.getOrCreateSubrange(0, static_cast<int64_t>(size));
  return dib_.createArrayType(8 * size, 8, u8_, dib_.getOrCreateArray({range}));
}

llvm::GlobalVariable *DebugInfo::map_global(
    const std::string &name, const std::vector<std::pair<const char *, llvm::DIType *>> &members) {
  auto &ctx = module_.getContext();
  auto *ptr = llvm::PointerType::get(ctx, 0);
  std::vector<llvm::Type *> fields(members.size(), ptr);
  auto *struct_ty = llvm::StructType::get(ctx, fields);
  auto *gv = new llvm::GlobalVariable(module_, struct_ty, false, llvm::GlobalValue::ExternalLinkage,
                                      llvm::ConstantAggregateZero::get(struct_ty), name);
  gv->setSection(".maps");
  gv->setAlignment(llvm::Align(8));

  std::vector<llvm::Metadata *> di_members;
  uint64_t offset = 0;
  for (auto &[member_name, pointee] : members) {
    di_members.push_back(dib_.createMemberType(cu_, member_name, file_, 0, 64, 0, offset,
                                               llvm::DINode::FlagZero,
                                               dib_.createPointerType(pointee, 64)));
    offset += 64;
  }
  auto *di_struct = dib_.createStructType(cu_, "", file_, 0, offset, 0, llvm::DINode::FlagZero,
                                          nullptr, dib_.getOrCreateArray(di_members));
  auto *expr = dib_.createGlobalVariableExpression(cu_, name, "", file_, 0, di_struct, false);
  gv->addDebugInfo(expr);
  globals_.push_back(expr);
  return gv;
}

llvm::GlobalVariable *DebugInfo::define_map(const std::string &name, unsigned map_type,
                                            uint64_t max_entries, uint64_t key_size,
                                            uint64_t value_size) {
  if (key_size == 0)  // ring buffers have neither key nor value
    return map_global(name, {{"type", int_array(map_type)}, {"max_entries", int_array(max_entries)}});
  // The kernel checks that an array map's BTF key is a 32-bit integer.
  bool array = map_type == BPF_MAP_TYPE_ARRAY || map_type == BPF_MAP_TYPE_PERCPU_ARRAY;
  return map_global(name, {{"type", int_array(map_type)},
                           {"max_entries", int_array(max_entries)},
                           {"key", array && key_size == 4 ? int_ : bytes(key_size)},
                           {"value", bytes(value_size)}});
}

llvm::GlobalVariable *DebugInfo::define_sized_map(const std::string &name, unsigned map_type,
                                                  uint64_t max_entries, uint64_t key_size,
                                                  uint64_t value_size) {
  return map_global(name, {{"type", int_array(map_type)},
                           {"max_entries", int_array(max_entries)},
                           {"key_size", int_array(key_size)},
                           {"value_size", int_array(value_size)}});
}

llvm::GlobalVariable *DebugInfo::define_counter(const std::string &name) {
  auto *i64 = llvm::Type::getInt64Ty(module_.getContext());
  auto *gv = new llvm::GlobalVariable(module_, i64, false, llvm::GlobalValue::ExternalLinkage,
                                      llvm::ConstantInt::get(i64, 0), name);
  gv->setSection(".bss");
  gv->setAlignment(llvm::Align(8));
  auto *type = dib_.createBasicType("unsigned long long", 64, llvm::dwarf::DW_ATE_unsigned);
  auto *expr = dib_.createGlobalVariableExpression(cu_, name, "", file_, 0, type, false);
  gv->addDebugInfo(expr);
  globals_.push_back(expr);
  return gv;
}

llvm::GlobalVariable *DebugInfo::declare_ksym(const FieldLayout &var) {
  if (auto *existing = module_.getNamedGlobal(var.name))
    return existing;
  auto *i8 = llvm::Type::getInt8Ty(module_.getContext());
  auto *gv = new llvm::GlobalVariable(module_, i8, true, llvm::GlobalValue::ExternalLinkage,
                                      nullptr, var.name);
  gv->setSection(".ksyms");
  // libbpf checks the local type against the kernel's only by kind (any integer matches an
  // integer, any struct a struct), so the name and size are enough.
  llvm::DIType *type =
      var.kind == FieldLayout::Kind::Record
          ? static_cast<llvm::DIType *>(dib_.createStructType(
                cu_, var.type_name, file_, 0, uint64_t(var.size) * 8, 0, llvm::DINode::FlagZero,
                nullptr, dib_.getOrCreateArray({})))
          : dib_.createBasicType(var.type_name.empty() ? "long" : var.type_name,
                                 uint64_t(var.size) * 8,
                                 var.is_signed ? llvm::dwarf::DW_ATE_signed
                                               : llvm::dwarf::DW_ATE_unsigned);
  auto *expr = dib_.createGlobalVariableExpression(cu_, var.name, "", file_, 0, type, false,
                                                   /*isDefined=*/false);
  gv->addDebugInfo(expr);
  globals_.push_back(expr);
  return gv;
}

llvm::GlobalVariable *DebugInfo::define_license() {
  auto *init = llvm::ConstantDataArray::getString(module_.getContext(), "GPL");
  auto *gv = new llvm::GlobalVariable(module_, init->getType(), true,
                                      llvm::GlobalValue::ExternalLinkage, init, "_license");
  gv->setSection("license");
  auto *chr = dib_.createBasicType("char", 8, llvm::dwarf::DW_ATE_signed_char);
  auto *range = dib_.getOrCreateSubrange(0, 4);
  auto *type = dib_.createArrayType(32, 8, chr, dib_.getOrCreateArray({range}));
  auto *expr = dib_.createGlobalVariableExpression(cu_, "_license", "", file_, 0, type, false);
  gv->addDebugInfo(expr);
  globals_.push_back(expr);
  return gv;
}

llvm::DISubprogram *DebugInfo::describe_function(llvm::Function &fn, unsigned line,
                                                 unsigned params) {
  llvm::DISubroutineType *type = probe_fn_type_;
  auto *void_ptr = dib_.createPointerType(nullptr, 64);
  if (params) {
    std::vector<llvm::Metadata *> types{int_};
    for (unsigned i = 0; i < params; i++)
      types.push_back(void_ptr);
    type = dib_.createSubroutineType(dib_.getOrCreateTypeArray(types));
  }
  auto *sp = dib_.createFunction(file_, fn.getName(), fn.getName(), file_, line, type, line,
                                 llvm::DINode::FlagPrototyped,
                                 params ? llvm::DISubprogram::SPFlagDefinition |
                                              llvm::DISubprogram::SPFlagLocalToUnit
                                        : llvm::DISubprogram::SPFlagDefinition);
  // The kernel rejects BTF whose function prototypes have unnamed parameters; BTF takes the
  // names from parameter variables the subprogram retains.
  for (unsigned i = 0; i < std::max(params, 1u); i++)
    dib_.createParameterVariable(sp, params ? "p" + std::to_string(i) : "ctx", i + 1, file_, line,
                                 void_ptr, /*AlwaysPreserve=*/true);
  fn.setSubprogram(sp);
  return sp;
}

void DebugInfo::describe_extern(llvm::Function &fn, unsigned params) {
  auto *u64 = dib_.createBasicType("unsigned long long", 64, llvm::dwarf::DW_ATE_unsigned);
  std::vector<llvm::Metadata *> types(params + 1, u64);
  auto *type = dib_.createSubroutineType(dib_.getOrCreateTypeArray(types));
  fn.setSubprogram(dib_.createFunction(file_, fn.getName(), fn.getName(), file_, 0, type, 0,
                                       llvm::DINode::FlagPrototyped,
                                       llvm::DISubprogram::SPFlagZero));
}

void DebugInfo::finalize() {
  cu_->replaceGlobalVariables(llvm::MDTuple::get(module_.getContext(), globals_));
  dib_.finalize();
}

}  // namespace rbt::codegen
