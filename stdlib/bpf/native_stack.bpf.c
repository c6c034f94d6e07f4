// The native (C) stack of the thread a probe fired on, unwound inside BPF by the DWARF CFI of
// each binary, so it is exact through code built without frame pointers (Debian's libruby,
// libc, libz), where the kernel's user stacks (ustack) go wrong.
//
// Codegen calls `rbt_nstack(max_depth)`; it returns a stack id (0: no user stack, or a process
// user space has not mapped yet) whose pcs are in rbt_native_stacks. User space fills
// rbt_unwind_rows with each binary's rows once (src/runtime/unwind/) and rbt_unwind_procs with
// each process's mappings; a process or a pc it does not know yet goes into
// rbt_unwind_unknown, and user space reads that process's /proc/PID/maps again.
//
// Per frame: find the mapping of the pc (binary search over the process's mappings), its row
// (binary search over the binary's rows), compute the CFA from rsp or rbp, read the return
// address at CFA-8 and the saved rbp if the row says where it is. The walk starts from the
// user registers the kernel saved when the thread entered it (bpf_task_pt_regs), which is the
// event's user context for samples, uprobes, tracepoints and syscalls alike.

#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf_helpers.h>

#include "native_unwind.h"

struct pt_regs {
  unsigned long bp;
  unsigned long sp;
  unsigned long ip;
} __attribute__((preserve_access_index));
// A CO-RE flavour (libbpf ignores the ___ suffix when matching kernel types): ruby_stack.bpf.c
// has a task_struct of its own, and two bodies under one name in the linked module break the
// relocations of one of them.
struct task_struct___native {
  unsigned int flags;
  void *mm;
} __attribute__((preserve_access_index));

#define PF_KTHREAD 0x00200000
#define RBT_EEXIST 17

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, RBT_UNWIND_MAX_ROWS);
  __type(key, __u32);
  __type(value, struct rbt_unwind_row);
} rbt_unwind_rows SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, RBT_UNWIND_MAX_BUCKETS);
  __type(key, __u32);
  __type(value, __u32);
} rbt_unwind_buckets SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u32);
  __type(value, struct rbt_unwind_proc);
} rbt_unwind_procs SEC(".maps");

// The last generation user space gave a record (rbt_unwind_proc.generation), or took one
// away: it grows with every write and every delete of rbt_unwind_procs. A CPU that walked a
// process at this epoch knows that process's record is unchanged and needs no lookup of it.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} rbt_unwind_epoch SEC(".maps");

// Processes (tgid → when) met with no mappings, or with a pc outside them: user space maps them.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __type(key, __u32);
  __type(value, __u64);
} rbt_unwind_unknown SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __uint(map_flags, BPF_F_NO_PREALLOC);  // 1 KiB a stack: allocated on use
  __type(key, __u64);
  __type(value, struct rbt_native_stack);
} rbt_native_stacks SEC(".maps");

// pc → row, per CPU, two-way set associative: return addresses repeat from sample to sample,
// and a hit skips both searches. (Direct mapped, two of a stack's ~25 return addresses often
// shared a slot and evicted each other on every walk: 1.4 misses a walk, 0.5 us each.) Keyed by the process and its mappings' generation too, so an exec or a
// remapping never reuses another image's rows. Small on purpose: a walk touches an entry per
// frame, and what costs is memory the sampled program has pushed out of the CPU's caches and
// TLB since the last sample; 4096 entries of 56 bytes made the walk 1.7x slower than these.
struct row_cache_entry {
  __u64 pc;
  __u32 tgid, generation;
  __u64 func;  // the function's start in the process (0: unknown), and CACHED_INTERPRETER
  __s32 cfa_off;  // the row's rule (struct rbt_unwind_row)
  __s16 rbp_off;
  __u8 cfa_kind, rbp_kind;
};
#define CACHED_INTERPRETER (1ULL << 63)  // the mapping's interpreter flag, in func

// A set: one cache line. A new entry goes to way 0 and way 0's moves to way 1.
struct row_cache_set {
  struct row_cache_entry way[2];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, RBT_UNWIND_CACHE / 2);
  __type(key, __u32);
  __type(value, struct row_cache_set);
} rbt_unwind_cache SEC(".maps");

#define STACK_CHUNK 2048
// Stack ids this CPU found or stored in rbt_native_stacks, direct mapped: a profile's
// samples repeat a few dozen stacks, and a hit here skips the hash lookup, whose buckets and
// entries the sampled program has pushed out of the caches by the next sample (0.4 us of a
// mixed stack's 3.5 with one remembered id, 0.08 with 64).
#define STORED_IDS 64

// A frame of the last walk, as it was entered: the state the unwinder had (ip, sp, bp and
// the anchor's count), what it recorded, where the caller's rbp was read (0: not read) and,
// for a last frame whose return address read 0 (the stack's end), where that was; whether
// its row computes the CFA from rbp, and whether it leaves the caller's rbp unknown.
struct memo_frame {
  __u64 ip, sp, bp, at, bp_addr, zero_ra_addr;
  __u32 anchors_left;
  __u8 uses_bp, loses_bp;
};

struct native_scratch {
  __u64 ip, sp, bp, hash;
  __u32 max, functions;
  __u64 anchor, anchors_left;  // rbt_nstack_to: stop at this function's Nth frame
  __u64 to_interpreter;        // rbt_nstack_to: stop at the first interpreter frame
  __u64 chunk_base, chunk_len;  // the user stack's bytes [base, base + len) in chunk
  // The process this CPU last walked, checked against its record at `epoch`: a walk of the
  // same image at the same epoch trusts `generation` and looks the record up only if a frame
  // misses the row cache (a hash lookup of memory the sampled program has pushed out of the
  // caches: 0.25 us of a walk).
  __u64 known_mm;
  __u32 known_tgid, known_generation, known_epoch, generation;
  __u64 stored[STORED_IDS];  // stack ids this CPU found or stored in rbt_native_stacks
  // The mapping of this CPU's last row-cache miss, copied from the process record: a miss
  // in the same binary (most are a leaf's new pc in the library the thread is busy in) then
  // searches its rows at once, without the record's hash lookup and binary search over the
  // mappings (five to ten lines the sampled program has pushed out of the caches). Valid
  // for (last_map_tgid, last_map_generation) while the walk trusts `known` (see walk_native).
  struct rbt_unwind_mapping last_map;
  __u32 last_map_tgid, last_map_generation;
  // The last complete walk on this CPU (memo[memo_cur]) and what it was a walk of; the
  // current walk writes its frames to the other buffer. See try_memo.
  __u32 memo_cur, memo_count, memo_stop, memo_tgid, memo_generation, memo_functions;
  __u64 memo_mm, memo_anchor, memo_to_interpreter;
  __u32 memo_usable;  // this walk may take the memo's suffix
  __u32 memo_j;       // the memo's frame to compare with next (its sp grows with the walk's)
  __u32 verifying;    // 1: this walk's frames are the memo's from memo_k on, being checked
  __u32 memo_k;
  struct memo_frame memo[2][RBT_NATIVE_MAX_DEPTH];
  __u8 chunk[STACK_CHUNK];
  struct rbt_native_stack stack;
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct native_scratch);
} rbt_native_scratch SEC(".maps");

// bpf_loop's context lives on the BPF stack, so the map value pointers keep their type there.
struct native_ctx {
  struct native_scratch *s;
  struct rbt_unwind_proc *proc;  // null until a frame misses the row cache
};

static __always_inline void ask_user_space(__u32 tgid) {
  __u64 now = bpf_ktime_get_ns();
  bpf_map_update_elem(&rbt_unwind_unknown, &tgid, &now, BPF_NOEXIST);
}

// The record is of an earlier image: user space must write it again even if the new image's
// /proc/PID/maps reads the same.
static __always_inline void ask_user_space_anew(__u32 tgid) {
  __u64 anew = RBT_UNWIND_ASK_ANEW;
  bpf_map_update_elem(&rbt_unwind_unknown, &tgid, &anew, BPF_ANY);
}

// The mapping holding pc, or null.
static __always_inline struct rbt_unwind_mapping *mapping_of(struct rbt_unwind_proc *p, __u64 pc) {
  __u32 lo = 0, n = p->count;
  if (n == 0 || n > RBT_UNWIND_MAX_MAPPINGS)
    return 0;
  for (int i = 0; i < 8; i++) {  // 2^8 > RBT_UNWIND_MAX_MAPPINGS
    if (n <= 1)
      break;
    __u32 half = n / 2, mid = lo + half;
    if (p->maps[mid & (RBT_UNWIND_MAX_MAPPINGS - 1)].start <= pc)
      lo = mid, n -= half;
    else
      n = half;
  }
  struct rbt_unwind_mapping *m = &p->maps[lo & (RBT_UNWIND_MAX_MAPPINGS - 1)];
  return pc >= m->start && pc < m->end ? m : 0;
}

// The row covering vaddr among the binary's rows, or null: searched among the rows of vaddr's
// bucket (from the row covering its start to the row covering the next bucket's start).
static __always_inline struct rbt_unwind_row *row_of(struct rbt_unwind_mapping *m, __u64 vaddr) {
  __u32 lo = m->first_row, n = m->rows;
  if (m->buckets) {
    __u64 b = (vaddr >> RBT_UNWIND_BUCKET_SHIFT) - m->bucket_base;
    if ((vaddr >> RBT_UNWIND_BUCKET_SHIFT) < m->bucket_base || b >= m->buckets)
      return 0;  // below the first row, or past the last (a STOP row)
    __u32 k = m->first_bucket + (__u32)b;
    __u32 *first = bpf_map_lookup_elem(&rbt_unwind_buckets, &k);
    k++;
    __u32 *next = b + 1 < m->buckets ? bpf_map_lookup_elem(&rbt_unwind_buckets, &k) : 0;
    if (!first || *first >= m->rows)
      return 0;
    __u32 last = next && *next < m->rows ? *next : m->rows - 1;
    if (last < *first)
      return 0;
    lo = m->first_row + *first;
    n = last - *first + 1;
  }
  for (int i = 0; i < RBT_UNWIND_SEARCH_STEPS; i++) {
    if (n <= 1)
      break;
    __u32 half = n / 2, mid = lo + half;
    struct rbt_unwind_row *r = bpf_map_lookup_elem(&rbt_unwind_rows, &mid);
    if (!r)
      return 0;
    if (r->pc <= vaddr)
      lo = mid, n -= half;
    else
      n = half;
  }
  struct rbt_unwind_row *r = bpf_map_lookup_elem(&rbt_unwind_rows, &lo);
  return r && n && r->pc <= vaddr ? r : 0;
}

static __always_inline __u64 read_u64(__u64 addr, int *err) {
  __u64 v = 0;
  if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
    *err = 1;
  return v;
}

// A word of the user stack. Reads of user memory dominate the walk's cost, and the walk moves
// up the stack: one read of up to STACK_CHUNK bytes serves the frames above it until a word
// falls past its end. A chunk never crosses a page boundary: past the stack's last page
// nothing is mapped, and a read that faults costs a page-fault exception (microseconds) where
// a read that does not costs nanoseconds; the outermost frames (main, _start) sit in that last
// page, and reading 2 KiB from them faulted on every word (a full walk: 59 us, not 4).
static __always_inline __u64 stack_word(struct native_scratch *s, __u64 addr, int *err) {
  __u64 off = addr - s->chunk_base;
  if (addr < s->chunk_base || off + 8 > s->chunk_len) {
    __u64 len = 4096 - (addr & 4095);  // to the page's end: 1..4096
    if (len > STACK_CHUNK)
      len = STACK_CHUNK;
    if (len < 8 || bpf_probe_read_user(s->chunk, len, (const void *)addr)) {
      s->chunk_len = 0;
      return read_u64(addr, err);
    }
    s->chunk_base = addr;
    s->chunk_len = len;
    off = 0;
  }
  off &= STACK_CHUNK - 1;
  if (off > STACK_CHUNK - 8)
    return read_u64(addr, err);
  return *(__u64 *)(s->chunk + off);
}

// Records a frame: its pc, or with RBT_NATIVE_FUNCTIONS its function's start when known.
static __always_inline void record_frame(struct native_scratch *s, __u32 n, __u64 func) {
  __u64 at = s->functions && func ? func : s->ip;
  s->stack.pcs[n & (RBT_NATIVE_MAX_DEPTH - 1)] = at;
  s->stack.count = n + 1;
  s->hash = (s->hash ^ at) * 0x100000001b3ULL;
}

// ---- The suffix memo ----
//
// Samples of a busy thread repeat their callers: from the first few frames up, a walk usually
// meets the frames the last walk on this CPU met, at the same stack addresses. When a frame's
// unwinding state (ip, sp, the anchor's count) equals a frame of the last walk, of the same
// image and rows, the rest of that walk follows from the same stack words: each step reads the
// caller's return address (and saved rbp) at addresses the state fixes. So the rest is taken
// from the memo once those words are read again and found unchanged, which is exact, frame for
// frame, and skips the row lookups (cache misses in a program that thrashes the caches between
// samples). rbp is compared only where a row computes the CFA from it: code built without
// frame pointers keeps data in rbp, which differs from sample to sample, and a frame that
// saves rbp gives its caller the saved value, read and checked like the return address. A
// word that changed ends the check, and the walk goes on as usual from the last frame known to
// be the same.

// 1 when frame n (state in s) is memo frame memo_j: the walk then takes the memo's frames.
static __always_inline int try_memo(struct native_scratch *s, __u32 n) {
  __u32 r = s->memo_cur & 1, count = s->memo_count;
  if (count > RBT_NATIVE_MAX_DEPTH)
    return 0;
  __u32 j = s->memo_j;
  for (int i = 0; i < 8 && j < count && s->memo[r][j & (RBT_NATIVE_MAX_DEPTH - 1)].sp < s->sp;
       i++)
    j++;
  s->memo_j = j;
  if (j >= count)
    return 0;
  struct memo_frame *m = &s->memo[r][j & (RBT_NATIVE_MAX_DEPTH - 1)];
  // The leaf is looked up at its pc, every other frame at its return address - 1.
  if (m->sp != s->sp || m->ip != s->ip || m->anchors_left != s->anchors_left ||
      (j == 0) != (n == 0) || n + (count - j) > s->max)
    return 0;
  s->verifying = 1;
  s->memo_k = j;
  return 1;
}

// Frame n is memo frame memo_k (its ip and sp; s->bp is the walk's own): checks the words
// that lead to memo frame memo_k + 1, then records frame n from the memo. Returns 1 when the
// walk is complete, 0 to go on, and -1 when something differs: the walk then unwinds frame n
// itself.
static __always_inline long memo_step(struct native_scratch *s, __u32 n) {
  __u32 r = s->memo_cur & 1, k = s->memo_k;
  struct memo_frame *m = &s->memo[r][k & (RBT_NATIVE_MAX_DEPTH - 1)];
  int last = k + 1 >= s->memo_count;
  int err = 0;
  __u64 bp = s->bp;
  if (m->uses_bp && bp != m->bp)
    last = -1;  // the CFA is computed from rbp, which is not the memo's
  else if (last && m->zero_ra_addr && (stack_word(s, m->zero_ra_addr, &err) != 0 || err))
    last = -1;  // the end was a zeroed return address, no longer zero: unwind it anew
  if (!last) {
    struct memo_frame *next = &s->memo[r][(k + 1) & (RBT_NATIVE_MAX_DEPTH - 1)];
    if (m->bp_addr) {
      bp = stack_word(s, m->bp_addr, &err);
      if (bp != next->bp)
        last = -1;
    } else if (m->loses_bp) {
      bp = 0;
    }
    if (stack_word(s, next->sp - 8, &err) != next->ip || err)
      last = -1;
  }
  if (last < 0) {
    s->verifying = 0;
    s->memo_usable = 0;
    s->ip = m->ip;
    s->sp = m->sp;
    s->anchors_left = m->anchors_left;
    return -1;
  }
  s->bp = bp;
  s->memo[r ^ 1][n & (RBT_NATIVE_MAX_DEPTH - 1)] = *m;
  s->stack.pcs[n & (RBT_NATIVE_MAX_DEPTH - 1)] = m->at;
  s->stack.count = n + 1;
  s->hash = (s->hash ^ m->at) * 0x100000001b3ULL;
  if (last) {
    s->stack.stop = s->memo_stop;
    return 1;
  }
  s->memo_k = k + 1;
  return 0;
}

// One frame: records it, then steps to the caller. Returns 1 to end the walk.
static long unwind_one(__u64 index, void *ctx) {
  struct native_scratch *s = ((struct native_ctx *)ctx)->s;
  struct rbt_unwind_proc *proc = ((struct native_ctx *)ctx)->proc;
  __u32 n = s->stack.count;
  if (n >= s->max || n >= RBT_NATIVE_MAX_DEPTH) {
    s->stack.stop = RBT_NATIVE_STOP_DEPTH;
    return 1;
  }
  if (s->verifying || (s->memo_usable && try_memo(s, n))) {
    long done = memo_step(s, n);
    if (done >= 0)
      return done;
  }
  // This frame as the next walk's memo will see it.
  struct memo_frame *w = &s->memo[(s->memo_cur & 1) ^ 1][n & (RBT_NATIVE_MAX_DEPTH - 1)];
  w->ip = s->ip;
  w->sp = s->sp;
  w->bp = s->bp;
  w->anchors_left = s->anchors_left;
  w->bp_addr = 0;
  w->zero_ra_addr = 0;
  w->uses_bp = 0;
  w->loses_bp = 0;
  w->at = s->ip;  // what record_frame(s, n, 0) records, where the walk stops without a row
  // A return address points after its call: look the caller up at the call itself.
  __u64 pc = n == 0 ? s->ip : s->ip - 1;
  __u32 slot = (__u32)((pc ^ (pc >> 12) ^ s->stack.tgid) & (RBT_UNWIND_CACHE / 2 - 1));
  struct row_cache_set *set = bpf_map_lookup_elem(&rbt_unwind_cache, &slot);
  if (!set)
    return 1;
  __u32 tgid = s->stack.tgid, generation = s->generation;
  struct row_cache_entry *c = &set->way[0];
  if (c->pc != pc || c->tgid != tgid || c->generation != generation)
    c = &set->way[1];
  struct row_cache_entry *r = c;
  if (c->pc != pc || c->tgid != tgid || c->generation != generation) {
    struct rbt_unwind_mapping *m = &s->last_map;
    if (s->last_map_tgid == tgid && s->last_map_generation == generation && pc >= m->start &&
        pc < m->end)
      goto found_mapping;
    if (!proc) {
      proc = bpf_map_lookup_elem(&rbt_unwind_procs, &tgid);
      if (!proc || proc->generation != generation) {  // rewritten or gone since the walk began
        record_frame(s, n, 0);
        s->stack.stop = RBT_NATIVE_STOP_UNKNOWN;
        return 1;
      }
      ((struct native_ctx *)ctx)->proc = proc;
    }
    m = mapping_of(proc, pc);
    if (!m) {
      record_frame(s, n, 0);
      s->stack.stop = RBT_NATIVE_STOP_UNKNOWN;
      return 1;
    }
    s->last_map = *m;
    s->last_map_tgid = tgid;
    s->last_map_generation = generation;
    m = &s->last_map;
  found_mapping:;
    __u64 vaddr = pc - m->bias;
    struct rbt_unwind_row *found = vaddr >> 32 ? 0 : row_of(m, vaddr);
    if (!found) {
      record_frame(s, n, 0);
      s->stack.stop = RBT_NATIVE_STOP_NO_CFI;
      return 1;
    }
    set->way[1] = set->way[0];
    c = r = &set->way[0];
    c->pc = pc;
    c->tgid = tgid;
    c->generation = generation;
    c->func = (found->func ? found->func + m->bias : 0) | (m->interpreter ? CACHED_INTERPRETER : 0);
    c->cfa_off = found->cfa_off;
    c->rbp_off = found->rbp_off;
    c->cfa_kind = found->cfa_kind;
    c->rbp_kind = found->rbp_kind;
  }
  __u64 func = c->func & ~CACHED_INTERPRETER;
  record_frame(s, n, func);
  w->at = s->stack.pcs[n & (RBT_NATIVE_MAX_DEPTH - 1)];
  if (s->anchors_left && func == s->anchor && --s->anchors_left == 0)
    return 1;  // the root-most C method's frame: what is rootward is dropped (stop: END)
  if (s->to_interpreter && (c->func & CACHED_INTERPRETER))
    return 1;  // no C method: the first interpreter frame and all rootward of it are dropped
  if (r->cfa_kind == RBT_UNWIND_STOP) {
    s->stack.stop = RBT_NATIVE_STOP_NO_CFI;
    return 1;
  }
  __u64 cfa;
  switch (r->cfa_kind) {
  case RBT_UNWIND_CFA_RSP: cfa = s->sp + (__s64)r->cfa_off; break;
  case RBT_UNWIND_CFA_RBP:
    w->uses_bp = 1;
    if (!s->bp) {
      s->stack.stop = RBT_NATIVE_STOP_READ;
      return 1;
    }
    cfa = s->bp + (__s64)r->cfa_off;
    break;
  case RBT_UNWIND_CFA_PLT:
    cfa = s->sp + (__s64)r->cfa_off + ((s->ip & 15) >= (__u64)r->rbp_off ? 8 : 0);
    break;
  default:  // RBT_UNWIND_END: the outermost frame
    s->stack.stop = RBT_NATIVE_STOP_END;
    return 1;
  }
  int err = 0;
  if (r->rbp_kind == RBT_UNWIND_RBP_SAVED && r->cfa_kind != RBT_UNWIND_CFA_PLT) {
    w->bp_addr = cfa + (__s64)r->rbp_off;
    s->bp = stack_word(s, w->bp_addr, &err);  // below the return address
  }
  __u64 ra = stack_word(s, cfa - 8, &err);
  if (r->rbp_kind == RBT_UNWIND_RBP_LOST && r->cfa_kind != RBT_UNWIND_CFA_PLT) {
    w->loses_bp = 1;
    s->bp = 0;
  }
  if (err) {
    s->stack.stop = RBT_NATIVE_STOP_READ;
    return 1;
  }
  if (!ra) {  // a zeroed return address also marks the outermost frame
    w->zero_ra_addr = cfa - 8;
    s->stack.stop = RBT_NATIVE_STOP_END;
    return 1;
  }
  s->sp = cfa;
  s->ip = ra;
  return 0;
}

// Walks the current thread's native stack into the per-CPU scratch; null when there is none.
static __always_inline struct native_scratch *walk_native(__u64 max_depth, __u64 anchor) {
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32;
  struct task_struct___native *task = (void *)bpf_get_current_task_btf();
  if (tgid == 0 || (task->flags & PF_KTHREAD))
    return 0;
  __u32 zero = 0;
  struct native_scratch *s = bpf_map_lookup_elem(&rbt_native_scratch, &zero);
  __u32 *epoch = bpf_map_lookup_elem(&rbt_unwind_epoch, &zero);
  if (!s || !epoch)
    return 0;
  __u64 mm = (__u64)task->mm;
  struct rbt_unwind_proc *p = 0;
  __u32 now = *epoch;
  int known = s->known_tgid == tgid && s->known_mm == mm && s->known_epoch == now;
  if (!known) {
    s->known_tgid = 0;
    s->last_map_tgid = 0;  // rows may have moved with the epoch
    p = bpf_map_lookup_elem(&rbt_unwind_procs, &tgid);
    if (p && p->mm != mm) {
      if (p->mm) {  // the record describes an earlier image of this pid
        ask_user_space_anew(tgid);
        p = 0;
      } else {
        __sync_val_compare_and_swap(&p->mm, 0, mm);  // first use since user space wrote it
        if (p->mm != mm)
          p = 0;  // another CPU claimed it for another image meanwhile
      }
    } else if (!p) {
      ask_user_space(tgid);
    }
    if (p) {
      s->known_tgid = tgid;
      s->known_mm = mm;
      s->known_epoch = now;
      s->known_generation = p->generation;
    }
  }
  struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs((void *)task);
  if (!regs)
    return 0;
  s->ip = regs->ip;
  s->sp = regs->sp;
  s->bp = regs->bp;
  if (!s->ip)
    return 0;
  s->functions = (max_depth & RBT_NATIVE_FUNCTIONS) != 0;
  max_depth &= ~RBT_NATIVE_FUNCTIONS;
  s->max = max_depth == 0 ? RBT_NATIVE_DEFAULT_DEPTH
           : max_depth > RBT_NATIVE_MAX_DEPTH ? RBT_NATIVE_MAX_DEPTH
                                              : (__u32)max_depth;
  s->stack.functions = s->functions;
  s->hash = (0xcbf29ce484222325ULL ^ tgid) * 0x100000001b3ULL;
  s->stack.tgid = tgid;
  s->stack.count = 0;
  s->stack.stop = RBT_NATIVE_STOP_END;
  s->chunk_base = 0;
  s->chunk_len = 0;
  if (!known && !p) {  // not mapped yet: the leaf alone, and the reason
    s->stack.pcs[0] = s->ip;
    s->stack.count = 1;
    s->stack.stop = RBT_NATIVE_STOP_UNKNOWN;
    s->hash = (s->hash ^ s->ip) * 0x100000001b3ULL;
    return s;
  }
  s->to_interpreter = anchor == RBT_NATIVE_TO_INTERPRETER;
  s->anchor = s->to_interpreter ? 0 : anchor & ((1ULL << 48) - 1);
  s->anchors_left = s->to_interpreter ? 0 : anchor >> 48;
  s->generation = known ? s->known_generation : p->generation;
  s->memo_usable = s->memo_count && s->memo_tgid == tgid && s->memo_mm == mm &&
                   s->memo_generation == s->generation && s->memo_functions == s->functions &&
                   s->memo_anchor == s->anchor && s->memo_to_interpreter == s->to_interpreter;
  s->memo_j = 0;
  s->verifying = 0;
  struct native_ctx c = {s, p};
  bpf_loop(RBT_NATIVE_MAX_DEPTH + 1, unwind_one, &c, 0);
  if (s->stack.stop == RBT_NATIVE_STOP_UNKNOWN)
    ask_user_space(tgid);  // a library loaded since user space read the maps, perhaps
  // The memo is a walk that ended at the stack's end or at a frame without CFI: one cut by
  // the depth, a read or an unknown pc ends elsewhere another time.
  int whole = s->stack.stop == RBT_NATIVE_STOP_END || s->stack.stop == RBT_NATIVE_STOP_NO_CFI;
  s->memo_count = whole ? s->stack.count : 0;
  s->memo_cur ^= 1;
  s->memo_stop = s->stack.stop;
  s->memo_tgid = tgid;
  s->memo_mm = mm;
  s->memo_generation = s->generation;
  s->memo_functions = s->functions;
  s->memo_anchor = s->anchor;
  s->memo_to_interpreter = s->to_interpreter;
  return s;
}

static __always_inline __u64 native_stack_id(__u64 max_depth, __u64 anchor) {
  struct native_scratch *s = walk_native(max_depth, anchor);
  if (!s)
    return 0;
  __u64 id = (s->hash ^ ((__u64)s->stack.stop << 56) ^ s->stack.count) | 1;
  // A stack this CPU met lately: known without a lookup of the map, whose entries nothing
  // deletes.
  __u64 *known = &s->stored[(id >> 8) & (STORED_IDS - 1)];
  if (id == *known)
    return id;
  if (bpf_map_lookup_elem(&rbt_native_stacks, &id)) {
    *known = id;
  } else {
    long err = bpf_map_update_elem(&rbt_native_stacks, &id, &s->stack, BPF_NOEXIST);
    if (err == 0 || err == -RBT_EEXIST)  // EEXIST: another CPU stored it meanwhile
      *known = id;
  }
  return id;
}

// No ctx argument, as rbt_rstack: it may stay a global function of its own.
__u64 rbt_nstack(__u64 max_depth) { return native_stack_id(max_depth, 0); }

// rstack(native)'s walk: ends at the root-most C method's function (rbt_rstack_anchor's
// answer: the function's address, and in the top 16 bits how many of its frames to pass), at
// the first interpreter frame when the Ruby stack has no C method (RBT_NATIVE_TO_INTERPRETER),
// or at the root when there is no Ruby stack (0). Needs RBT_NATIVE_FUNCTIONS in max_depth.
__u64 rbt_nstack_to(__u64 max_depth, __u64 anchor) { return native_stack_id(max_depth, anchor); }
