/* Native (C) stack unwinding by DWARF CFI: the compact rows rbt's runtime builds from each
 * binary's .eh_frame (src/runtime/unwind/unwind_table.cpp) for a BPF walker to use. One header
 * for both sides, as ruby_layouts.h, so the record cannot drift between them.
 *
 * Why CFI: Debian's libruby, libc and libz are built without frame pointers, so following rbp
 * (what the kernel's user stacks do) is wrong through them. A row says, for every pc from its
 * own up to the next row's, how to find the caller's frame:
 *   CFA  = rsp + cfa_off  or  rbp + cfa_off  (the caller's rsp before the call)
 *   ra   = *(CFA - 8)                         (x86_64: always, or the frame is the outermost)
 *   rbp' = *(CFA + rbp_off) when the frame saved rbp, else rbp unchanged.
 * x86_64 only. Kept as plain C for clang -target bpf. */
#ifndef RBT_NATIVE_UNWIND_H
#define RBT_NATIVE_UNWIND_H

#include <linux/types.h>

/* cfa_kind: how the CFA is computed at this pc. */
#define RBT_UNWIND_STOP 0    /* no CFI covers this pc, or a rule rbt cannot follow: walk ends */
#define RBT_UNWIND_CFA_RSP 1 /* CFA = rsp + cfa_off */
#define RBT_UNWIND_CFA_RBP 2 /* CFA = rbp + cfa_off */
/* A PLT stub (the one DWARF expression every linker emits for .plt): CFA = rsp + cfa_off, plus
 * 8 more once (pc & 15) >= rbp_off, i.e. after the stub's push. */
#define RBT_UNWIND_CFA_PLT 3
#define RBT_UNWIND_END 4 /* the return address is undefined: the outermost frame (_start, clone) */

/* rbp_kind: where the caller's rbp is. */
#define RBT_UNWIND_RBP_SAME 0  /* unchanged by this frame */
#define RBT_UNWIND_RBP_SAVED 1 /* at CFA + rbp_off */
#define RBT_UNWIND_RBP_LOST 2  /* not recoverable (undefined, or a rule rbt cannot follow) */

/* One row. pc is a virtual address of the binary as linked (add the load bias for a process's
 * address); binaries whose code lies above 4 GiB are refused by the builder. */
struct rbt_unwind_row {
  __u32 pc;
  __s32 cfa_off;
  __s16 rbp_off;
  __u8 cfa_kind;
  __u8 rbp_kind;
  /* The start of the function (its FDE) the row belongs to, as linked; 0 in a gap. A walk
   * for a mixed stack records it instead of the pc: the stack is then the same for every
   * sample in the same functions, so it is stored once and its map key repeats. (An array
   * map's values are 8-byte aligned: the field costs no memory.) */
  __u32 func;
};

/* Per process: its executable mappings that have unwind rows, sorted by start. */
#define RBT_UNWIND_MAX_ROWS (1 << 20)   /* rows of every binary together (rbt_unwind_rows) */
#define RBT_UNWIND_MAX_MAPPINGS 128     /* per process; more are left out (their frames stop) */
#define RBT_UNWIND_SEARCH_STEPS 19      /* binary search steps: 2^19 > one binary's rows */
/* The bucket index (rbt_unwind_buckets): for each 2^RBT_UNWIND_BUCKET_SHIFT bytes of a binary's
 * code, the row covering the bucket's first byte, relative to the binary's first row. A lookup
 * then searches the few rows of one bucket (one or two cache lines) instead of binary-searching
 * all of a binary's rows, whose 17 steps each miss the cache and the TLB: a row-cache miss cost
 * about 0.8 us that way. A binary whose buckets do not fit has none and is searched whole. */
#define RBT_UNWIND_BUCKET_SHIFT 9
#define RBT_UNWIND_MAX_BUCKETS (1 << 19) /* 2 MiB: 256 MiB of code, every binary together */
#define RBT_UNWIND_ASK_ANEW (~0ULL)   /* rbt_unwind_unknown value: rewrite even if unchanged */
#define RBT_UNWIND_CACHE 512          /* per-CPU cache of pc -> row, 2-way (16 KiB) */
#define RBT_NATIVE_DEFAULT_DEPTH 64
#define RBT_NATIVE_MAX_DEPTH 128
/* rbt_nstack's depth argument may carry this flag: record each frame's function start, not
 * its pc (rstack(native) and rbt record, whose frames are named by function). */
#define RBT_NATIVE_FUNCTIONS (1ULL << 32)
/* rbt_nstack_to's anchor for a Ruby stack with frames but no C method: the walk ends at the
 * first interpreter frame (rootward of it is the interpreter and the launch, all dropped). */
#define RBT_NATIVE_TO_INTERPRETER (1ULL << 63)

struct rbt_unwind_mapping {
  __u64 start, end; /* [start, end) of the mapping in the process */
  __u64 bias;       /* process address minus the binary's vaddr */
  __u32 first_row;  /* the binary's rows in rbt_unwind_rows: [first_row, first_row + rows) */
  __u32 rows;
  __u32 interpreter; /* 1: the binary is a Ruby interpreter (libruby, or a ruby with it linked in) */
  __u32 first_bucket; /* the binary's buckets in rbt_unwind_buckets: [first_bucket, +buckets) */
  __u32 buckets;      /* 0: no bucket index, search all the rows */
  __u32 bucket_base;  /* the binary's vaddr >> RBT_UNWIND_BUCKET_SHIFT that bucket 0 covers */
};

struct rbt_unwind_proc {
  __u32 count;      /* mappings used */
  __u32 generation; /* changes with every update: keys the walker's per-CPU row cache */
  /* The address space these mappings are of (task->mm), set by BPF at its first use after
   * user space wrote the record (0): another mm under the same pid (an exec, a reused pid) is
   * another image, whose stacks must not be unwound with these rows. */
  __u64 mm;
  struct rbt_unwind_mapping maps[RBT_UNWIND_MAX_MAPPINGS];
};

/* A walked native stack, leaf first: pcs[0] is where the thread was, the rest return
 * addresses. `stop` says why the walk ended (RBT_NATIVE_STOP_*). */
#define RBT_NATIVE_STOP_END 0      /* the outermost frame: the stack is complete */
#define RBT_NATIVE_STOP_DEPTH 1    /* the depth limit */
#define RBT_NATIVE_STOP_UNKNOWN 2  /* a pc in no mapping rbt has rows for (new library, JIT) */
#define RBT_NATIVE_STOP_NO_CFI 3   /* the binary's CFI does not cover the pc */
#define RBT_NATIVE_STOP_READ 4     /* a read of the stack failed */
struct rbt_native_stack {
  __u32 tgid;
  __u32 count;
  __u32 stop;
  __u32 functions; /* 1: pcs[] are function starts (RBT_NATIVE_FUNCTIONS), not pcs */
  __u64 pcs[RBT_NATIVE_MAX_DEPTH];
};

#endif
