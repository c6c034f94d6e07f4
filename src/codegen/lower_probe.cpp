// One BPF function per attach point: section, context, predicate, body.

#include <cstddef>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lowering.h"

namespace rbt::codegen {

namespace {

// The ELF section tells libbpf the program type; attaching is done by the runtime, per kind.
std::string section_for(const ProbeDesc &p) {
  switch (p.kind) {
  case ProbeKind::Begin:
  case ProbeKind::End:
  case ProbeKind::SelfSignal:
    return "raw_tp";  // run on demand with BPF_PROG_TEST_RUN
  case ProbeKind::Bench:
    // BPF_PROG_TEST_RUN repeats and times XDP programs (not raw_tp ones), as bpftrace's bench.
    return "xdp";
  case ProbeKind::Iter:
    return "iter/" + p.target;  // a tracing program libbpf loads for the kernel's iterator
  case ProbeKind::Tracepoint:
    return "tracepoint/" + p.target + "/" + p.func;
  case ProbeKind::RawTracepoint:
    return "raw_tp/" + p.func;
  case ProbeKind::Kprobe:
    return "kprobe/" + p.func;
  case ProbeKind::Kretprobe:
    return "kretprobe/" + p.func;
  case ProbeKind::Uprobe:
    return "uprobe";
  case ProbeKind::Uretprobe:
    return "uretprobe";
  case ProbeKind::Usdt:
    return "usdt";
  case ProbeKind::Profile:
  case ProbeKind::Interval:
  case ProbeKind::Software:
  case ProbeKind::Hardware:
    return "perf_event";
  }
  return "";
}

}  // namespace

Lowering::Lowering(llvm::Module &module, DebugInfo &debug_info, Resources &resources,
                   const sema::SemaInfo &sema)
    : module_(module), debug_info_(debug_info), resources_(resources), sema_(sema),
      b_(module.getContext(), module) {}

llvm::BasicBlock *Lowering::new_block(const char *name) {
  return llvm::BasicBlock::Create(module_.getContext(), name, fn_);
}

void Lowering::lower_probe(const ast::Probe &probe, const std::vector<ProbeDesc> &group,
                           unsigned index) {
  group_ = &group;
  lower_probe(probe, group.front(), index);
  group_ = nullptr;
}

// `probe` and `func` of a group's function: the attach cookie is the desc's index in the group
// (attach/uprobe_multi.cpp), a switch over it stores that desc's text.
llvm::Value *Lowering::per_attach_string(uint64_t size, const char *name,
                                         const std::function<std::string(const ProbeDesc &)> &text) {
  llvm::Value *slot = value_slot(size, name);
  llvm::Value *cookie = b_.call_helper(BPF_FUNC_get_attach_cookie, b_.getInt64Ty(), {ctx()});
  llvm::BasicBlock *done = new_block("cookie_done");
  llvm::BasicBlock *first = new_block("cookie_0");
  llvm::SwitchInst *sw = b_.CreateSwitch(cookie, first, static_cast<unsigned>(group_->size()));
  for (size_t i = 0; i < group_->size(); i++) {
    llvm::BasicBlock *bb = i == 0 ? first : new_block("cookie_n");
    if (i > 0)
      sw->addCase(b_.getInt64(i), bb);
    b_.SetInsertPoint(bb);
    b_.zero_bytes(slot, size);
    std::string t = text((*group_)[i]);
    b_.store_bytes(slot, std::string_view(t.data(), std::min<size_t>(t.size(), size)));
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
  return slot;
}

void Lowering::lower_probe(const ast::Probe &probe, const ProbeDesc &desc, unsigned index) {
  auto &ctx = module_.getContext();
  std::string fn_name = "probe_" + std::to_string(index);
  auto *fty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy()}, false);
  fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fn_name, module_);
  fn_->setSection(section_for(desc));
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  ctx_ = fn_->getArg(0);
  ctx_->setName("ctx");
  probe_ = &desc;
  vars_.clear();
  loops_.clear();
  pages_.clear();
  returned_ = nullptr;
  tracing_program_ = false;
  b_.reset_stack_bytes();

  auto *sp = debug_info_.describe_function(*fn_, probe.range.line);
  // Every instruction carries a location inside the subprogram, so calls into linked helpers
  // verify.
  b_.SetCurrentDebugLocation(llvm::DILocation::get(ctx, probe.range.line, probe.range.col, sp));
  // `entry` holds the stack slots; scratch pages are looked up in blocks inserted between it
  // and the body when the body first needs one.
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", fn_);
  auto *start = llvm::BasicBlock::Create(ctx, "start", fn_);
  b_.SetInsertPoint(entry);
  b_.CreateBr(start);
  setup_tail_ = entry;
  b_.SetInsertPoint(start);

  // libbpf attaches USDT probes only to objects that carry its spec maps, arguments or not.
  if (desc.kind == ProbeKind::Usdt)
    libraries_.insert("usdt");
  const SourceRange &where =
      probe.attach_points.empty() ? probe.range : probe.attach_points.front()->range;
  // A group's descs all name this one function: the runtime attaches them with one link.
  for (const ProbeDesc &member : group_ ? std::span(*group_) : std::span(&desc, 1)) {
    ProbeDesc recorded = member;
    recorded.program = fn_name;
    recorded.line = where.line;
    recorded.col = where.col;
    recorded.end_line = where.end_line;
    recorded.end_col = where.end_col;
    resources_.add_probe(std::move(recorded));
  }

  // -p PID scopes the probes that belong to a process, as bpftrace's manual lists them:
  // uprobes and USDT probes (attached to the process as well; the check here keeps them to it
  // whatever the attach path) and the perf-event probes that sample it (software, hardware,
  // profile: they count only while the process runs). Not interval probes (a timer, not the
  // process's events) and not tracepoints: as in bpftrace 0.17 it is no global PID filter, so an
  // off-CPU script on sched_switch sees the target's switch-ins, which run in the task switched
  // from. (bpftrace 0.2x filters tracepoints by the current task; rbt keeps 0.17's behaviour,
  // which such scripts need.)
  bool process_event = desc.kind == ProbeKind::Uprobe || desc.kind == ProbeKind::Uretprobe ||
                       desc.kind == ProbeKind::Usdt || desc.kind == ProbeKind::Software ||
                       desc.kind == ProbeKind::Hardware || desc.kind == ProbeKind::Profile;
  if (filter_pid_ && process_event) {
    llvm::Value *mine = b_.CreateICmpEQ(b_.current_pid(),
                                        config_field(offsetof(RuntimeConfig, filter_pid)));
    return_unless(mine, "target_process", "other_process");
  }
  // The kernel runs an iterator once more after the last object, with a null object (its
  // `task`, the field after `meta`), to say the walk is over: bpftrace's probe does not run then.
  if (desc.kind == ProbeKind::Iter) {
    llvm::Value *object = b_.CreateLoad(b_.getPtrTy(), b_.byte_ptr(ctx_, 8));
    return_unless(b_.CreateIsNotNull(object), "iter_object", "iter_done");
  }
  // A variable kept for the whole probe (bpftrace 0.17's scoping: sema::VarInfo::probe_scoped)
  // gets its slot here, zeroed, so that every block, loop body included, and every path
  // after the block that assigned it share it and a path that skipped the assignment reads 0.
  for (auto &[key, scoped] : sema_.probe_scoped_vars) {
    const sema::VarInfo *var = scoped.var;
    if (key.first != &probe || var->type.is_none() || var->type.kind == TypeKind::Void)
      continue;
    llvm::Value *slot = vars_[var] = value_slot(var->type.size, var->name);
    b_.zero_bytes(slot, var->type.size);
  }
  if (probe.predicate) {
    llvm::Value *cond = lower_expr(*probe.predicate);
    return_unless(b_.CreateICmpNE(cond, b_.getInt64(0)), "body", "skip");
  }
  lower_block(*probe.body);
  if (!b_.GetInsertBlock()->getTerminator())
    b_.CreateRet(b_.getInt32(0));
  // Its context is the same u64 array; the runtime attaches it as the program type says.
  if (tracing_program_ && desc.kind == ProbeKind::RawTracepoint)
    fn_->setSection("tp_btf/" + desc.func);
  finish_scratch_pages();
}


llvm::Value *Lowering::value_slot(uint64_t size, const llvm::Twine &name) {
  uint64_t rounded = (size + 7) / 8 * 8;
  if (size <= kStackValueMax && b_.stack_bytes() + rounded <= stack_budget_)
    return b_.stack_slot(size, name);
  return scratch_slot(size, name);
}

llvm::Value *Lowering::scratch_slot(uint64_t size, const llvm::Twine &name) {
  uint64_t rounded = (size + 7) / 8 * 8;
  if (rounded > kScratchPageBytes) {
    if (error_.empty())
      error_ = "a value of " + std::to_string(size) + " bytes in probe " + probe_->name +
               " is larger than BPF scratch memory allows (" +
               std::to_string(kScratchPageBytes) + " bytes); use shorter strings";
    return b_.stack_slot(8, name);  // compilation fails anyway; keep the IR well formed
  }
  if (pages_.empty() || pages_.back().used + rounded > kScratchPageBytes)
    new_scratch_page();
  ScratchPage &page = pages_.back();
  uint64_t offset = page.used;
  page.used += rounded;
  // Computed where the page is looked up, so the address dominates every use.
  llvm::IRBuilder<> at(setup_tail_->getTerminator());
  llvm::Value *address = at.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), page.base, offset, name);
  if (auto *inst = llvm::dyn_cast<llvm::Instruction>(address))
    page.addresses.push_back(inst);
  return address;
}

// Looks up the next scratch page at the end of the setup blocks: returns 0 from the probe if
// the lookup fails (it cannot for an array), else continues into the body.
void Lowering::new_scratch_page() {
  llvm::IRBuilderBase::InsertPointGuard guard(b_);
  uint32_t index = resources_.add_scratch_page();
  llvm::Value *key = b_.stack_slot(4, "scratch_key");
  llvm::Instruction *to_body = setup_tail_->getTerminator();
  llvm::BasicBlock *body = to_body->getSuccessor(0);
  b_.SetInsertPoint(to_body);
  b_.CreateStore(b_.getInt32(index), key);
  llvm::Value *base = b_.map_lookup(resources_.scratch(module_), key);
  auto *fail = new_block("scratch_missing");
  auto *ready = new_block("scratch_ready");
  b_.CreateCondBr(b_.CreateIsNull(base), fail, ready);
  to_body->eraseFromParent();
  b_.SetInsertPoint(fail);
  b_.CreateRet(llvm::ConstantInt::get(fn_->getReturnType(), 0));
  b_.SetInsertPoint(ready);
  b_.CreateBr(body);
  setup_tail_ = ready;
  pages_.push_back({base, ready, 0, {}});
}

void Lowering::finish_scratch_pages() {
  llvm::IRBuilderBase::InsertPointGuard guard(b_);
  place_scratch_addresses();
  for (ScratchPage &page : pages_) {
    b_.SetInsertPoint(page.ready, page.ready->getFirstInsertionPt());
    b_.zero_bytes(page.base, page.used);
    resources_.note_scratch_bytes(page.used);
  }
}

// Moves each scratch slot's address (base + offset, made in the setup blocks so that it
// dominates every use) to just before its first use when all its uses are in one block, as
// most are (a map key, a printf event). Left in the setup blocks, the addresses of a probe
// with thousands of statements were each sunk by LLVM's MachineSinking one dominator-tree
// level per step down a chain of thousands of blocks: compile time quadratic in the script's
// size (10,000 statements: tens of seconds). This costs one walk over the blocks that use them.
//
//   before: scratch_ready: %key7 = gep %page, 224   ...   bb900: store 0, %key7; call(%key7)
//   after:  scratch_ready: (nothing)                      bb900: %key7 = gep %page, 224; store..
void Lowering::place_scratch_addresses() {
  // Addresses by the one block that uses them; an address used in several blocks, by a PHI, or
  // not at all stays where it is.
  std::unordered_map<llvm::BasicBlock *, std::vector<llvm::Instruction *>> by_block;
  for (ScratchPage &page : pages_)
    for (llvm::Instruction *address : page.addresses) {
      llvm::BasicBlock *only = nullptr;
      bool movable = !address->use_empty();
      for (llvm::User *user : address->users()) {
        auto *inst = llvm::dyn_cast<llvm::Instruction>(user);
        if (!inst || llvm::isa<llvm::PHINode>(inst) || (only && inst->getParent() != only)) {
          movable = false;
          break;
        }
        only = inst->getParent();
      }
      if (movable && only != address->getParent())
        by_block[only].push_back(address);
    }
  // One pass over each such block: an address goes before the first instruction using it.
  for (auto &[block, addresses] : by_block) {
    std::unordered_set<llvm::Value *> pending(addresses.begin(), addresses.end());
    for (auto it = block->begin(); it != block->end() && !pending.empty(); ++it)
      for (llvm::Value *operand : it->operands())
        if (pending.erase(operand))
          llvm::cast<llvm::Instruction>(operand)->moveBefore(&*it);
  }
}

void Lowering::return_unless(llvm::Value *cond, const char *go_name, const char *stop_name) {
  auto *go = new_block(go_name);
  auto *stop = new_block(stop_name);
  b_.CreateCondBr(cond, go, stop);
  b_.SetInsertPoint(stop);
  b_.CreateRet(b_.getInt32(0));
  b_.SetInsertPoint(go);
}

void Lowering::lower_return() {
  // A callback's 1 stops the iteration; the flag tells the loops around it to return too.
  if (in_callback_)
    b_.CreateStore(b_.getInt64(1), returned_);
  b_.CreateRet(in_callback_ ? llvm::ConstantInt::get(callback_ret_, 1) : b_.getInt32(0));
  // Anything after `return` or `exit()` lands in a block nothing branches to; LLVM drops it.
  b_.SetInsertPoint(new_block("after_return"));
}

}  // namespace rbt::codegen
