// String and map helpers too loopy to write as IRBuilder glue: strlen, strncmp, strcontains,
// len(@m). Each is a static subprogram after linking, verified with its caller's constant
// sizes, so its loops are bounded.

#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

// The scans run under bpf_loop: a plain loop leaves one pending branch per byte for the
// verifier (the byte is unknown), and past ~8K of them in one path it gives up ("the sequence
// of jumps is too complex"), which a few long strings in one probe reach. A bpf_loop callback
// is verified on its own, whatever the string length.
struct scan {
  const char *a, *b;
  __u64 a_size, b_size;
  __u64 result;
};

// The callbacks store the loop index (a value the verifier does not know) rather than count
// with `++`: a counter it knows exactly (0, 1, 2, ...) makes the verifier explore the callback
// once per value as soon as the script compares the result, and reject the program as too
// large (strlen($s) > 1000 on a long string).
static long strlen_step(__u64 i, void *ctx) {
  struct scan *s = ctx;
  if (i >= s->a_size || !s->a[i]) {
    s->result = i;
    return 1;
  }
  return 0;
}

// Length of the NUL-terminated string in a buffer of `size` bytes.
__u64 rbt_strlen(const char *s, __u64 size) {
  struct scan sc = {.a = s, .a_size = size, .result = size};
  bpf_loop(size, strlen_step, &sc, 0);
  return sc.result;
}

static long strncmp_step(__u64 i, void *ctx) {
  struct scan *s = ctx;
  char ca = i < s->a_size ? s->a[i] : 0, cb = i < s->b_size ? s->b[i] : 0;
  if (ca != cb) {
    s->result = 1;
    return 1;
  }
  return !ca;
}

// 0 when the first `n` characters of a and b match (stopping at a shared NUL), else 1.
__u64 rbt_strncmp(const char *a, __u64 a_size, const char *b, __u64 b_size, __u64 n) {
  struct scan sc = {.a = a, .b = b, .a_size = a_size, .b_size = b_size};
  // Past both buffers every byte compares equal: no need to go further (bpf_loop caps its
  // count at 2^23).
  __u64 longest = (a_size > b_size ? a_size : b_size) + 1;
  bpf_loop(n < longest ? n : longest, strncmp_step, &sc, 0);
  return sc.result;
}

static long contains_step(__u64 start, void *ctx) {
  struct scan *s = ctx;  // a: the haystack, b: the needle
  if (start >= s->a_size)
    return 1;
  __u64 i = 0;
  for (; i < s->b_size && i < 4096; i++) {
    if (!s->b[i]) {
      s->result = 1;
      return 1;
    }
    __u64 at = start + i;
    if (at >= s->a_size || s->a[at] != s->b[i])
      break;
  }
  if (i == s->b_size) {
    s->result = 1;
    return 1;
  }
  return !s->a[start];
}

// 1 when `needle` occurs in `haystack` (both NUL-terminated within their sizes).
__u64 rbt_strcontains(const char *haystack, __u64 h_size, const char *needle, __u64 n_size) {
  struct scan sc = {.a = haystack, .b = needle, .a_size = h_size, .b_size = n_size};
  bpf_loop(h_size, contains_step, &sc, 0);
  return sc.result;
}

// An atomic add leaves the counter a value the verifier does not know. With a plain `++` it
// knows it exactly (1, 2, 3, ...), so once the script compares len() with something the
// verifier explores the callback again for every count and rejects the program as too large.
static long count_entry(void *map, const void *key, void *value, void *ctx) {
  __sync_fetch_and_add((__u64 *)ctx, 1);
  return 0;
}

// Number of entries of a hash map (len(@m)).
__u64 rbt_map_len(void *map) {
  __u64 n = 0;
  bpf_for_each_map_elem(map, count_entry, &n, 0);
  return n;
}

#include "syscall_names.h"  // generated from <asm/unistd_64.h> (stdlib/bpf/CMakeLists.txt)

// syscall_name(nr): the name of syscall `nr` in the RBT_SYSCALL_NAME_SIZE bytes at `out`, or
// "Unknown syscall" as bpftrace prints it (a number the build host's headers do not name).
__u64 rbt_syscall_name(__s64 nr, char *out) {
  static const char unknown[RBT_SYSCALL_NAME_SIZE] = "Unknown syscall";
  const char *name = unknown;
  if (nr >= 0 && nr < RBT_SYSCALL_COUNT && rbt_syscall_names[nr][0])
    name = rbt_syscall_names[nr];
  __builtin_memcpy(out, name, RBT_SYSCALL_NAME_SIZE);
  return 0;
}

// signal_name(sig): the signal's description as glibc's strsignal(3) gives it on Linux, for
// 0 to 64 (SIGRTMAX), else "N/A", as bpftrace prints it; RBT_SIGNAL_NAME_SIZE bytes at `out`.
#define RBT_SIGNAL_NAME_SIZE 32
static const char rbt_signal_names[65][RBT_SIGNAL_NAME_SIZE] = {
    "Unknown signal 0", "Hangup", "Interrupt", "Quit", "Illegal instruction",
    "Trace/breakpoint trap", "Aborted", "Bus error", "Floating point exception", "Killed",
    "User defined signal 1", "Segmentation fault", "User defined signal 2", "Broken pipe",
    "Alarm clock", "Terminated", "Stack fault", "Child exited", "Continued", "Stopped (signal)",
    "Stopped", "Stopped (tty input)", "Stopped (tty output)", "Urgent I/O condition",
    "CPU time limit exceeded", "File size limit exceeded", "Virtual timer expired",
    "Profiling timer expired", "Window changed", "I/O possible", "Power failure",
    "Bad system call", "Unknown signal 32", "Unknown signal 33", "Real-time signal 0",
    "Real-time signal 1", "Real-time signal 2", "Real-time signal 3", "Real-time signal 4",
    "Real-time signal 5", "Real-time signal 6", "Real-time signal 7", "Real-time signal 8",
    "Real-time signal 9", "Real-time signal 10", "Real-time signal 11", "Real-time signal 12",
    "Real-time signal 13", "Real-time signal 14", "Real-time signal 15", "Real-time signal 16",
    "Real-time signal 17", "Real-time signal 18", "Real-time signal 19", "Real-time signal 20",
    "Real-time signal 21", "Real-time signal 22", "Real-time signal 23", "Real-time signal 24",
    "Real-time signal 25", "Real-time signal 26", "Real-time signal 27", "Real-time signal 28",
    "Real-time signal 29", "Real-time signal 30",
};

__u64 rbt_signal_name(__s64 sig, char *out) {
  static const char unknown[RBT_SIGNAL_NAME_SIZE] = "N/A";
  const char *name = unknown;
  if (sig >= 0 && sig < 65)
    name = rbt_signal_names[sig];
  __builtin_memcpy(out, name, RBT_SIGNAL_NAME_SIZE);
  return 0;
}
