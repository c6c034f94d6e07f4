// String and byte workload for rbt's runtime tests (strings.test, json.test).
//
//   strings_demo [N]   calls each function below N times (default 1), then exits.
//
// Functions (uprobe:PATH:name):
//   rbt_take_string(const char *s, int n)        s: 999 'x' then 'Y' (1000 characters), n = 1000
//   rbt_take_bytes(const unsigned char *p, int n) p: 00 01 41 62 7f ff 20 0a, n = 8
//   rbt_outer(int x) → rbt_inner(int x)          a two-frame call chain for ustack
//
// Build: gcc -O1 -g -fno-inline -fno-omit-frame-pointer -o strings_demo strings_demo.c
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int rbt_take_string(const char *s, int n) {
  __asm__ volatile("" ::: "memory");
  return s[0] + n;
}

__attribute__((noinline)) int rbt_take_bytes(const unsigned char *p, int n) {
  __asm__ volatile("" ::: "memory");
  return p[0] + n;
}

__attribute__((noinline)) int rbt_inner(int x) {
  __asm__ volatile("" ::: "memory");
  return x + 1;
}

__attribute__((noinline)) int rbt_outer(int x) {
  __asm__ volatile("" ::: "memory");
  return rbt_inner(x) * 2;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1;
  // Written at run time, so the pages are resident when a probe reads them.
  static char text[1001];
  memset(text, 'x', 999);
  text[999] = 'Y';
  text[1000] = '\0';
  unsigned char bytes[8] = {0x00, 0x01, 'A', 'b', 0x7f, 0xff, ' ', '\n'};
  long total = 0;
  for (int i = 0; i < n; i++) {
    total += rbt_take_string(text, 1000);
    total += rbt_take_bytes(bytes, 8);
    total += rbt_outer(i);
  }
  printf("strings_demo: n=%d total=%ld\n", n, total);
  return 0;
}
