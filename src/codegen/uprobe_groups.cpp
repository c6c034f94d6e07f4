#include "uprobe_groups.h"

namespace rbt::codegen {

namespace {
bool groupable(const ProbeDesc &d) {
  // A function by name only: an address or `sym+off` probe names one place on purpose.
  return (d.kind == ProbeKind::Uprobe || d.kind == ProbeKind::Uretprobe) && !d.func.empty() &&
         d.offset == 0;
}
bool same_group(const ProbeDesc &a, const ProbeDesc &b) {
  return a.kind == b.kind && a.target == b.target && a.in_process_root == b.in_process_root;
}
}  // namespace

std::vector<std::vector<ProbeDesc>> uprobe_groups(const std::vector<ProbeDesc> &descs,
                                                  bool kernel_has_uprobe_multi) {
  std::vector<std::vector<ProbeDesc>> out;
  for (const ProbeDesc &d : descs) {
    if (kernel_has_uprobe_multi && !out.empty() && groupable(d) &&
        groupable(out.back().front()) && same_group(out.back().front(), d) &&
        out.back().size() < kUprobeMultiMaxGroup) {
      out.back().push_back(d);
      continue;
    }
    out.push_back({d});
  }
  return out;
}

}  // namespace rbt::codegen
