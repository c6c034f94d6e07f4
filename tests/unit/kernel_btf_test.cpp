// KernelBtf (src/runtime/kernel_btf.h) against libbpf's own reading of the same kernel BTF: the
// in-place index must agree with libbpf type for type, and a damaged file must be an error.
#include <bpf/btf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "kernel_btf.h"

using rbt::runtime::KernelBtf;

namespace {

const char *kVmlinux = "/sys/kernel/btf/vmlinux";

std::string read_all(const char *path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string write_temp(const std::string &bytes) {
  std::string path = testing::TempDir() + "rbt-kernel-btf-" + std::to_string(getpid());
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace

TEST(KernelBtf, agrees_with_libbpf_on_the_running_kernel) {
  auto opened = KernelBtf::open();
  ASSERT_TRUE(opened) << opened.error().why;
  const KernelBtf &kb = **opened;
  btf *lib = btf__load_vmlinux_btf();
  ASSERT_NE(lib, nullptr);
  ASSERT_EQ(kb.count() + 1, btf__type_cnt(lib));  // libbpf counts void, id 0
  for (const char *name : {"task_struct", "pt_regs", "mm_struct", "thread_struct"}) {
    int mine = kb.find(name, BTF_KIND_STRUCT);
    EXPECT_GT(mine, 0) << name;
    EXPECT_EQ(mine, btf__find_by_name_kind(lib, name, BTF_KIND_STRUCT)) << name;
  }
  EXPECT_EQ(kb.find("no_such_struct_in_any_kernel", BTF_KIND_STRUCT), -1);
  // Every type's record, name and resolved target, as libbpf sees them.
  for (__u32 id = 1; id <= kb.count(); id++) {
    const btf_type *mine = kb.type(id), *theirs = btf__type_by_id(lib, id);
    ASSERT_NE(mine, nullptr);
    ASSERT_EQ(mine->info, theirs->info) << id;
    ASSERT_STREQ(kb.name(mine->name_off), btf__name_by_offset(lib, theirs->name_off)) << id;
    if (btf_is_typedef(mine) || btf_is_const(mine) || btf_is_volatile(mine)) {
      // libbpf answers -EINVAL for `const void` and for a declaration only (FWD); this gives
      // void (0) and the FWD, which its callers skip alike.
      int target = btf__resolve_type(lib, id), mine = kb.resolve(id);
      if (target >= 0)
        ASSERT_EQ(mine, target) << id;
      else
        ASSERT_TRUE(mine == 0 || btf_is_fwd(kb.type(static_cast<__u32>(mine)))) << id;
    }
  }
  EXPECT_EQ(kb.type(0), nullptr);
  EXPECT_EQ(kb.type(kb.count() + 1), nullptr);
  btf__free(lib);
}

TEST(KernelBtf, a_damaged_file_is_an_error) {
  std::string bytes = read_all(kVmlinux);
  ASSERT_GT(bytes.size(), 1000u);
  // Cut in the middle of the type section: a record runs past the end.
  std::string path = write_temp(bytes.substr(0, bytes.size() / 3));
  auto cut = KernelBtf::open(path);
  EXPECT_FALSE(cut);
  // Not BTF at all.
  std::string junk(4096, 'x');
  auto wrong = KernelBtf::open(write_temp(junk));
  EXPECT_FALSE(wrong);
  EXPECT_NE(wrong ? std::string() : wrong.error().why, "");
  auto missing = KernelBtf::open("/nonexistent/vmlinux");
  EXPECT_FALSE(missing);
  unlink(path.c_str());
}
