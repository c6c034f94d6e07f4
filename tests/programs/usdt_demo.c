// USDT and uprobe workload for rbt's runtime tests.
//
//   usdt_demo [N [MS]]  fires rbt_test:loop N times (default 10), rbt_test:guarded N times when
//                   a tracer has enabled its semaphore, and calls rbt_work() N times; first
//                   sleeps MS milliseconds (a process already running when a tracer attaches).
//
// Probes:
//   usdt:rbt_test:loop     arg0 = int counter (0..N-1), arg1 = const char * "iteration"
//   usdt:rbt_test:guarded  arg0 = int counter; guarded by rbt_test_guarded_semaphore
//   uprobe:rbt_work        int rbt_work(int x), returns x * 2 + 1
//
// Build: gcc -O1 -g -fno-inline -fno-omit-frame-pointer -o usdt_demo usdt_demo.c
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <unistd.h>

// The semaphore the kernel (ref_ctr_offset) or a tracer increments while the probe is in use.
unsigned short rbt_test_guarded_semaphore __attribute__((unused))
__attribute__((section(".probes")));

// Deliberately not inlined and exported, so `uprobe:PATH:rbt_work` finds it.
__attribute__((noinline)) int rbt_work(int x) {
  // The asm keeps the call from being folded away even at higher optimisation levels.
  __asm__ volatile("" ::: "memory");
  return x * 2 + 1;
}

// sdt.h decides at #include time whether every probe in the file carries a semaphore. The loop
// probe must have none (semaphore address 0 in its note), so it is emitted with the
// no-semaphore variants of the two macros involved, restored afterwards.
#pragma push_macro("_SDT_SEMAPHORE")
#pragma push_macro("_SDT_NOTE_SEMAPHORE_USE")
#undef _SDT_SEMAPHORE
#undef _SDT_NOTE_SEMAPHORE_USE
#define _SDT_SEMAPHORE(p, n) _SDT_ASM_1(_SDT_ASM_ADDR 0)
#define _SDT_NOTE_SEMAPHORE_USE(provider, name)
static inline __attribute__((always_inline)) void fire_loop(int i, const char *label) {
  DTRACE_PROBE2(rbt_test, loop, i, label);
}
#pragma pop_macro("_SDT_NOTE_SEMAPHORE_USE")
#pragma pop_macro("_SDT_SEMAPHORE")

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10;
  if (argc > 2)
    usleep(atoi(argv[2]) * 1000);
  // On the stack, so the page is resident when a probe reads it (a string literal in .rodata
  // that the program never touches may not be, and then bpf_probe_read_user fails).
  char label[16];
  snprintf(label, sizeof label, "%s", "iteration");
  long total = 0;
  int guarded_hits = 0;
  for (int i = 0; i < n; i++) {
    fire_loop(i, label);
    if (rbt_test_guarded_semaphore) {
      DTRACE_PROBE1(rbt_test, guarded, i);
      guarded_hits++;
    }
    total += rbt_work(i);
  }
  printf("usdt_demo: n=%d total=%ld guarded=%d\n", n, total, guarded_hits);
  return 0;
}
