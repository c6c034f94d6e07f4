#include <gtest/gtest.h>

#include "format_spec.h"
#include "output/printf.h"

using rbt::parse_format;
using rbt::Type;

TEST(Format, splits_literals_and_conversions) {
  auto f = parse_format("a %d b %-5s %% c %llx\n");
  ASSERT_EQ(f.error, "");
  ASSERT_EQ(f.conversions(), 3u);
  EXPECT_EQ(f.pieces[0].literal, "a ");
  EXPECT_EQ(f.pieces[1].spec, "%-5s");
  EXPECT_EQ(f.pieces[2].literal, " % c ");
  EXPECT_EQ(f.pieces[2].spec, "%x");
  EXPECT_EQ(f.pieces[3].literal, "\n");
}

TEST(Format, rejects_unknown_and_incomplete_conversions) {
  EXPECT_EQ(parse_format("%q").error, "unknown conversion '%q'");
  EXPECT_EQ(parse_format("abc %").error, "incomplete conversion at the end of the format");
}

TEST(Format, formats_payload_like_c_printf) {
  Type args = Type::tuple({Type::integer(64, true), Type::string(4), Type::integer(64, false)});
  std::vector<uint8_t> payload(args.size);
  int64_t a = -5;
  uint64_t c = 255;
  memcpy(payload.data() + args.offsets[0], &a, 8);
  memcpy(payload.data() + args.offsets[1], "abc", 4);
  memcpy(payload.data() + args.offsets[2], &c, 8);
  auto f = parse_format("[%4d] [%-5s] [%x] [%05u]\n");
  Type four = Type::tuple({args.elems[0], args.elems[1], args.elems[2], args.elems[2]});
  std::vector<uint8_t> p4(four.size);
  memcpy(p4.data() + four.offsets[0], &a, 8);
  memcpy(p4.data() + four.offsets[1], "abc", 4);
  memcpy(p4.data() + four.offsets[2], &c, 8);
  memcpy(p4.data() + four.offsets[3], &c, 8);
  EXPECT_EQ(rbt::output::format_printf(f, four, p4.data()), "[  -5] [abc  ] [ff] [00255]\n");
}
