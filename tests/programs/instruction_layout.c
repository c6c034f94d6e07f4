// Functions whose instruction layout is known byte for byte, for the tests that a uprobe is
// only placed on an instruction boundary. `touch` is written in assembly so no compiler can
// change it: `mov %rdi,%rax` (3 bytes: 48 89 f8) then `ret` (1 byte), so touch+1 and touch+2
// are inside the mov and touch+3 is the ret.
//
// usage: instruction_layout N   calls touch(i) and negative(i) for i < N and checks every
//                               result; prints "instruction_layout: ok N" and exits 0, or
//                               exits 3 on a wrong result (a probe that corrupted the mov).

#include <stdio.h>
#include <stdlib.h>

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl touch\n"
        ".type touch, @function\n"
        "touch:\n"
        "  movq %rdi, %rax\n"
        "  ret\n"
        ".size touch, .-touch\n");
#else
__attribute__((noinline)) long touch(long v) { return v; }
#endif

long touch(long v);

// Returns a negative int: the upper half of %rax is zero, so only (int32)retval reads it as
// negative (a test that stats() of it is signed).
__attribute__((noinline)) int negative(int v) {
  __asm__ volatile("" ::: "memory");
  return -v;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1;
  for (long i = 0; i < n; i++) {
    if (touch(i) != i) {
      fprintf(stderr, "instruction_layout: touch(%ld) returned %ld\n", i, touch(i));
      return 3;
    }
    if (negative((int)i) != -(int)i)
      return 3;
  }
  printf("instruction_layout: ok %ld\n", n);
  return 0;
}
