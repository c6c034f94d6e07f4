#include "partition.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace rbt::codegen {

namespace {

// The script's programs: the functions placed in a section for libbpf (helpers, callbacks and
// library code have none), in the order lowering made them.
template <typename ModuleT> auto programs(ModuleT &module) {
  std::vector<decltype(&*module.begin())> out;
  for (auto &fn : module.functions())
    if (!fn.isDeclaration() && fn.hasSection())
      out.push_back(&fn);
  return out;
}

// A function a program's code reaches through `op`: a library function it calls or a loop body
// it passes to a helper. Both are compiled with the program (library code is always inlined).
const llvm::Function *reached_function(const llvm::Value *op) {
  auto *fn = llvm::dyn_cast<llvm::Function>(op);
  return fn && !fn->isDeclaration() && !fn->hasSection() ? fn : nullptr;
}

// The back end's work for a program grows with its instructions after inlining: its own and
// those of the functions it reaches, once per use.
size_t weight(const llvm::Function &fn, std::map<const llvm::Function *, size_t> &memo) {
  if (auto it = memo.find(&fn); it != memo.end())
    return it->second;
  memo[&fn] = 0;  // a recursive call adds nothing more
  size_t n = 0;
  for (const auto &block : fn)
    for (const auto &inst : block) {
      n++;
      for (const llvm::Value *op : inst.operands())
        if (const llvm::Function *reached = reached_function(op))
          n += weight(*reached, memo);
    }
  return memo[&fn] = n;
}

bool is_map(const llvm::GlobalVariable &g) { return g.getSection() == ".maps"; }

// The maps a function uses, itself or through the functions it reaches.
void collect_maps(const llvm::Function &fn, std::set<const llvm::Function *> &seen,
                  std::set<const llvm::GlobalVariable *> &maps) {
  if (!seen.insert(&fn).second)
    return;
  for (const auto &block : fn)
    for (const auto &inst : block)
      for (const llvm::Value *op : inst.operands()) {
        if (auto *g = llvm::dyn_cast<llvm::GlobalVariable>(op); g && is_map(*g))
          maps.insert(g);
        else if (const llvm::Function *reached = reached_function(op))
          collect_maps(*reached, seen, maps);
      }
}

}  // namespace

PartitionPlan plan_partitions(const llvm::Module &module, unsigned threads) {
  auto fns = programs(module);
  std::vector<size_t> work(fns.size());
  std::map<const llvm::Function *, size_t> memo;
  for (size_t i = 0; i < fns.size(); i++)
    work[i] = weight(*fns[i], memo);
  size_t total = std::accumulate(work.begin(), work.end(), size_t{0});

  PartitionPlan plan;
  plan.part_of.assign(fns.size(), 0);
  size_t by_size = total / kMinPartitionInstructions;
  plan.parts = static_cast<unsigned>(
      std::max<size_t>(1, std::min({size_t{threads}, size_t{kMaxPartitions}, fns.size(), by_size})));
  if (plan.parts == 1)
    return plan;

  std::vector<size_t> order(fns.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return work[a] > work[b]; });
  std::vector<size_t> load(plan.parts, 0);
  for (size_t i : order) {
    unsigned lightest = static_cast<unsigned>(
        std::min_element(load.begin(), load.end()) - load.begin());
    plan.part_of[i] = lightest;
    load[lightest] += work[i];
  }
  return plan;
}

std::vector<llvm::GlobalValue *> keep_partition(llvm::Module &module, const PartitionPlan &plan,
                                                unsigned part) {
  std::vector<llvm::GlobalValue *> pinned;
  if (plan.parts == 1) {  // one object: every map, used or not
    for (auto &g : module.globals())
      if (is_map(g))
        pinned.push_back(&g);
    return pinned;
  }
  auto fns = programs(module);
  std::set<const llvm::Function *> seen;
  std::set<const llvm::GlobalVariable *> used_by_programs;
  for (llvm::Function *fn : fns)
    collect_maps(*fn, seen, used_by_programs);
  for (size_t i = 0; i < fns.size(); i++)
    if (plan.part_of.at(i) != part)
      fns[i]->eraseFromParent();
  for (auto &g : module.globals()) {
    if (g.isDeclaration() || !g.hasExternalLinkage())
      continue;
    bool unused_map = is_map(g) && !used_by_programs.count(&g);
    if (is_map(g) && !(unused_map && part == 0)) {
      // Made static until optimize()'s globaldce has dropped the maps only other parts use;
      // share_partition_maps() publishes the rest.
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
      continue;
    }
    g.setLinkage(llvm::GlobalValue::WeakAnyLinkage);
    if (unused_map)  // no program uses it, but libbpf and the runtime expect it: part 0 keeps it
      pinned.push_back(&g);
  }
  return pinned;
}

void share_partition_maps(llvm::Module &module, const PartitionPlan &plan) {
  if (plan.parts == 1)
    return;
  for (auto &g : module.globals())
    if (is_map(g) && g.hasInternalLinkage())
      g.setLinkage(llvm::GlobalValue::WeakAnyLinkage);
}

}  // namespace rbt::codegen
