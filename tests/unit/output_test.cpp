#include <gtest/gtest.h>

#include "output/histogram.h"
#include "output/value_format.h"

using namespace rbt;

TEST(Histogram, log2_labels_use_binary_suffixes) {
  EXPECT_EQ(output::hist_bucket_label(0), "(..., 0)");
  EXPECT_EQ(output::hist_bucket_label(1), "[0]");
  EXPECT_EQ(output::hist_bucket_label(2), "[1]");
  EXPECT_EQ(output::hist_bucket_label(3), "[2, 4)");
  EXPECT_EQ(output::hist_bucket_label(11), "[512, 1K)");
  EXPECT_EQ(output::hist_bucket_label(12), "[1K, 2K)");
  EXPECT_EQ(output::hist_bucket_label(33), "[2G, 4G)");
  EXPECT_EQ(output::hist_bucket_label(65), "[8E, 16E)");
}

TEST(Histogram, rows_span_first_to_last_nonempty_bucket) {
  std::vector<uint64_t> b(kHistBuckets);
  b[0] = 1;
  b[3] = 2;
  b[4] = 1;
  b[6] = 1;
  std::string expected =
      "(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
      "[0]                    0 |                                                    |\n"
      "[1]                    0 |                                                    |\n"
      "[2, 4)                 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
      "[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
      "[8, 16)                0 |                                                    |\n"
      "[16, 32)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n";
  EXPECT_EQ(output::format_histogram(Type::aggregation(TypeKind::Hist), b), expected);
}

TEST(Histogram, linear_labels) {
  Type t = Type::lhist(0, 10, 2);
  EXPECT_EQ(output::lhist_bucket_label(t, 0, 7), "(..., 0)");
  EXPECT_EQ(output::lhist_bucket_label(t, 3, 7), "[4, 6)");
  EXPECT_EQ(output::lhist_bucket_label(t, 6, 7), "[10, ...)");
}

TEST(ValueFormat, tuples_strings_and_signedness) {
  Type t = Type::tuple({Type::integer(64, true), Type::string(4),
                        Type::tuple({Type::integer(64, false), Type::integer(64, false)})});
  std::vector<uint8_t> bytes(t.size);
  int64_t one = -1;
  uint64_t three = 3, four = 4;
  memcpy(bytes.data() + t.offsets[0], &one, 8);
  memcpy(bytes.data() + t.offsets[1], "two", 4);
  memcpy(bytes.data() + t.offsets[2], &three, 8);
  memcpy(bytes.data() + t.offsets[2] + 8, &four, 8);
  EXPECT_EQ(output::format_value(t, bytes.data()), "(-1, two, (3, 4))");
}
