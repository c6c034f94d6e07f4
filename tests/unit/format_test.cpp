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

TEST(Format, buffer_conversions_take_their_modifier_after_the_letter) {
  auto f = parse_format("%r %rx %rh %-6rx|");
  ASSERT_EQ(f.error, "");
  ASSERT_EQ(f.conversions(), 4u);
  EXPECT_EQ(f.pieces[0].buffer_mode, 0);
  EXPECT_EQ(f.pieces[1].buffer_mode, 'x');
  EXPECT_EQ(f.pieces[2].buffer_mode, 'h');
  EXPECT_EQ(f.pieces[3].spec, "%-6r");
  EXPECT_EQ(f.pieces[4].literal, "|");
  EXPECT_EQ(rbt::conversion_name(f.pieces[1]), "%rx");
}

TEST(Format, buffers_print_as_bpftrace_hex) {
  Type buf = Type::buffer(4);
  Type args = Type::tuple({buf, buf, buf, buf});
  std::vector<uint8_t> payload(args.size);
  const uint8_t bytes[] = {4, 0, 0, 0, 'A', 0x00, 0xff, ' '};  // length 4, then the bytes
  for (size_t i = 0; i < 4; i++)
    memcpy(payload.data() + args.offsets[i], bytes, sizeof(bytes));
  auto f = parse_format("%r|%rx|%rh|%6rh");
  EXPECT_EQ(rbt::output::format_printf(f, args, payload.data()),
            "A\\x00\\xff |\\x41\\x00\\xff\\x20|41 00 ff 20|41 00 ff 20");
}

// As C's printf and bpftrace: no length modifier is an int, hh a char, h a short, l/ll/j 64 bits.
TEST(Format, length_modifiers_cut_integers_as_c_does) {
  Type args = Type::tuple(std::vector<Type>(6, Type::integer(64, true)));
  std::vector<uint8_t> payload(args.size);
  int64_t x = 0x12345678abcdef, big = 0x100000001;
  for (int i = 0; i < 4; i++)
    memcpy(payload.data() + args.offsets[i], &x, 8);
  memcpy(payload.data() + args.offsets[4], &big, 8);
  memcpy(payload.data() + args.offsets[5], &big, 8);
  auto f = parse_format("%hhx %hx %x %jx %d %ld");
  ASSERT_EQ(f.error, "");
  EXPECT_EQ(rbt::output::format_printf(f, args, payload.data()),
            "ef cdef 78abcdef 12345678abcdef 1 4294967297");
}
