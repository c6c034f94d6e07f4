#pragma once
// Compiling a script's programs on several threads. LLVM spends nearly all of a compile in
// the back end, function by function, but one LLVMContext is not thread-safe. So every thread
// lowers the whole script into a context of its own (lowering is ~2% of the work and
// deterministic: each thread gets the same maps, event ids and manifest), keeps only its part
// of the programs, and optimizes and emits those; link_objects.h joins the parts.

#include <llvm/IR/Module.h>

#include <vector>

namespace rbt::codegen {

struct PartitionPlan {
  unsigned parts = 1;
  std::vector<unsigned> part_of;  // the part of each program, in the module's order
};

// Below this many IR instructions a part costs more (its own lowering, thread and link) than
// it saves: about 5 ms of back-end time.
constexpr size_t kMinPartitionInstructions = 300;

// More parts than this gain little: every part lowers the whole script, and the linker's work
// grows with them.
constexpr unsigned kMaxPartitions = 8;

// Scripts with at least this many programs start their part threads before lowering (see
// compile()); fewer programs usually make one part.
constexpr size_t kEarlyThreadPrograms = 8;

// How many parts (at most `threads` and kMaxPartitions, at most one per program, none smaller than
// kMinPartitionInstructions) and which program goes where: largest program first, each to
// the part with the least work so far.
PartitionPlan plan_partitions(const llvm::Module &module, unsigned threads);

// Cuts `module` down to part `part` of `plan`: drops the other parts' programs (their helpers
// go with them at the next globaldce), and makes every definition that all parts carry
// (counters) weak, so the linker keeps one of the identical copies. A part keeps only the maps
// its programs use (LLVM's BTF writer spends time per function for every map in the module),
// except that part 0 also keeps those no program uses. Returns the globals to pin in
// llvm.compiler.used: every map of a one-part plan, part 0's unused maps otherwise.
std::vector<llvm::GlobalValue *> keep_partition(llvm::Module &module, const PartitionPlan &plan,
                                                unsigned part);

// After optimization: the maps a part kept become weak definitions the linker can merge.
void share_partition_maps(llvm::Module &module, const PartitionPlan &plan);

}  // namespace rbt::codegen
