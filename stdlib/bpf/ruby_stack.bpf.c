// rstack: the Ruby stack of the thread a probe fired on, walked inside BPF.
//
// Codegen calls `rbt_rstack(max_depth)`; it returns a stack id (odd) whose frames are in
// rbt_ruby_stacks (or rbt_ruby_stacks_more, or for a moment rbt_ruby_stacks_spill), and whose
// names and lines are in rbt_ruby_frames; or an even id saying why there is no stack (RBT_RUBY_EMPTY_*: not a Ruby
// thread, a process user space has not inspected yet...). docs/rstack-values.md has the rest. Per sample we only walk and hash raw (iseq, pc) pairs;
// strings and lines are read once, when a stack is new (design: ruby-stack.md §5).
//
// The thread's execution context comes from the TLS variable ruby_current_ec, reached from the
// thread pointer (fsbase), so a thread running C code without the GVL gets its own stack and a
// fiber gets the fiber's (§1). Ruby 2.7 has no such variable: there the walker finds the thread
// in the VM's threads list by its pthread_t, which is the thread pointer (RBT_RUBY_THREAD_LIST).
// Offsets are data (ruby_layouts.h), filled in by the runtime.
//
// Built twice (stdlib/bpf/CMakeLists.txt). With RBT_RUBY_WALKER_OBJECT: a BPF object, compiled
// at build time, holding the walker's entry points (rbt_rstack, rbt_rstack_exact,
// rbt_rstack_cut, rbt_rstack_anchor, rbt_rstack_reference) as global BPF functions with
// integer arguments, and the discovery programs; libbpf's static linker joins it with every
// script that uses rstack, whose code only declares them (codegen/link_walker.h), so no LLVM
// time goes to the walker at run time and the verifier checks each once per program, as a
// global function. Without: bitcode with the frame accessors (rlabel, rpath, rline,
// strcontains(rstack, ...)), which take pointers and are inlined into the script like the rest
// of stdlib/bpf. The maps both use are weak, identical definitions the linker merges into one.

#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf_helpers.h>

#define RBT_ENOMEM 12

#include "native_unwind.h"  // RBT_NATIVE_TO_INTERPRETER, rbt_rstack_anchor's answer
#include "ruby_layouts.h"

// Every map is defined in both builds: weak, so that the linker keeps one.
#define RBT_RUBY_MAP __attribute__((weak)) SEC(".maps")

// Only what we read of the kernel's task, relocated against the running kernel's BTF (CO-RE).
struct thread_struct {
  unsigned long fsbase;
} __attribute__((preserve_access_index));
struct task_struct {
  struct thread_struct thread;
  struct task_struct *group_leader;
  void *mm;  // the address space: an exec gets a new one
  __u64 start_boottime;
  int pid, tgid;  // for discovery's fork program (ruby_discovery.h)
} __attribute__((preserve_access_index));

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, RBT_RUBY_MAX_LAYOUTS);
  __type(key, __u32);
  __type(value, struct rbt_ruby_layout);
} rbt_ruby_layouts RBT_RUBY_MAP;

// LRU: fork copies records to children (ruby_discovery.h) and nothing deletes them at exit; a
// record evicted from a live process is found again like an unknown process.
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);
  __type(value, struct rbt_ruby_proc);
} rbt_ruby_procs RBT_RUBY_MAP;

// Moved after every write of rbt_ruby_procs: a CPU that read a record at these epochs may use
// its copy of it (scratch.proc) for the same process and address space until one moves. Two
// counters, each with one kind of writer: [0] discovery's programs (ruby_discovery.h) add to
// atomically; [1] user space writes (it cannot add atomically to a map value, and a
// read-modify-write of a shared counter could undo a BPF increment).
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, __u32);
} rbt_ruby_epoch RBT_RUBY_MAP;

// Processes seen by a probe but not yet in rbt_ruby_procs: user space inspects them.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __type(key, __u32);
  __type(value, __u64);
} rbt_ruby_unknown RBT_RUBY_MAP;

// Allocated on use: an entry is 16 KiB, most are never made.
#define RBT_RUBY_STACKS_MAP(name)                                                                  \
  struct {                                                                                         \
    __uint(type, BPF_MAP_TYPE_HASH);                                                               \
    __uint(max_entries, 16384);                                                                    \
    __uint(map_flags, BPF_F_NO_PREALLOC);                                                          \
    __type(key, __u64);                                                                            \
    __type(value, struct rbt_ruby_stack);                                                          \
  } name RBT_RUBY_MAP

RBT_RUBY_STACKS_MAP(rbt_ruby_stacks);

// Where a new stack goes when rbt_ruby_stacks cannot allocate its entry. That map allocates
// from a per-CPU cache that keeps about one free 16 KiB element (the kernel's watermarks for
// large elements) and is refilled by irq_work, which cannot run while a perf-event or other
// irqs-off program runs: the second new stack of one such run (two rstacks of different depths
// in one probe) failed with ENOMEM and printed as "[unknown Ruby stack]". Every map has a cache
// of its own, so this second allocating map takes the second new stack of a run; it is never
// drained and needs no hurry from user space.
RBT_RUBY_STACKS_MAP(rbt_ruby_stacks_more);

// The third and later new stacks of one run: this map is preallocated, so an insert here cannot
// fail for memory; user space moves its entries into rbt_ruby_stacks (where a syscall's
// allocation is refilled at once) on every poll. Alone (before rbt_ruby_stacks_more) it took
// the second new stack of every sample, and a user space kept off the CPU for some 60 ms (a
// loaded machine) let it fill: the stacks after were lost, "[unknown Ruby stack]".
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, RBT_RUBY_SPILL_STACKS);
  __type(key, __u64);
  __type(value, struct rbt_ruby_stack);
} rbt_ruby_stacks_spill RBT_RUBY_MAP;

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 32768);
  __type(key, struct rbt_ruby_frame_key);
  __type(value, struct rbt_ruby_frame);
} rbt_ruby_frames RBT_RUBY_MAP;

// The recorded stack `id` names, in whichever of the three maps holds it (the main one first:
// a known stack costs one lookup).
static __always_inline struct rbt_ruby_stack *stored_stack(__u64 *id) {
  struct rbt_ruby_stack *st = bpf_map_lookup_elem(&rbt_ruby_stacks, id);
  if (!st)
    st = bpf_map_lookup_elem(&rbt_ruby_stacks_more, id);
  if (!st)
    st = bpf_map_lookup_elem(&rbt_ruby_stacks_spill, id);
  return st;
}

// Per-CPU scratch: the BPF stack has 512 bytes, a stack record alone is 16 KiB.
#define BATCH 8
#define CF_BUF 576  // BATCH * 64 plus room for a masked 8-byte read at offset <= 511
#define BODY_BUF 160
// Per-CPU memos of hash lookups whose buckets the sampled program pushes out of the caches
// between samples (as native_stack.bpf.c's stored ids): a hot loop's leaf frame moves over a
// few lines and a few dozen pcs, so its stacks are a handful of ids.
#define KNOWN_IDS 64   // stack ids this CPU found or stored (nothing deletes a stored stack)
#define LEAF_LINES 64  // (iseq, pc, image) -> line of leaf frames this CPU looked up

struct leaf_line {
  __u64 addr, pc;
  __u32 tgid, start;
  __u64 line;
};

struct scratch {
  struct rbt_ruby_layout l;
  __u32 l_index;  // which layout `l` holds, + 1 (0: none yet); layouts are written before attach
  // The process record this CPU last read, for (proc_tgid, proc_mm) at proc_epoch: the lookup
  // of rbt_ruby_procs (an LRU hash whose buckets the sampled program evicts between samples)
  // is skipped while all three hold.
  __u32 proc_tgid, proc_epoch_bpf, proc_epoch_user;
  __u64 proc_mm;
  struct rbt_ruby_proc proc;
  __u64 cfp, end, hash;
  __u32 max, has_leaf, leaf, counting;
  __u64 rest;  // control frames left when the walk stopped at the depth limit
  __u64 last_cut;  // rbt_rstack_cut's answer
  __u64 global_symbols;
  __u64 th_head, th_node, th_tp, th_ec;  // the threads list lookup (find_thread)
  __u64 anchor_root, anchor_count;       // rbt_rstack_anchor's scan
  __u64 last_id;  // the id of the stack in `stack` (take_stack's last answer on this CPU)
  // rbt_rstack_anchor's last answer for a root C method: its function, a fact of the image
  // (tgid, start), so the next sample under the same method skips the rbt_ruby_frames lookup.
  __u64 anchor_method, anchor_start, anchor_cfunc;
  __u32 anchor_tgid;
  // rbt_rstack_anchor's last nonzero answer and the stack it was for: the answer is a fact of
  // the stack (its frames are in its id), and a profile repeats its stacks.
  __u64 anchor_id, anchor_answer;
  __u64 known[KNOWN_IDS];
  struct leaf_line lines[LEAF_LINES];
  __u8 cf[CF_BUF];
  __u8 body[BODY_BUF];
  __u64 succ[10];
  __u64 rstr[4];
  struct rbt_ruby_frame_key fkey;
  struct rbt_ruby_frame frame;
  struct rbt_ruby_stack stack;
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct scratch);
} rbt_ruby_scratch RBT_RUBY_MAP;

#ifdef RBT_RUBY_WALKER_OBJECT

static __always_inline __u64 read_u64(__u64 addr) {
  __u64 v = 0;
  bpf_probe_read_user(&v, sizeof(v), (const void *)addr);
  return v;
}

static __always_inline __u64 buf_u64(const __u8 *buf, __u32 off) {
  return *(const __u64 *)(buf + (off & 511));
}

// ---- The walk: BATCH control frames per iteration, leaf to root. ----

static __always_inline void record(struct scratch *s, __u64 addr, __u64 pc) {
  __u32 n = s->stack.count;
  if (n >= RBT_RUBY_MAX_DEPTH)
    return;
  s->stack.frames[n & (RBT_RUBY_MAX_DEPTH - 1)].addr = addr;
  s->stack.frames[n & (RBT_RUBY_MAX_DEPTH - 1)].pc = pc;
  s->stack.count = n + 1;
  // FNV-1a-like mixing of whole words: stable and cheap. The leaf Ruby frame's pc moves on
  // every sample of a hot loop; its line is mixed in after the walk instead (see rbt_rstack),
  // so one line makes one stack.
  s->hash = (s->hash ^ addr) * 0x100000001b3ULL;
  if (pc && !s->has_leaf) {
    s->has_leaf = 1;
    s->leaf = n;
    return;
  }
  s->hash = (s->hash ^ pc) * 0x100000001b3ULL;
}

// A control frame without a pc: a C method frame when ep[-2] is a method entry of a C function;
// dummy and ifunc frames are skipped, as rb_profile_frames does.
static __always_inline __u64 cfunc_entry(struct scratch *s, __u64 ep) {
  __u64 me = read_u64(ep - 16);
  if (!me)
    return 0;
  __u64 head[3] = {};  // flags, defined_class, def
  if (bpf_probe_read_user(head, sizeof(head), (const void *)me))
    return 0;
  if ((head[0] & 0x1f) != RBT_RUBY_T_IMEMO ||
      ((head[0] >> RBT_RUBY_FL_USHIFT) & 0x0f) != RBT_RUBY_IMEMO_MENT)
    return 0;
  __u64 def = s->l.cme_def == 16 ? head[2] : read_u64(me + s->l.cme_def);
  __u32 type = 0;
  bpf_probe_read_user(&type, sizeof(type), (const void *)def);
  return (type & 0x0f) == RBT_RUBY_METHOD_TYPE_CFUNC ? me : 0;
}

// bpf_loop wants its context on the BPF stack: it carries the scratch pointer.
struct loop_ctx {
  struct scratch *s;
};

static long walk_batch(__u64 index, void *ctx) {
  struct scratch *s = ((struct loop_ctx *)ctx)->s;
  __u32 size = s->l.cfp_size;
  if (size < 32 || size > 64 || s->cfp > s->end)
    return 1;
  __u64 left = (s->end - s->cfp) / size + 1;
  __u32 k = left < BATCH ? left : BATCH;
  __u32 bytes = k * size;
  if (bytes == 0 || bytes > BATCH * 64)
    return 1;
  if (bpf_probe_read_user(s->cf, bytes, (const void *)s->cfp))
    return 1;
  for (__u32 j = 0; j < BATCH; j++) {
    if (j >= k)
      break;
    __u32 base = j * size;
    __u64 pc = buf_u64(s->cf, base + s->l.cfp_pc);
    __u64 addr = buf_u64(s->cf, base + s->l.cfp_iseq);
    if (!pc)
      addr = cfunc_entry(s, buf_u64(s->cf, base + s->l.cfp_ep));
    if (addr && s->counting)
      s->stack.truncated++;
    else if (addr && s->stack.count < s->max)
      record(s, addr, pc);
    else if (addr)
      return 1;  // at the depth limit: s->cfp is the first frame not kept
    s->cfp += size;
  }
  return s->cfp > s->end;
}

// ---- Resolving a frame once: label, path and line (Ruby), or the C method's name. ----

// Copies a Ruby String's bytes into dst (NUL-terminated, cut at cap - 1).
static __always_inline void read_rstring(struct scratch *s, __u64 str, char *dst, __u32 cap) {
  dst[0] = 0;
  if (!str || bpf_probe_read_user(s->rstr, sizeof(s->rstr), (const void *)str))
    return;
  __u64 flags = s->rstr[0];
  if ((flags & 0x1f) != RBT_RUBY_T_STRING)
    return;
  __u64 ptr, len;
  if (flags & RBT_RUBY_STRING_NOEMBED) {
    ptr = read_u64(str + s->l.rstring_heap_ptr);
    len = s->rstr[2];  // both layouts keep the heap length at 16
  } else {
    ptr = str + s->l.rstring_embed;
    len = s->l.rstring_embed_len_in_flags ? (flags >> 14) & 0x1f : s->rstr[2];
  }
  if (len > cap - 1)
    len = cap - 1;
  len &= (RBT_RUBY_PATH_LEN - 1);
  if (bpf_probe_read_user(dst, len, (const void *)ptr))
    len = 0;
  dst[len & (RBT_RUBY_PATH_LEN - 1)] = 0;
}

// Element 0 of pathobj when it is [path, realpath], else pathobj itself.
static __always_inline __u64 path_string(struct scratch *s, __u64 pathobj) {
  __u64 flags = read_u64(pathobj);
  if ((flags & 0x1f) != RBT_RUBY_T_ARRAY)
    return pathobj;
  if (flags & RBT_RUBY_ARRAY_EMBED)
    return read_u64(pathobj + s->l.rarray_embed);
  return read_u64(read_u64(pathobj + s->l.rarray_heap_ptr));
}

static __always_inline __u32 line_of(struct scratch *s, __u64 pc) {
  const __u8 *b = s->body;
  __u64 encoded = buf_u64(b, s->l.body_iseq_encoded);
  __u64 info = buf_u64(b, s->l.insns_info_body);
  __u32 n = (__u32)buf_u64(b, s->l.insns_info_size);
  __u64 succ = buf_u64(b, s->l.insns_info_succ);
  __u64 first = buf_u64(b, s->l.body_location + s->l.loc_first_lineno) >> 1;  // a Fixnum
  __u32 entry = s->l.insn_info_entry_size;
  __u32 idx = 1;
  if (n == 0 || !info)
    return (__u32)first;
  if (n > 1) {
    if (!succ)
      return (__u32)first;
    __u64 pos = rbt_ruby_insn_pos(pc, encoded);
    __u64 off = rbt_ruby_succ_read_offset(pos);
    __u32 bytes = pos < RBT_RUBY_SUCC_IMM_ENTRIES ? 8 : RBT_RUBY_SUCC_BLOCK_BYTES;
    if (bpf_probe_read_user(s->succ, bytes, (const void *)(succ + off)))
      return (__u32)first;
    idx = rbt_ruby_succ_index(pos, s->succ);
    if (idx == 0 || idx > n)
      return (__u32)first;
  }
  __u32 line = 0;
  bpf_probe_read_user(&line, sizeof(line), (const void *)(info + (__u64)(idx - 1) * entry));
  return line;
}

// The C method's name from ruby_global_symbols (ID → String), when user space found the table.
static __always_inline void cfunc_name(struct scratch *s, __u64 id) {
  __u64 table = s->global_symbols;
  if (!table || !id)
    return;
  __u64 serial = id > RBT_RUBY_LAST_OP_ID ? id >> 4 : id;
  // rb_symbols_t: {rb_id_serial_t last_id; st_table *str_sym; VALUE ids; ...}
  __u64 ids = read_u64(table + 16);
  __u64 flags = read_u64(ids);
  __u64 elems = flags & RBT_RUBY_ARRAY_EMBED ? ids + s->l.rarray_embed
                                             : read_u64(ids + s->l.rarray_heap_ptr);
  __u64 chunk = read_u64(elems + (serial / RBT_RUBY_ID_ENTRY_UNIT) * 8);
  __u64 cflags = read_u64(chunk);
  __u64 celems = cflags & RBT_RUBY_ARRAY_EMBED ? chunk + s->l.rarray_embed
                                               : read_u64(chunk + s->l.rarray_heap_ptr);
  __u64 str = read_u64(celems + (serial % RBT_RUBY_ID_ENTRY_UNIT) * 2 * 8);
  read_rstring(s, str, s->frame.label, RBT_RUBY_LABEL_LEN);
}

static __always_inline void resolve(struct scratch *s, __u64 addr, __u64 pc) {
  struct rbt_ruby_frame *f = &s->frame;
  f->label[0] = 0;
  f->path[0] = 0;
  f->line = 0;
  f->cfunc = 0;
  if (pc == 0) {
    f->kind = RBT_RUBY_FRAME_CFUNC;
    __u64 def = read_u64(addr + s->l.cme_def);
    f->cfunc = read_u64(def + s->l.def_cfunc_func);
    cfunc_name(s, read_u64(def + s->l.def_original_id));
    return;
  }
  f->kind = RBT_RUBY_FRAME_RUBY;
  __u64 body = read_u64(addr + s->l.iseq_body);
  if (!body || bpf_probe_read_user(s->body, BODY_BUF, (const void *)body))
    return;
  __u32 loc = s->l.body_location;
  read_rstring(s, buf_u64(s->body, loc + s->l.loc_label), f->label, RBT_RUBY_LABEL_LEN);
  read_rstring(s, path_string(s, buf_u64(s->body, loc + s->l.loc_pathobj)), f->path,
               RBT_RUBY_PATH_LEN);
  f->line = line_of(s, pc);
}

// Sets s->fkey to frame `index` of the walked stack; false past its end.
static __always_inline int frame_key_at(struct scratch *s, __u64 index) {
  if (index >= s->stack.count)
    return 0;
  __u32 i = index & (RBT_RUBY_MAX_DEPTH - 1);
  s->fkey.addr = s->stack.frames[i].addr;
  s->fkey.pc = s->stack.frames[i].pc;
  return 1;
}

static long resolve_one(__u64 index, void *ctx) {
  struct scratch *s = ((struct loop_ctx *)ctx)->s;
  if (!frame_key_at(s, index))
    return 1;
  struct rbt_ruby_frame *known = bpf_map_lookup_elem(&rbt_ruby_frames, &s->fkey);
  // A C method met before its process's symbol table was known has no name yet: name it now
  // that the table is (user space names it by ELF symbol only when the function is exported).
  if (known && (known->kind != RBT_RUBY_FRAME_CFUNC || known->label[0] || !s->global_symbols))
    return 0;
  resolve(s, s->fkey.addr, s->fkey.pc);
  if (known && !s->frame.label[0])
    return 0;
  bpf_map_update_elem(&rbt_ruby_frames, &s->fkey, &s->frame, BPF_ANY);
  return 0;
}

// ---- Entry point ----

// One thread of the threads list per call: the one whose pthread_t is th_tp sets th_ec.
static long find_thread(__u64 index, void *ctx) {
  struct scratch *s = ((struct loop_ctx *)ctx)->s;
  __u64 node = s->th_node;
  if (!node || node == s->th_head)
    return 1;  // back at the head: not a Ruby thread
  __u64 th = node - s->l.thread_node;
  // node.next, ec and the pthread_t (or th->nt) in one read: the unit tests keep them in it.
  if (bpf_probe_read_user(s->cf, RBT_RUBY_THREAD_READ, (const void *)th))
    return 1;
  __u64 id = s->l.thread_nt ? read_u64(buf_u64(s->cf, s->l.thread_nt) + s->l.thread_native_id)
                            : buf_u64(s->cf, s->l.thread_native_id);
  if (id == s->th_tp) {
    s->th_ec = buf_u64(s->cf, s->l.thread_ec);
    return 1;
  }
  s->th_node = buf_u64(s->cf, s->l.thread_node);
  return 0;
}

// Ruby without a TLS ec: the current thread's ec from the VM's threads list.
static __always_inline __u64 listed_thread_ec(struct scratch *s, const struct rbt_ruby_proc *p,
                                              __u64 tp) {
  __u64 vm = read_u64(p->vm_ptr);
  if (!vm)
    return 0;  // the VM is not up yet
  __u64 owner = s->l.vm_main_ractor ? read_u64(vm + s->l.vm_main_ractor) : vm;
  if (!owner)
    return 0;
  s->th_head = owner + s->l.threads_head;
  s->th_node = read_u64(s->th_head);
  s->th_tp = tp;
  s->th_ec = 0;
  struct loop_ctx lc = {s};
  bpf_loop(RBT_RUBY_MAX_THREADS, find_thread, &lc, 0);
  return s->th_ec;
}

// The thread's rb_execution_context_t, or 0 when the thread has not run Ruby.
static __always_inline __u64 current_ec(struct scratch *s, const struct rbt_ruby_proc *p) {
  struct task_struct *task = bpf_get_current_task_btf();
  __u64 tp = task->thread.fsbase;
  if (!tp)
    return 0;
  if (p->tls_kind == RBT_RUBY_THREAD_LIST)
    return listed_thread_ec(s, p, tp);
  if (p->tls_kind == RBT_RUBY_TLS_TPOFF)
    return read_u64(tp + p->tls_offset);
  __u64 dtv = read_u64(tp + 8);
  __u64 block = dtv ? read_u64(dtv + p->tls_modid * 16) : 0;
  // An unallocated block of a dynamically loaded module reads as 0 or -1 (TLS_DTV_UNALLOCATED).
  if (!block || block == (__u64)-1)
    return 0;
  return read_u64(block + p->tls_offset);
}

// Looks the process up and walks the current thread's control frames into s->stack (raw
// frames and their hash). Null when there is no stack to record; *why then says why, as one of
// the RBT_RUBY_EMPTY_* ids an empty rstack prints with.
static __always_inline struct scratch *walk_current(__u64 max_depth, __u64 *why) {
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32;
  *why = RBT_RUBY_EMPTY_NOT_RUBY_THREAD;
  if (tgid == 0)
    return 0;
  __u32 zero = 0, one = 1;
  struct scratch *s = bpf_map_lookup_elem(&rbt_ruby_scratch, &zero);
  __u32 *epoch_bpf = bpf_map_lookup_elem(&rbt_ruby_epoch, &zero);
  __u32 *epoch_user = bpf_map_lookup_elem(&rbt_ruby_epoch, &one);
  if (!s || !epoch_bpf || !epoch_user)
    return 0;
  struct task_struct *task = bpf_get_current_task_btf();
  __u64 mm = (__u64)task->mm;
  // Read before the record: a write after this moves them.
  __u32 now_bpf = *epoch_bpf, now_user = *epoch_user;
  struct rbt_ruby_proc *p = &s->proc;
  if (s->proc_tgid != tgid || s->proc_mm != mm || s->proc_epoch_bpf != now_bpf ||
      s->proc_epoch_user != now_user) {
    s->proc_tgid = 0;
    p = bpf_map_lookup_elem(&rbt_ruby_procs, &tgid);
    if (p) {
      s->proc = *p;
      p = &s->proc;
      s->proc_tgid = tgid;
      s->proc_mm = mm;
      s->proc_epoch_bpf = now_bpf;
      s->proc_epoch_user = now_user;
    }
  }
  // A record of an earlier process under the same pid is no record: user space inspects anew.
  if (p && p->start && task->group_leader->start_boottime / RBT_RUBY_NS_PER_TICK != p->start)
    p = 0;
  if (!p) {
    __u64 when = bpf_ktime_get_ns();
    bpf_map_update_elem(&rbt_ruby_unknown, &tgid, &when, BPF_NOEXIST);
    *why = RBT_RUBY_EMPTY_NOT_INSPECTED;
    return 0;
  }
  *why = RBT_RUBY_EMPTY_NOT_RUBY_PROCESS;
  if (p->layout == RBT_RUBY_NOT_RUBY)
    return 0;
  *why = RBT_RUBY_EMPTY_UNKNOWN_LAYOUT;
  if (s->l_index != p->layout + 1) {
    __u32 layout = p->layout;
    struct rbt_ruby_layout *l = bpf_map_lookup_elem(&rbt_ruby_layouts, &layout);
    if (!l)
      return 0;
    __builtin_memcpy(&s->l, l, sizeof(*l));
    s->l_index = layout + 1;
  }
  if (s->l.ec_cfp != 16 || s->l.ec_vm_stack_size != 8)
    return 0;  // every known layout agrees; a new one needs this read generalised
  *why = RBT_RUBY_EMPTY_NOT_RUBY_THREAD;
  __u64 ec = current_ec(s, p);
  if (!ec)
    return 0;
  *why = RBT_RUBY_EMPTY_NOT_INITIALISED;
  __u64 head[3] = {};  // vm_stack, vm_stack_size, cfp
  if (bpf_probe_read_user(head, sizeof(head), (const void *)(ec + s->l.ec_vm_stack)))
    return 0;
  if (!head[0] || !head[2])
    return 0;
  s->cfp = head[2];
  s->end = head[0] + head[1] * 8 - 2 * (__u64)s->l.cfp_size;
  s->max = max_depth == 0 ? RBT_RUBY_DEFAULT_DEPTH
           : max_depth > RBT_RUBY_MAX_DEPTH ? RBT_RUBY_MAX_DEPTH
                                            : (__u32)max_depth;
  s->global_symbols = p->global_symbols;
  s->hash = (0xcbf29ce484222325ULL ^ tgid ^ ((__u64)p->image << 32)) * 0x100000001b3ULL;
  s->stack.tgid = tgid;
  s->stack.count = 0;
  s->stack.truncated = 0;
  s->stack.start = p->image;
  s->has_leaf = 0;
  s->counting = 0;
  // Dummy frames are skipped, so a walk may visit more control frames than it keeps.
  struct loop_ctx lc = {s};
  bpf_loop(2 * RBT_RUBY_MAX_DEPTH / BATCH, walk_batch, &lc, 0);
  // What is left identifies the stack along with its frames (it goes into the id); how many
  // frames that is exactly is counted only for a new stack (count_rest).
  s->rest = s->cfp <= s->end ? (s->end - s->cfp) / s->l.cfp_size + 1 : 0;
  *why = RBT_RUBY_EMPTY_NO_FRAMES;
  if (s->stack.count == 0 && s->rest == 0)
    return 0;
  s->fkey.tgid = tgid;
  s->fkey.start = p->image;
  return s;
}

// For a new stack cut at the depth limit: walks on from where the walk stopped, counting the
// frames it would have kept (dummy and ifunc frames are no frames), so the marker says exactly
// how many were cut. Per sample only the control frames left are counted (s->rest).
static __always_inline void count_rest(struct scratch *s) {
  if (!s->rest)
    return;
  s->counting = 1;
  struct loop_ctx lc = {s};
  bpf_loop(2 * RBT_RUBY_MAX_DEPTH / BATCH, walk_batch, &lc, 0);
  if (s->cfp <= s->end)  // out of budget (or unreadable) before the root
    s->stack.truncated |= RBT_RUBY_TRUNCATED_AT_LEAST;
}

// A stack's id: its kept frames and whether any were cut, not how many. The same top frames
// over stacks of different depths are one map key (as ustack(n) is in bpftrace); the exact
// count, which only a walk to the root knows, goes with per-event output (rbt_rstack_cut).
static __always_inline __u64 stack_id(struct scratch *s) {
  return (s->hash ^ ((__u64)(s->rest != 0) << 32) ^ s->stack.count) | 1;
}

static __always_inline int stack_known(__u64 *id) {
  return stored_stack(id) != 0;
}

// Records a new stack; when the allocating maps are out of free elements for now, in the
// preallocated spill map (see rbt_ruby_stacks_more and rbt_ruby_stacks_spill).
static __always_inline void store_stack(struct scratch *s, __u64 *id) {
  if (bpf_map_update_elem(&rbt_ruby_stacks, id, &s->stack, BPF_NOEXIST) == -RBT_ENOMEM &&
      bpf_map_update_elem(&rbt_ruby_stacks_more, id, &s->stack, BPF_NOEXIST) == -RBT_ENOMEM)
    bpf_map_update_elem(&rbt_ruby_stacks_spill, id, &s->stack, BPF_NOEXIST);
}

// The walk and the record of rbt_rstack; with `exact`, the frames cut below the depth limit
// are counted for this very event (s->last_cut), which per-event output prints.
static __always_inline __u64 take_stack(__u64 max_depth, int exact) {
  __u64 why = 0;
  struct scratch *s = walk_current(max_depth, &why);
  if (!s)
    return why;
  struct loop_ctx lc = {s};
  if (s->has_leaf) {
    // The leaf Ruby frame counts by line: resolve it now if this pc is new.
    __u32 i = s->leaf & (RBT_RUBY_MAX_DEPTH - 1);
    s->fkey.addr = s->stack.frames[i].addr;
    s->fkey.pc = s->stack.frames[i].pc;
    struct leaf_line *memo =
        &s->lines[(s->fkey.pc ^ (s->fkey.pc >> 6) ^ s->fkey.addr) & (LEAF_LINES - 1)];
    __u32 line;
    if (memo->pc == s->fkey.pc && memo->addr == s->fkey.addr && memo->tgid == s->fkey.tgid &&
        memo->start == s->fkey.start) {
      line = memo->line;
    } else {
      struct rbt_ruby_frame *f = bpf_map_lookup_elem(&rbt_ruby_frames, &s->fkey);
      if (f) {
        line = f->line;
      } else {
        resolve(s, s->fkey.addr, s->fkey.pc);
        bpf_map_update_elem(&rbt_ruby_frames, &s->fkey, &s->frame, BPF_NOEXIST);
        line = s->frame.line;
      }
      memo->addr = s->fkey.addr;
      memo->pc = s->fkey.pc;
      memo->tgid = s->fkey.tgid;
      memo->start = s->fkey.start;
      memo->line = line;
    }
    s->hash = (s->hash ^ line) * 0x100000001b3ULL;
  }
  __u64 id = stack_id(s);
  __u64 *known = &s->known[(id >> 8) & (KNOWN_IDS - 1)];
  if (id == *known || stack_known(&id)) {
    *known = id;
    if (exact)
      count_rest(s);
    s->last_cut = s->stack.truncated | RBT_RUBY_CUT_EXACT;
    s->last_id = id;
    return id;
  }
  // A new stack: name its frames first, so user space never sees a stack without its frames.
  count_rest(s);
  s->last_cut = s->stack.truncated | RBT_RUBY_CUT_EXACT;
  bpf_loop(s->stack.count, resolve_one, &lc, 0);
  store_stack(s, &id);
  s->last_id = id;
  return id;
}

// No ctx argument: when a probe takes several rstacks this stays a function of its own, which
// BTF calls global, and the verifier would not accept a void * ctx parameter of a global one.
__u64 rbt_rstack(__u64 max_depth) { return take_stack(max_depth, 0); }

// rstack for print()/printf(): the same id, and the exact cut count for rbt_rstack_cut.
__u64 rbt_rstack_exact(__u64 max_depth) {
  __u32 zero = 0;
  struct scratch *s = bpf_map_lookup_elem(&rbt_ruby_scratch, &zero);
  if (s)
    s->last_cut = 0;
  return take_stack(max_depth, 1);
}

// How many frames the last rbt_rstack_exact cut on this CPU, | RBT_RUBY_CUT_EXACT (0: none
// walked).
__u64 rbt_rstack_cut(void) {
  __u32 zero = 0;
  struct scratch *s = bpf_map_lookup_elem(&rbt_ruby_scratch, &zero);
  return s ? s->last_cut : 0;
}

// ---- The anchor of a mixed stack (rstack(native)) ----
//
// The native walk of rstack(native) can stop at the root-most C method's function: every
// native frame rootward of it is the interpreter or the launch (main, _start), which the merge
// drops (docs/native-stack.md). The answer packs that function's address (a user address,
// below 2^47) with how many frames of the stack are that C method (in the top 16 bits): a
// recursive `each` puts its function on the native stack once per frame.
// The scan's state lives in the per-CPU scratch, not on the BPF stack: the verifier would
// follow every value of a counter kept on the stack through the loop.
struct anchor_scan {
  struct rbt_ruby_stack *st;
  struct scratch *s;
};

static long root_cfunc(__u64 index, void *ctx) {
  struct anchor_scan *c = ctx;
  __u64 count = c->st->count;
  if (index >= count || index >= RBT_RUBY_MAX_DEPTH)
    return 1;
  __u32 k = (__u32)(count - 1 - index) & (RBT_RUBY_MAX_DEPTH - 1);
  if (c->st->frames[k].pc != 0)
    return 0;
  if (!c->s->anchor_root)
    c->s->anchor_root = c->st->frames[k].addr;
  if (c->st->frames[k].addr == c->s->anchor_root)
    c->s->anchor_count++;
  return 0;
}

static __always_inline __u64 anchor_of(struct anchor_scan *cp, __u64 id);

__u64 rbt_rstack_anchor(__u64 id) {
  if (!(id & 1))
    return 0;
  __u32 zero = 0;
  struct anchor_scan c = {};
  c.s = bpf_map_lookup_elem(&rbt_ruby_scratch, &zero);
  if (!c.s)
    return 0;
  if (c.s->anchor_id == id)
    return c.s->anchor_answer;
  __u64 answer = anchor_of(&c, id);
  if (answer) {
    c.s->anchor_id = id;
    c.s->anchor_answer = answer;
  }
  return answer;
}

static __always_inline __u64 anchor_of(struct anchor_scan *cp, __u64 id) {
  struct anchor_scan c = *cp;
  // The stack just walked is still in the scratch, in cache: the stored record (16 KiB,
  // likely cold by the next sample) is read only for an id from elsewhere. The scratch's
  // `truncated` is exact only for a new stack; `rest` says whether the walk was cut.
  int cut;
  if (c.s->last_id == id) {
    c.st = &c.s->stack;
    cut = c.s->rest != 0;
  } else {
    c.st = stored_stack(&id);
    if (!c.st)
      return 0;
    cut = c.st->truncated != 0;
  }
  c.s->anchor_root = 0;
  c.s->anchor_count = 0;
  bpf_loop(c.st->count, root_cfunc, &c, 0);
  __u64 root = c.s->anchor_root, count = c.s->anchor_count;
  if (!root && c.st->count && !cut)
    return RBT_NATIVE_TO_INTERPRETER;
  if (!root || count >= (1 << 15))
    return 0;
  if (c.s->anchor_method == root && c.s->anchor_tgid == c.st->tgid &&
      c.s->anchor_start == c.st->start)
    return count << 48 | c.s->anchor_cfunc;
  struct rbt_ruby_frame_key key = {root, 0, c.st->tgid, c.st->start};
  struct rbt_ruby_frame *f = bpf_map_lookup_elem(&rbt_ruby_frames, &key);
  if (!f || !f->cfunc || (f->cfunc >> 48))
    return 0;
  c.s->anchor_method = root;
  c.s->anchor_tgid = c.st->tgid;
  c.s->anchor_start = c.st->start;
  c.s->anchor_cfunc = f->cfunc;
  return count << 48 | f->cfunc;
}

#include "ruby_discovery.h"

// ---- The bench's reference (bench/rstack_cost.py): rbperf's way, not used by rbt itself. ----

// Resolves a frame whether or not it is known, as a walker that reads label and path strings on
// every sample must; the result goes to rbt_ruby_frames so the stacks still print.
static long resolve_always(__u64 index, void *ctx) {
  struct scratch *s = ((struct loop_ctx *)ctx)->s;
  if (!frame_key_at(s, index))
    return 1;
  resolve(s, s->fkey.addr, s->fkey.pc);
  bpf_map_update_elem(&rbt_ruby_frames, &s->fkey, &s->frame, BPF_ANY);
  if (index == s->leaf && s->has_leaf)
    s->hash = (s->hash ^ s->frame.line) * 0x100000001b3ULL;
  return 0;
}

// Same walk, then every frame's strings and line read on every sample. Codegen calls this in
// place of rbt_rstack only when RBT_RSTACK_REFERENCE=1 (src/codegen/lower_rstack.cpp).
__u64 rbt_rstack_reference(__u64 max_depth) {
  __u64 why = 0;
  struct scratch *s = walk_current(max_depth, &why);
  if (!s)
    return why;
  struct loop_ctx lc = {s};
  bpf_loop(s->stack.count, resolve_always, &lc, 0);
  __u64 id = stack_id(s);
  count_rest(s);
  store_stack(s, &id);
  return id;
}

#else  // the frame accessors (bitcode)

// ---- Ruby frames as values: rlabel, rpath, rline and strcontains(rstack, ...) ----
//
// They read a stack already recorded under its id (the value rstack returned in this probe, or
// a walk just made for them), so a probe that keys on rstack and filters on one of its frames
// walks once. The frames' strings were read when the stack was new: these cost map lookups.

// The frame at `index` of stack `id` (0: the leaf; -1: the root, -2: the frame the root
// called...); null for an empty stack, an index past either end, a root-relative index on a
// stack cut at its depth limit (its root is unknown), or a frame the LRU evicted.
static __always_inline struct rbt_ruby_frame *frame_at(__u64 id, __s64 index) {
  if (!(id & 1))
    return 0;
  struct rbt_ruby_stack *st = stored_stack(&id);
  if (!st)
    return 0;
  __s64 count = st->count, i = index;
  if (index < 0) {
    if (st->truncated)
      return 0;
    i = count + index;
  }
  if (i < 0 || i >= count || i >= RBT_RUBY_MAX_DEPTH)
    return 0;
  __u32 k = (__u32)i & (RBT_RUBY_MAX_DEPTH - 1);
  struct rbt_ruby_frame_key key = {st->frames[k].addr, st->frames[k].pc, st->tgid, st->start};
  return bpf_map_lookup_elem(&rbt_ruby_frames, &key);
}

// rlabel: the frame's label (`index`, `block in index`, a C method's name) into out, NUL-padded
// so that equal labels are equal map keys; "" when there is no such frame.
__u64 rbt_rlabel(__u64 id, __s64 index, char *out) {
  __builtin_memset(out, 0, RBT_RUBY_LABEL_LEN);
  struct rbt_ruby_frame *f = frame_at(id, index);
  if (f)
    bpf_probe_read_kernel_str(out, RBT_RUBY_LABEL_LEN, f->label);
  return 0;
}

// rpath: the frame's path ("" for a C method, whose path Ruby takes from its caller).
__u64 rbt_rpath(__u64 id, __s64 index, char *out) {
  __builtin_memset(out, 0, RBT_RUBY_PATH_LEN);
  struct rbt_ruby_frame *f = frame_at(id, index);
  if (f)
    bpf_probe_read_kernel_str(out, RBT_RUBY_PATH_LEN, f->path);
  return 0;
}

// rline: the frame's line (0 for a C method or no such frame).
__u64 rbt_rline(__u64 id, __s64 index) {
  struct rbt_ruby_frame *f = frame_at(id, index);
  return f ? f->line : 0;
}

struct label_scan {
  struct rbt_ruby_stack *st;
  struct rbt_ruby_frame *f;
  const char *needle;
  __u64 n_size;
  __u64 found;
};

// One start position of the needle in the frame's label (bpf_loop: the label's length is
// unknown to the verifier).
static long label_at(__u64 start, void *ctx) {
  struct label_scan *c = ctx;
  if (start >= RBT_RUBY_LABEL_LEN)
    return 1;
  const char *label = c->f->label;
  __u64 i = 0;
  for (; i < c->n_size && i < RBT_RUBY_LABEL_LEN; i++) {
    if (!c->needle[i]) {
      c->found = 1;
      return 1;
    }
    __u64 at = start + i;
    if (at >= RBT_RUBY_LABEL_LEN || label[at & (RBT_RUBY_LABEL_LEN - 1)] != c->needle[i])
      break;
  }
  if (i == c->n_size) {
    c->found = 1;
    return 1;
  }
  return !label[start & (RBT_RUBY_LABEL_LEN - 1)];
}

static long frame_matches(__u64 index, void *ctx) {
  struct label_scan *c = ctx;
  struct rbt_ruby_stack *st = c->st;
  if (index >= st->count || index >= RBT_RUBY_MAX_DEPTH)
    return 1;
  __u32 k = index & (RBT_RUBY_MAX_DEPTH - 1);
  struct rbt_ruby_frame_key key = {st->frames[k].addr, st->frames[k].pc, st->tgid, st->start};
  c->f = bpf_map_lookup_elem(&rbt_ruby_frames, &key);
  if (c->f)
    bpf_loop(RBT_RUBY_LABEL_LEN, label_at, c, 0);
  return c->found;
}

// strcontains(rstack, "text"): 1 when some frame's label contains text.
__u64 rbt_rstack_contains(__u64 id, const char *needle, __u64 n_size) {
  if (!(id & 1))
    return 0;
  struct label_scan c = {.needle = needle, .n_size = n_size};
  c.st = stored_stack(&id);
  if (!c.st)
    return 0;
  bpf_loop(c.st->count, frame_matches, &c, 0);
  return c.found;
}

#endif  // RBT_RUBY_WALKER_OBJECT
