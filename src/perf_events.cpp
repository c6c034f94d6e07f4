#include "perf_events.h"

#include <linux/perf_event.h>

namespace rbt {

static const PerfEventInfo kEvents[] = {
    {"cpu-clock", "cpu", false, PERF_COUNT_SW_CPU_CLOCK, 1000000},
    {"task-clock", nullptr, false, PERF_COUNT_SW_TASK_CLOCK, 1000000},
    {"page-faults", "faults", false, PERF_COUNT_SW_PAGE_FAULTS, 100},
    {"context-switches", "cs", false, PERF_COUNT_SW_CONTEXT_SWITCHES, 1000},
    {"cpu-migrations", nullptr, false, PERF_COUNT_SW_CPU_MIGRATIONS, 1},
    {"minor-faults", nullptr, false, PERF_COUNT_SW_PAGE_FAULTS_MIN, 100},
    {"major-faults", nullptr, false, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1},
    {"alignment-faults", nullptr, false, PERF_COUNT_SW_ALIGNMENT_FAULTS, 1},
    {"emulation-faults", nullptr, false, PERF_COUNT_SW_EMULATION_FAULTS, 1},
    {"dummy", nullptr, false, PERF_COUNT_SW_DUMMY, 1},
    {"bpf-output", nullptr, false, PERF_COUNT_SW_BPF_OUTPUT, 1},
    {"cpu-cycles", "cycles", true, PERF_COUNT_HW_CPU_CYCLES, 1000000},
    {"instructions", nullptr, true, PERF_COUNT_HW_INSTRUCTIONS, 1000000},
    {"cache-references", nullptr, true, PERF_COUNT_HW_CACHE_REFERENCES, 1000000},
    {"cache-misses", nullptr, true, PERF_COUNT_HW_CACHE_MISSES, 1000000},
    {"branch-instructions", "branches", true, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 100000},
    {"branch-misses", nullptr, true, PERF_COUNT_HW_BRANCH_MISSES, 100000},
    {"bus-cycles", nullptr, true, PERF_COUNT_HW_BUS_CYCLES, 100000},
    {"frontend-stalls", nullptr, true, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 1000000},
    {"backend-stalls", nullptr, true, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 1000000},
    {"ref-cycles", nullptr, true, PERF_COUNT_HW_REF_CPU_CYCLES, 1000000},
};

const PerfEventInfo *find_perf_event(std::string_view name, bool hardware) {
  for (auto &e : kEvents)
    if (e.hardware == hardware && (name == e.name || (e.alias && name == e.alias)))
      return &e;
  return nullptr;
}

std::span<const PerfEventInfo> perf_events() { return kEvents; }

}  // namespace rbt
