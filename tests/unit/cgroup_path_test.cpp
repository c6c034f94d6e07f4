#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cgroup_path.h"

using namespace rbt;
namespace fs = std::filesystem;

namespace {

uint64_t inode(const fs::path &p) {
  struct stat st;
  EXPECT_EQ(stat(p.c_str(), &st), 0);
  return st.st_ino;
}

// Directories standing for cgroup hierarchies (a cgroup's id is its directory's inode number),
// and a mounts file naming them: cgroup2 at `v2`, cgroup v1 at `memory` and `cpu`, and `memory`
// once more through links, as v1 `aa` and as a second cgroup2 (so that one id is found in
// several hierarchies, as the ids of real hierarchies' roots are).
class CgroupPath : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("rbt-cgroup-test-" + std::to_string(getpid()));
    fs::create_directories(root_ / "v2" / "user.slice" / "session 1.scope");
    fs::create_directories(root_ / "memory" / "job");
    fs::create_directories(root_ / "cpu");
    std::ofstream(root_ / "v2" / "user.slice" / "cgroup.procs") << "1\n";
    fs::create_directory_symlink(root_ / "memory", root_ / "aa");
    fs::create_directory_symlink(root_ / "memory", root_ / "v2b");
    std::ofstream(root_ / "mounts")
        << "proc /proc proc rw 0 0\n"
        << "cgroup " << (root_ / "memory").string() << " cgroup rw,memory 0 0\n"
        << "cgroup " << (root_ / "cpu").string() << " cgroup rw,cpu 0 0\n"
        << "cgroup2 " << (root_ / "v2").string() << " cgroup2 rw 0 0\n"
        << "cgroup " << (root_ / "aa").string() << " cgroup rw,memory 0 0\n"
        << "cgroup2 " << (root_ / "v2b").string() << " cgroup2 rw 0 0\n";
    mounts_ = (root_ / "mounts").string();
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
  std::string mounts_;
};

}  // namespace

TEST_F(CgroupPath, a_cgroup2_id_prints_as_unified_and_its_path) {
  uint64_t id = inode(root_ / "v2" / "user.slice" / "session 1.scope");
  EXPECT_EQ(runtime::cgroup_path_text(id, "*", mounts_), "unified:/user.slice/session 1.scope");
  // Remembered paths are checked again before they are reused.
  EXPECT_EQ(runtime::cgroup_path_text(id, "*", mounts_), "unified:/user.slice/session 1.scope");
}

TEST_F(CgroupPath, every_matching_hierarchy_prints_v2_first_then_v1_by_name) {
  uint64_t job = inode(root_ / "memory" / "job");
  EXPECT_EQ(runtime::cgroup_path_text(job, "*", mounts_), "unified:/job,aa:/job,memory:/job");
  EXPECT_EQ(runtime::cgroup_path_text(job, "mem*", mounts_), "memory:/job");
  // A hierarchy whose root has the id prints "/".
  EXPECT_EQ(runtime::cgroup_path_text(inode(root_ / "cpu"), "*", mounts_), "cpu:/");
}

TEST_F(CgroupPath, the_filter_is_a_wildcard_over_hierarchy_names) {
  uint64_t id = inode(root_ / "v2" / "user.slice");
  EXPECT_EQ(runtime::cgroup_path_text(id, "unified", mounts_), "unified:/user.slice");
  EXPECT_EQ(runtime::cgroup_path_text(id, "uni*", mounts_), "unified:/user.slice");
  EXPECT_EQ(runtime::cgroup_path_text(id, "memory", mounts_), "");
}

TEST_F(CgroupPath, an_unknown_id_or_a_control_file_prints_empty) {
  EXPECT_EQ(runtime::cgroup_path_text(inode(root_ / "v2" / "user.slice" / "cgroup.procs"), "*",
                                      mounts_),
            "");
  EXPECT_EQ(runtime::cgroup_path_text(~0ull, "*", mounts_), "");
  EXPECT_EQ(runtime::cgroup_path_text(1, "*", (root_ / "no-such-file").string()), "");
}
