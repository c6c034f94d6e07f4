#include <gtest/gtest.h>

#include "output/histogram.h"
#include "output/json.h"
#include "output/timestamp.h"
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
  // hist(n, 2): four buckets per power of two; 2 and 3 (below 2^2) get one bucket each.
  EXPECT_EQ(output::hist_bucket_label(2 + (1 << 2) + 2, 2), "[3]");
  EXPECT_FALSE(output::hist_bucket_range(2 + (1 << 2) + 1, 2).exists);
  EXPECT_EQ(output::hist_bucket_label(2 + (3 << 2) + 1, 2), "[10, 12)");
  EXPECT_EQ(output::hist_bucket_label(2 + (10 << 2) + 1, 2), "[1280, 1536)");
  EXPECT_EQ(output::hist_bucket_label(2 + (63 << 2) + 3, 2), "[14E, 16E)");
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

TEST(ValueFormat, arrays_are_unspaced_and_buffers_hex_escaped) {
  Type arr = Type::array(Type::integer(8, false), 4);
  const uint8_t ip[] = {127, 0, 0, 1};
  EXPECT_EQ(output::format_value(arr, ip), "[127,0,0,1]");
  Type buf = Type::buffer(6);
  const uint8_t b[] = {3, 0, 0, 0, 'o', '\n', 0x80, 'x', 'x', 'x'};  // only 3 bytes count
  EXPECT_EQ(output::format_value(buf, b), "o\\x0a\\x80");
}

TEST(ValueFormat, inet_addresses) {
  uint8_t v4[24] = {2};  // AF_INET
  v4[8] = 10, v4[11] = 1;
  EXPECT_EQ(output::format_value(Type::inet(), v4), "10.0.0.1");
  uint8_t v6[24] = {10};  // AF_INET6
  v6[23] = 1;
  EXPECT_EQ(output::format_value(Type::inet(), v6), "::1");
  uint8_t unknown[24] = {7};
  EXPECT_EQ(output::format_value(Type::inet(), unknown), "");
}

TEST(Timestamp, fraction_extensions_and_percent_escapes) {
  EXPECT_EQ(output::format_timestamp("%%f|%%", 1), "%f|%");
  std::string t = output::format_timestamp("%f.%l.%k", 1);
  ASSERT_EQ(t.size(), 6u + 1 + 3 + 1 + 9) << t;
  EXPECT_EQ(t.substr(0, 3), t.substr(7, 3));   // milliseconds begin the microseconds
  EXPECT_EQ(t.substr(0, 6), t.substr(11, 6));  // and the nanoseconds
  EXPECT_EQ(output::format_timestamp("", 1), "(?)");  // strftime's empty result, as bpftrace
}

TEST(Json, keys_values_and_numbers_as_bpftrace_prints_them) {
  Type key = Type::tuple({Type::integer(64, true), Type::string(4), Type::tuple({Type::integer(64, true)})});
  std::vector<uint8_t> k(key.size);
  int64_t one = 1, three = 3;
  memcpy(k.data() + key.offsets[0], &one, 8);
  memcpy(k.data() + key.offsets[1], "a b", 4);
  memcpy(k.data() + key.offsets[2], &three, 8);
  EXPECT_EQ(output::json_key(key, k.data()), "1,ab,(3)");
  EXPECT_EQ(output::json_value(key, k.data()), "[1,\"a b\",[3]]");
  EXPECT_EQ(output::json_number("9007199254740992"), "9007199254740992");
  EXPECT_EQ(output::json_number("9007199254740993"), "\"9007199254740993\"");
  EXPECT_EQ(output::json_number("-9223372036854775807"), "\"-9223372036854775807\"");
  EXPECT_EQ(output::json_string("\x01\x7f\t"), "\"\\u0001\x7f\\t\"");
  Type buf = Type::buffer(2);
  const uint8_t b[] = {2, 0, 0, 0, 'a', 0xff};
  EXPECT_EQ(output::json_value(buf, b), "[97,-1]");
}
