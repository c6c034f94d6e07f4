// USDT probes with every kind of argument, for tests that run one program over all of them
// (`usdt:BIN:* { ... arg1 ... }`): no arguments, one, strings, small and wide integers, signed
// and unsigned, and the most arguments sdt.h allows (12).
//
//   usdt_args [N]   fires each probe N times (default 1), then prints "usdt_args: done".

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

struct point {
  int x, y;
};

__attribute__((noinline)) static void fire(long i) {
  volatile char c = (char)i;
  volatile short s = (short)-i;
  volatile uint16_t us = (uint16_t)i;
  volatile int32_t w = (int32_t)(-100 - i);
  volatile uint64_t big = 0x12345678abcdefULL + (uint64_t)i;
  // A plain variable: words[i & 1] would give an indexed operand (8@(%rdx,%rcx,8)), which
  // libbpf 1.1's USDT argument parser does not take.
  const char *volatile word = (i & 1) ? "beta" : "alpha";
  struct point p = {(int)i, (int)(i * 2)};
  // A static array as an argument: sdt.h may name it by address (8@$addr, 8@label(%rip)).
  static volatile char label[] = "static label";
  DTRACE_PROBE2(rbt_args, array, i, label);
  DTRACE_PROBE(rbt_args, none);
  DTRACE_PROBE1(rbt_args, one, i);
  DTRACE_PROBE2(rbt_args, text, i, "hello usdt");
  DTRACE_PROBE3(rbt_args, small, c, s, us);
  DTRACE_PROBE3(rbt_args, wide, w, big, word);
  DTRACE_PROBE2(rbt_args, pointer, &p, p.y);
  DTRACE_PROBE12(rbt_args, twelve, i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7, i + 8,
                 i + 9, i + 10, i + 11);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1;
  for (long i = 0; i < n; i++)
    fire(i);
  printf("usdt_args: done\n");
  return 0;
}
