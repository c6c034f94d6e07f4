// rbt's command line (command_line.cpp, script_args.cpp): where the words after a script go,
// bpftrace's long spellings, and usage errors (status 2).

#include <getopt.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "command_line.h"
#include "warnings.h"

namespace {

// Parses `words` (after the program name) as rbt's main does; nullopt: a script to run.
std::optional<int> parse(std::vector<std::string> words, rbt::Options &opts) {
  words.insert(words.begin(), "rbt");
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  optind = 0;  // getopt starts afresh, as cli_main makes it
  return rbt::parse_command_line(static_cast<int>(words.size()), argv.data(), opts);
}

const char *kProgram = "BEGIN { exit(); }";

}  // namespace

TEST(CommandLine, PositionalAndNamedParametersAroundTheDoubleDash) {
  rbt::Options opts;
  ASSERT_EQ(parse({"-e", kProgram, "p1", "-q", "--", "-3", "--aa=20", "--bb", "p2", "--s=",
                   "--aa=21"},
                  opts),
            std::nullopt);
  EXPECT_TRUE(opts.quiet);  // an option after the program's first parameter
  EXPECT_EQ(opts.args, (std::vector<std::string>{"p1", "-3", "p2"}));
  ASSERT_EQ(opts.named_args.size(), 3u);
  EXPECT_EQ(opts.named_args.at("aa"), "21");  // the last one wins
  EXPECT_EQ(opts.named_args.at("bb"), std::nullopt);
  EXPECT_EQ(opts.named_args.at("s"), "");
}

TEST(CommandLine, BpftraceLongSpellings) {
  rbt::Options opts;
  ASSERT_EQ(parse({"-e", kProgram, "--pid", "123", "--output", "out.txt", "--include",
                   "sys/socket.h", "--include", "fcntl.h", "--usdt-file-activation",
                   "--no-warnings"},
                  opts),
            std::nullopt);
  EXPECT_EQ(opts.pid, 123);
  EXPECT_EQ(opts.output_file, "out.txt");
  EXPECT_EQ(opts.includes, (std::vector<std::string>{"sys/socket.h", "fcntl.h"}));
  EXPECT_TRUE(rbt::warnings_suppressed);
  rbt::Options again;
  ASSERT_EQ(parse({"-e", kProgram, "--cmd", "true"}, again), std::nullopt);
  EXPECT_EQ(again.command, "true");
  EXPECT_FALSE(rbt::warnings_suppressed);  // each parse starts without it
}

TEST(CommandLine, UsageErrorsExitTwo) {
  for (const std::vector<std::string> &words : std::vector<std::vector<std::string>>{
           {"-e", kProgram, "--bogus"},
           {"-e", kProgram, "--pid"},
           {"-e", kProgram, "--pid", "0"},
           {"-e", kProgram, "--no-cache=1"},
           {"-e", kProgram, "--", "--=3"},
           {"-e", kProgram, "-Z"},
       }) {
    rbt::Options opts;
    testing::internal::CaptureStderr();
    EXPECT_EQ(parse(words, opts), 2) << words.back();
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.rfind("rbt: error: ", 0), 0u) << err;
  }
}
