// rstack's discovery in BPF: per-process facts written by BPF itself, so that a Ruby process
// started after rbt attached has its stacks from its first event, with no round trip to user
// space (design: docs/rstack-discovery.md). Included by ruby_stack.bpf.c, whose maps it fills.
//
// - rbt_ruby_discover: an early uprobe on ruby_setup/ruby_init of every Ruby binary user space
//   knows (uprobes are per file, so it fires in every process that maps it, in any mount or
//   PID namespace). The GOT is relocated and the TLS module id assigned by then. The probe's
//   address minus the symbol's link-time address is the load bias; the rest is per-file facts.
// - rbt_ruby_fork: a child process inherits its parent's image, so it inherits its facts.
// - rbt_ruby_exec: facts never outlive an image: exec drops them.

// The per-file facts, at the index the early uprobe's cookie carries (low 16 bits; bit 16
// says which of the two probe symbols fired).
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, RBT_RUBY_MAX_BINARIES);
  __type(key, __u32);
  __type(value, struct rbt_ruby_binary);
} rbt_ruby_binaries SEC(".maps");

// Processes BPF found, for user space to name C functions by ELF symbol (see ruby_layouts.h).
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, __u64);
  __type(value, struct rbt_ruby_born);
} rbt_ruby_born SEC(".maps");

static __always_inline __u64 current_start(void) {
  struct task_struct *task = bpf_get_current_task_btf();
  return task->group_leader->start_boottime / RBT_RUBY_NS_PER_TICK;
}

// After a write of rbt_ruby_procs: CPUs drop their copies of records (ruby_stack.bpf.c).
static __always_inline void bump_epoch(void) {
  __u32 zero = 0;
  __u32 *epoch = bpf_map_lookup_elem(&rbt_ruby_epoch, &zero);  // BPF's counter
  if (epoch)
    __sync_fetch_and_add(epoch, 1);
}

// A tag for a new image, unlikely to equal an earlier one of the same tgid; never 0.
static __always_inline __u32 new_image(void) { return bpf_get_prandom_u32() | 1; }

static __always_inline void tell_user_space(__u32 tgid, __u32 image, __u32 binary, __u64 bias,
                                            __u32 parent_tgid, __u32 parent_image) {
  struct rbt_ruby_born born = {};
  born.binary = binary;
  born.bias = bias;
  born.parent_tgid = parent_tgid;
  born.parent_image = parent_image;
  __u64 key = (__u64)tgid << 32 | image;
  bpf_map_update_elem(&rbt_ruby_born, &key, &born, BPF_NOEXIST);
}

// x86_64 struct pt_regs: ip is its 17th word.
#define RBT_PT_REGS_IP_WORD 16

__attribute__((section("uprobe"))) int rbt_ruby_discover(void *ctx) {
  __u64 cookie = bpf_get_attach_cookie(ctx);
  __u32 index = cookie & 0xffff, which = (cookie >> 16) & 1;
  struct rbt_ruby_binary *b = bpf_map_lookup_elem(&rbt_ruby_binaries, &index);
  if (!b || b->layout >= RBT_RUBY_MAX_LAYOUTS)
    return 0;
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  __u64 start = current_start();
  // exec drops a process's record, so a valid one is this image's (ruby_init calls ruby_setup:
  // the second probe finds the first one's record).
  struct rbt_ruby_proc *old = bpf_map_lookup_elem(&rbt_ruby_procs, &tgid);
  if (old && old->start == start && old->layout != RBT_RUBY_NOT_RUBY)
    return 0;
  __u64 ip = ((__u64 *)ctx)[RBT_PT_REGS_IP_WORD];
  // A load bias is page aligned: rounding absorbs an ip past the breakpoint instruction.
  __u64 bias = (ip - b->probe_vaddr[which] + 0x800) & ~0xfffULL;
  struct rbt_ruby_proc rec = {};
  rec.layout = b->layout;
  rec.start = start;
  rec.image = new_image();
  rec.binary = index;
  rec.bias = bias;
  rec.global_symbols = b->global_symbols_vaddr ? bias + b->global_symbols_vaddr : 0;
  __u64 got[2] = {};
  switch (b->tls_source) {
  case RBT_RUBY_TLS_FROM_GOT_MODID:
    rec.tls_kind = RBT_RUBY_TLS_DTV;
    rec.tls_modid = read_u64(bias + b->got_vaddr);
    rec.tls_offset = b->tls_offset;
    if (!rec.tls_modid)
      return 0;  // not relocated: user space will inspect it on its first event
    break;
  case RBT_RUBY_TLS_FROM_GOT_TPOFF:
  case RBT_RUBY_TLS_FROM_GOT_DESC:
    if (bpf_probe_read_user(got, sizeof(got), (const void *)(bias + b->got_vaddr)) ||
        (!got[0] && !got[1]))
      return 0;
    rec.tls_kind = RBT_RUBY_TLS_TPOFF;
    rec.tls_offset = b->tls_source == RBT_RUBY_TLS_FROM_GOT_TPOFF ? got[0] : got[1];
    break;
  case RBT_RUBY_TLS_CONSTANT:
    rec.tls_kind = RBT_RUBY_TLS_TPOFF;
    rec.tls_offset = b->tls_offset;
    break;
  case RBT_RUBY_TLS_NONE:
    rec.tls_kind = RBT_RUBY_THREAD_LIST;
    rec.vm_ptr = bias + b->vm_ptr_vaddr;
    break;
  default:
    return 0;
  }
  bpf_map_update_elem(&rbt_ruby_procs, &tgid, &rec, BPF_ANY);
  bump_epoch();
  tell_user_space(tgid, rec.image, index, bias, 0, 0);
  return 0;
}

// sched_process_fork(parent, child), in the parent. A new process (not a thread) gets its
// parent's facts, Ruby or not, under its own start time and a new image tag.
__attribute__((section("raw_tp/sched_process_fork"))) int rbt_ruby_fork(__u64 *ctx) {
  struct task_struct *child = (struct task_struct *)ctx[1];
  int pid = 0, tgid = 0;
  __u64 child_start = 0;
  bpf_probe_read_kernel(&pid, sizeof(pid), __builtin_preserve_access_index(&child->pid));
  bpf_probe_read_kernel(&tgid, sizeof(tgid), __builtin_preserve_access_index(&child->tgid));
  bpf_probe_read_kernel(&child_start, sizeof(child_start),
                        __builtin_preserve_access_index(&child->start_boottime));
  if (pid != tgid || tgid <= 0)
    return 0;  // a thread shares its process's record
  __u32 parent = bpf_get_current_pid_tgid() >> 32;
  struct rbt_ruby_proc *p = bpf_map_lookup_elem(&rbt_ruby_procs, &parent);
  if (!p || (p->start && p->start != current_start()))
    return 0;
  struct rbt_ruby_proc rec = *p;
  rec.start = p->start ? child_start / RBT_RUBY_NS_PER_TICK : 0;
  rec.image = rec.start ? new_image() : 0;
  __u32 key = tgid;
  bpf_map_update_elem(&rbt_ruby_procs, &key, &rec, BPF_ANY);
  bump_epoch();
  if (rec.layout != RBT_RUBY_NOT_RUBY)
    tell_user_space(key, rec.image, p->binary, p->bias, parent, p->image);
  return 0;
}

// Executable files user space judged (see ruby_layouts.h).
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, struct rbt_ruby_file_id);
  __type(value, __u32);
} rbt_ruby_exes SEC(".maps");

// Execs of files without a verdict, for user space to judge (LRU: it may fall behind).
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 1024);
  __type(key, __u32);
  __type(value, struct rbt_ruby_exec_file);
} rbt_ruby_execs SEC(".maps");

struct super_block {
  unsigned int s_dev;
} __attribute__((preserve_access_index));
struct inode {
  unsigned long i_ino;
  struct super_block *i_sb;
} __attribute__((preserve_access_index));
struct file {
  struct inode *f_inode;
} __attribute__((preserve_access_index));
struct linux_binprm {
  struct file *file;
  const char *interp; /* the file exec runs: the interpreter of a #! script */
} __attribute__((preserve_access_index));

// Per-CPU room for an exec's file record (over the 512-byte BPF stack with the rest).
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct rbt_ruby_exec_file);
} rbt_ruby_exec_scratch SEC(".maps");

// sched_process_exec(task, old_pid, bprm): the process has a new image; what was learnt of the
// old one is dropped. When its file is known not to be a Ruby, that is its record at once, so
// its probes never ask user space; a file without a verdict is left for user space to judge.
__attribute__((section("raw_tp/sched_process_exec"))) int rbt_ruby_exec(__u64 *ctx) {
  __u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0;
  struct rbt_ruby_exec_file *e = bpf_map_lookup_elem(&rbt_ruby_exec_scratch, &zero);
  if (!e)
    return 0;
  struct linux_binprm *bprm = (struct linux_binprm *)ctx[2];
  struct file *file = 0;
  struct inode *inode = 0;
  struct super_block *sb = 0;
  bpf_probe_read_kernel(&file, sizeof(file), __builtin_preserve_access_index(&bprm->file));
  bpf_probe_read_kernel(&inode, sizeof(inode), __builtin_preserve_access_index(&file->f_inode));
  bpf_probe_read_kernel(&sb, sizeof(sb), __builtin_preserve_access_index(&inode->i_sb));
  e->id.ino = 0;
  e->id.dev = 0;
  e->id.pad = 0;
  bpf_probe_read_kernel(&e->id.ino, sizeof(e->id.ino),
                        __builtin_preserve_access_index(&inode->i_ino));
  bpf_probe_read_kernel(&e->id.dev, sizeof(e->id.dev), __builtin_preserve_access_index(&sb->s_dev));
  __u32 *verdict = bpf_map_lookup_elem(&rbt_ruby_exes, &e->id);
  if (verdict && *verdict == RBT_RUBY_EXE_NOT_RUBY) {
    struct rbt_ruby_proc rec = {};
    rec.layout = RBT_RUBY_NOT_RUBY;
    rec.start = current_start();
    rec.image = (__u32)rec.start;
    rec.binary = RBT_RUBY_NO_BINARY;
    bpf_map_update_elem(&rbt_ruby_procs, &tgid, &rec, BPF_ANY);
    bump_epoch();
    return 0;
  }
  bpf_map_delete_elem(&rbt_ruby_procs, &tgid);
  bump_epoch();
  if (verdict)
    return 0;
  const char *name = 0;
  bpf_probe_read_kernel(&name, sizeof(name), __builtin_preserve_access_index(&bprm->interp));
  if (bpf_probe_read_kernel_str(e->path, sizeof(e->path), name) < 0)
    e->path[0] = 0;
  bpf_map_update_elem(&rbt_ruby_execs, &tgid, e, BPF_ANY);
  return 0;
}
