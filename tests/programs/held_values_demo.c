// Structs and arrays for the tests of values held by value (compat_semantics.test): a struct
// copied into a variable or a map, an array of arrays, an array of pointers.
//
//   held_values_demo      calls rbt_hold(&pair, &grid, &ptrs) once
//
// pair = {.m = 2, .n = 3}, grid.y = {{5, 6}, {7, 8}}, *ptrs.z[i] = i + 1.
#include <stdio.h>

struct pair {
  int m;
  int n;
};

struct grid {
  int y[2][2];
};

struct ptrs {
  int *z[4];
};

__attribute__((noinline)) int rbt_hold(struct pair *p, struct grid *g, struct ptrs *z) {
  __asm__ volatile("" ::: "memory");
  return p->m + g->y[1][0] + *z->z[1];
}

int main(void) {
  static int values[4] = {1, 2, 3, 4};
  static struct pair pair = {2, 3};
  static struct grid grid = {{{5, 6}, {7, 8}}};
  static struct ptrs ptrs = {{&values[0], &values[1], &values[2], &values[3]}};
  printf("held_values_demo: %d\n", rbt_hold(&pair, &grid, &ptrs));
  return 0;
}
