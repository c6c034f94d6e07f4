// Calls getppid() N times (argv[1], default 1000000) in a tight loop; for benchmarks of
// tracepoint:syscalls:sys_enter_getppid. N = 0 loops forever.
//
// Build: gcc -O1 -g -fno-inline -o getppid_loop getppid_loop.c
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  // syscall() so that no libc ever caches the result and skips the kernel.
  for (long i = 0; n == 0 || i < n; i++)
    syscall(SYS_getppid);
  return 0;
}
