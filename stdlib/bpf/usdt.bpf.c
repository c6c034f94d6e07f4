// USDT argument access for `usdt` probes: libbpf's usdt.bpf.h (its spec maps and argument
// decoder, which libbpf's bpf_program__attach_usdt fills in), wrapped in one call that codegen
// can emit as `rbt_usdt_arg(ctx, n)`.

#include <stdbool.h>

#include <linux/bpf.h>
#include <linux/ptrace.h>

#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>

// The n-th argument of the USDT probe that fired, or 0 when it has fewer.
long rbt_usdt_arg(struct pt_regs *ctx, __u64 n) {
  long value = 0;
  bpf_usdt_arg(ctx, n, &value);
  return value;
}
