#include "cli.h"

int main(int argc, char **argv) { return rbt::cli_main(argc, argv); }
