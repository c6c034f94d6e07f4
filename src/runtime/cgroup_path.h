#pragma once
// The text of cgroup_path(id[, filter]) values, resolved when they are printed, as bpftrace:
// the id is looked up as an inode number under every mounted cgroup hierarchy whose name
// matches the filter ("unified" for cgroup2 wherever it is mounted, the mount directory's name
// for a v1 hierarchy), and each hit prints as "name:/path", cgroup2 first, then v1 by name,
// joined by commas: "unified:/user.slice/user-1000.slice,memory:/user.slice".

#include <cstdint>
#include <string>

namespace rbt::runtime {

// `mounts` is a file in /proc/mounts' format (a parameter so tests can give their own tree).
// An id found nowhere prints as an empty string.
std::string cgroup_path_text(uint64_t cgroup_id, const std::string &filter = "*",
                             const std::string &mounts = "/proc/mounts");

}  // namespace rbt::runtime
