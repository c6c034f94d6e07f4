// Issue 15 §4 and §5: scripts that crashed, hung or compiled to nonsense are caret errors,
// and the runtime's file reads cannot be made to block.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <string>

#include "cat_file.h"
#include "format_spec.h"
#include "script_text.h"
#include "symbols/elf_file.h"
#include "symbols/regular_file.h"
#include "test_helpers.h"

using rbt::test::Checked;

namespace {

std::string first_error(const Checked &c) {
  return c.diags.diagnostics().empty() ? "" : c.diags.diagnostics()[0].message;
}

std::string nested(const std::string &open, const std::string &inner, const std::string &close,
                   int n) {
  std::string s;
  s.reserve((open.size() + close.size()) * n + inner.size());
  for (int i = 0; i < n; i++)
    s += open;
  s += inner;
  for (int i = 0; i < n; i++)
    s += close;
  return s;
}

// A FIFO in a fresh temporary directory (removed by the destructor).
struct Fifo {
  Fifo() {
    char tmpl[] = "/tmp/rbt-fifo-XXXXXX";
    dir = mkdtemp(tmpl);
    path = dir + "/fifo";
    ok = mkfifo(path.c_str(), 0600) == 0;
  }
  ~Fifo() {
    unlink(path.c_str());
    rmdir(dir.c_str());
  }
  std::string dir, path;
  bool ok = false;
};

}  // namespace

// 30,000 nested `if` overflowed the stack in the type checker (a segfault, no message).
TEST(Hardening, thirty_thousand_nested_ifs_are_an_error) {
  Checked c("BEGIN " + nested("{ if (1) ", "{ @x = 1; }", " }", 30000));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(first_error(c), "statements nest too deeply (more than 1000 levels)");
}

TEST(Hardening, a_hundred_thousand_nested_blocks_are_an_error) {
  Checked c("BEGIN " + nested("{ ", "@x = 1;", " }", 100000));
  EXPECT_EQ(first_error(c), "statements nest too deeply (more than 1000 levels)");
}

TEST(Hardening, a_hundred_thousand_additions_are_an_error) {
  std::string sum = "BEGIN { @x = 1";
  for (int i = 0; i < 100000; i++)
    sum += "+1";
  Checked c(sum + "; }");
  EXPECT_EQ(first_error(c), "expression nests too deeply (more than 1000 levels)");
}

TEST(Hardening, nesting_up_to_the_limit_is_accepted) {
  Checked ifs("BEGIN " + nested("{ if (1) ", "{ @x = 1; }", " }", 990));
  EXPECT_TRUE(ifs.ok) << first_error(ifs);
  Checked blocks("BEGIN " + nested("{ ", "@x = 1;", " }", 990));
  EXPECT_TRUE(blocks.ok) << first_error(blocks);
}

// The error points at the construct that crosses the limit.
TEST(Hardening, the_nesting_error_has_a_caret) {
  Checked c("BEGIN " + nested("{ if (1) ", "{ @x = 1; }", " }", 1500));
  EXPECT_NE(c.errors().find("test.rbt:1:"), std::string::npos) << c.errors();
  EXPECT_NE(c.errors().find("^~"), std::string::npos) << c.errors();
}

// 10,000 nested `while` took minutes; the parser now stops at the limit, at once.
TEST(Hardening, ten_thousand_nested_whiles_are_a_quick_error) {
  Checked c("BEGIN " + nested("{ while (1) ", "{ @x = 1; }", " }", 10000));
  EXPECT_EQ(first_error(c), "statements nest too deeply (more than 1000 levels)");
}

// LLVM's loop passes are quadratic in loop depth: 800 nested while took 50 s to compile.
TEST(Hardening, loops_nest_at_most_a_hundred_deep) {
  Checked deep("BEGIN " + nested("{ while (@x < 5) ", "{ @x = 1; }", " }", 101));
  EXPECT_EQ(first_error(deep), "loops nest too deeply (more than 100 levels)");
  EXPECT_EQ(deep.diags.diagnostics()[0].range.col, 9u + 100 * 17);  // the 101st while
  Checked ok("BEGIN " + nested("{ while (@x < 5) ", "{ @x = 1; }", " }", 100));
  EXPECT_TRUE(ok.ok) << first_error(ok);
}

// unroll(100) four deep is 10^8 copies of the body: minutes of codegen before.
TEST(Hardening, four_nested_unroll_100_are_an_error) {
  Checked c("BEGIN { unroll(100) { unroll(100) { unroll(100) { unroll(100) { @x = 1; } } } } }");
  EXPECT_EQ(first_error(c), "unroll makes this probe more than 100000 statements long; unroll "
                            "fewer times or use a loop (while, for)");
  EXPECT_EQ(c.diags.diagnostics()[0].range.col, 9u);  // the outermost unroll
}

TEST(Hardening, unroll_within_the_limit_is_accepted) {
  Checked c("BEGIN { unroll(100) { unroll(100) { @x = 1; @y = 2; } } }");
  EXPECT_TRUE(c.ok) << first_error(c);
}

// printf's width went to C's printf as an int: std::length_error, an abort.
TEST(Hardening, huge_printf_width_is_an_error) {
  Checked c("BEGIN { printf(\"%99999999999999999999d\\n\", 1); }");
  EXPECT_EQ(first_error(c),
            "invalid printf format: width 99999999999999999999 is too large (at most 65535)");
  EXPECT_EQ(first_error(Checked("BEGIN { printf(\"%.70000d\\n\", 1); }")),
            "invalid printf format: precision 70000 is too large (at most 65535)");
  EXPECT_TRUE(Checked("BEGIN { printf(\"%-65535d|%.3s\\n\", 1, \"abcd\"); }").ok);
}

TEST(Hardening, format_parser_bounds_widths) {
  EXPECT_EQ(rbt::parse_format("%65536d").error, "width 65536 is too large (at most 65535)");
  EXPECT_EQ(rbt::parse_format("%10.3d").error, "");
}

// max - min overflowed int64 and passed the bucket check: std::length_error, an abort.
TEST(Hardening, lhist_with_int64_min_is_an_error) {
  Checked c("BEGIN { @ = lhist(1, -9223372036854775808, 0, 1); }");
  EXPECT_EQ(first_error(c), "lhist() would have more than 1000 buckets; use a larger step");
  EXPECT_EQ(first_error(Checked("BEGIN { @ = lhist(1, -9223372036854775807, 9223372036854775807, 1); }")),
            "lhist() would have more than 1000 buckets; use a larger step");
}

// Constants that BPF silently computes as 0, 1 and 0.
TEST(Hardening, division_and_shift_by_bad_constants_are_errors) {
  EXPECT_EQ(first_error(Checked("BEGIN { @ = 1/0; }")), "division by zero");
  EXPECT_EQ(first_error(Checked("BEGIN { @ = 1%0; }")), "modulo by zero");
  EXPECT_EQ(first_error(Checked("BEGIN { @ = pid / 0; }")), "division by zero");
  EXPECT_EQ(first_error(Checked("BEGIN { @ = 1<<64; }")),
            "shift by 64 is out of range (a 64-bit value shifts by 0 to 63)");
  EXPECT_EQ(first_error(Checked("BEGIN { @ = 1>>-1; }")),
            "shift by -1 is out of range (a 64-bit value shifts by 0 to 63)");
  EXPECT_TRUE(Checked("BEGIN { @ = (1<<63) + 7/2 + 7%2 + pid/1; }").ok);
}

TEST(Hardening, division_by_zero_has_a_caret_on_the_operation) {
  Checked c("BEGIN { @ = 1/0; }");
  ASSERT_FALSE(c.diags.diagnostics().empty());
  EXPECT_EQ(c.diags.diagnostics()[0].range.col, 13u);
  EXPECT_NE(c.errors().find("^~~"), std::string::npos) << c.errors();
}

// `rbt /dev/zero` read forever.
TEST(Hardening, script_text_is_bounded) {
  std::istringstream small("BEGIN { exit(); }");
  EXPECT_EQ(rbt::read_script_text(small).value_or("?"), "BEGIN { exit(); }");
  std::istringstream big(std::string(rbt::kMaxScriptBytes + 1, ' '));
  EXPECT_FALSE(rbt::read_script_text(big));
  std::istringstream exact(std::string(rbt::kMaxScriptBytes, ' '));
  EXPECT_TRUE(rbt::read_script_text(exact));
}

// cat() of a FIFO blocked in open() forever (nobody writes to it).
TEST(Hardening, cat_of_a_fifo_returns_at_once) {
  Fifo f;
  ASSERT_TRUE(f.ok);
  auto r = rbt::runtime::cat_file(f.path);
  EXPECT_EQ(r.text, "");
  EXPECT_FALSE(r.truncated);
}

// cat("/dev/zero") read for 27 s before printing anything.
TEST(Hardening, cat_of_dev_zero_is_bounded) {
  auto r = rbt::runtime::cat_file("/dev/zero");
  EXPECT_EQ(r.text.size(), rbt::runtime::kMaxCatBytes);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(rbt::runtime::cat_file("/tmp").error, strerror(EISDIR));
}

// Symbolization opened a FIFO put in place of a traced binary and blocked forever.
TEST(Hardening, binaries_are_opened_only_if_regular_files) {
  Fifo f;
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(rbt::runtime::open_regular_file(f.path), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(rbt::runtime::open_regular_file("/dev/zero"), -1);
  int fd = rbt::runtime::open_regular_file("/proc/self/exe");
  EXPECT_GE(fd, 0);
  if (fd >= 0)
    close(fd);
}

TEST(Hardening, an_elf_file_that_is_a_fifo_is_refused_not_waited_for) {
  Fifo f;
  ASSERT_TRUE(f.ok);
  auto elf = rbt::runtime::ElfFile::open(f.path);
  ASSERT_FALSE(elf);
  EXPECT_EQ(elf.error().why, "not a regular file (a FIFO, device or socket)");
}
