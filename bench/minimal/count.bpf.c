// Minimal hand-written BPF programs for bench/event_cost.py: each adds 1 to slot 0 of a
// per-CPU array per event, the least a `@ = count()` can do. The loader (loader.c) attaches
// exactly one of them. Built by Makefile with clang-19 -target bpf -O2 -g.
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>  // struct pt_regs, for usdt.bpf.h
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>  // libbpf's USDT support maps, which bpf_program__attach_usdt needs

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} counter SEC(".maps");

static __always_inline void bump(void) {
  __u32 key = 0;
  __u64 *v = bpf_map_lookup_elem(&counter, &key);
  if (v)
    *v += 1;  // per-CPU slot: no atomics needed
}

SEC("uprobe")
int count_uprobe(void *ctx) {
  bump();
  return 0;
}

SEC("tracepoint")
int count_tracepoint(void *ctx) {
  bump();
  return 0;
}

SEC("usdt")
int count_usdt(void *ctx) {
  bump();
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
