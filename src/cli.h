#pragma once
// rbt's command line: options, the script (a file, stdin, -e or a stdlib tool by name) and the
// subcommands (record, report); returns the exit status. main() is only this call, so the
// fuzzer (tests/fuzz/fuzz_driver.cpp) can run the whole driver in process.

namespace rbt {

int cli_main(int argc, char **argv);

}  // namespace rbt
