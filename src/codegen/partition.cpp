#include "partition.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace rbt::codegen {

namespace {

// The script's programs: the functions placed in a section for libbpf (helpers, callbacks and
// library code have none), in the order lowering made them.
std::vector<llvm::Function *> programs(llvm::Module &module) {
  std::vector<llvm::Function *> out;
  for (auto &fn : module.functions())
    if (!fn.isDeclaration() && fn.hasSection())
      out.push_back(&fn);
  return out;
}

// The back end's work for a program grows with its instructions after inlining: its own, and
// those of the library functions it calls and the loop bodies it passes to helpers, once per
// use (library code is always inlined; a callback is compiled with its caller's part).
size_t weight(const llvm::Function &fn, std::map<const llvm::Function *, size_t> &memo) {
  if (auto it = memo.find(&fn); it != memo.end())
    return it->second;
  memo[&fn] = 0;  // a recursive call adds nothing more
  size_t n = 0;
  for (const auto &block : fn)
    for (const auto &inst : block) {
      n++;
      for (const llvm::Value *op : inst.operands())
        if (auto *callee = llvm::dyn_cast<llvm::Function>(op);
            callee && !callee->isDeclaration() && !callee->hasSection())
          n += weight(*callee, memo);
    }
  return memo[&fn] = n;
}

}  // namespace

PartitionPlan plan_partitions(const llvm::Module &module, unsigned threads) {
  auto fns = programs(const_cast<llvm::Module &>(module));
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

void keep_partition(llvm::Module &module, const PartitionPlan &plan, unsigned part) {
  if (plan.parts == 1)
    return;
  auto fns = programs(module);
  for (size_t i = 0; i < fns.size(); i++)
    if (plan.part_of.at(i) != part)
      fns[i]->eraseFromParent();
  for (auto &g : module.globals())
    if (!g.isDeclaration() && g.hasExternalLinkage())
      g.setLinkage(llvm::GlobalValue::WeakAnyLinkage);
}

}  // namespace rbt::codegen
