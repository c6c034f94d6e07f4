// A known call chain built WITHOUT frame pointers (-O2 -fomit-frame-pointer), for nstack's
// tests: main -> chain_outer -> chain_middle -> chain_inner -> getppid(), in a loop. Each level
// keeps values in callee-saved registers across its call (pushes on entry, no rbp frame) and
// does work after the call, so it is neither inlined nor a tail call, and a frame-pointer walk
// (ustack) loses the chain where an unwind by CFI does not.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile long sink;

__attribute__((noinline)) long chain_inner(long a, long b) {
  long x = a * 3, y = b ^ 5;
  long r = getppid();
  return r + x + y;
}

__attribute__((noinline)) long chain_middle(long a, long b) {
  long x = a + 7, y = b * 11;
  long r = chain_inner(x, y);
  return r * x - y;
}

__attribute__((noinline)) long chain_outer(long a) {
  long x = a ^ 13, y = a + 17;
  long r = chain_middle(x, y);
  return r + x * y;
}

// Two copies of chain_outer with the same code, so the same frame layout: called in turn from
// the same place, everything above them (stack addresses, registers) is the same and only the
// return address in chain_middle's frame tells them apart ("alt": nstack must not take one
// for the other, however it reuses the last walk).
__attribute__((noinline)) long chain_outer_even(long a) {
  long x = a ^ 13, y = a + 17;
  long r = chain_middle(x, y);
  return r + x * y;
}

__attribute__((noinline)) long chain_outer_odd(long a) {
  long x = a ^ 13, y = a + 17;
  long r = chain_middle(x, y);
  return r + x * y;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;  // 0: forever
  int alternate = argc > 2 && argv[2][0] == 'a';
  // A counted run starts with one event, then waits: rbt reads the mappings of a process (or
  // of its new image, after "exec") once an event has asked for them, at its next poll, and a
  // slow rbt (a sanitizer build, a loaded machine) must not see the whole run go by first.
  if (n > 0) {
    sink += chain_outer(-1);
    usleep(200000);
  }
  for (long i = 0; n == 0 || i < n; i++) {
    if (alternate)
      sink += (i & 1) ? chain_outer_odd(i) : chain_outer_even(i);
    else
      sink += chain_outer(i);
    if (n == 0 && i % 1000 == 999)
      usleep(1000);
  }
  printf("%ld\n", (long)sink);
  // "exec": the same pid becomes a new image of this program (nstack's facts must not outlive
  // the image they were learnt from).
  if (argc > 2 && argv[2][0] == 'e')
    execl("/proc/self/exe", argv[0], argv[1], (char *)0);
  return 0;
}
