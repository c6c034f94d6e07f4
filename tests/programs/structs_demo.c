// A linked list for rbt's struct tests (types.test): scripts define the same structs in C at
// their top and read them through uprobe arguments.
//
//   structs_demo          calls rbt_visit(&a) once; a.next points to b
//
// rbt_visit(struct node *n): n->id = 7, n->name = "first", n->in = {-3, 1234567890123},
// n->big = 2^63 + 5, n->tags = {10, 20, 30}, n->next->id = 8 (its name "second").
#include <stdio.h>

struct inner {
  short s;
  long v;
};

struct node {
  int id;
  char name[12];
  struct inner in;
  unsigned long long big;
  unsigned short tags[3];
  struct node *next;
};

__attribute__((noinline)) int rbt_visit(struct node *n) {
  __asm__ volatile("" ::: "memory");
  return n->id;
}

int main(void) {
  static struct node b = {8, "second", {1, 2}, 3, {4, 5, 6}, 0};
  static struct node a = {7, "first", {-3, 1234567890123L}, 0x8000000000000005ULL, {10, 20, 30}, &b};
  printf("structs_demo: %d sizeof(node)=%zu\n", rbt_visit(&a), sizeof(struct node));
  return 0;
}
