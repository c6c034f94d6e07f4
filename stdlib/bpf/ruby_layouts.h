/* Ruby interpreter layouts and the records rstack's BPF walker (ruby_stack.bpf.c) shares with
 * rbt's runtime (src/runtime/ruby/). One header for both sides so a struct or an offset cannot
 * drift between the C that runs in the kernel and the C++ that fills its maps and reads them back.
 *
 * Offsets are x86_64/glibc, one record per Ruby minor version (see the design's table); the
 * runtime ships them to BPF in the rbt_ruby_layouts array map, so supporting another version is
 * a new record here and nothing else. Kept as plain C (no C++ features) for clang -target bpf. */
#ifndef RBT_RUBY_LAYOUTS_H
#define RBT_RUBY_LAYOUTS_H

#include <linux/types.h>

/* Limits shared by both sides. */
#define RBT_RUBY_DEFAULT_DEPTH 128
#define RBT_RUBY_MAX_DEPTH 1024
#define RBT_RUBY_LABEL_LEN 64
#define RBT_RUBY_PATH_LEN 128
#define RBT_RUBY_MAX_LAYOUTS 8
#define RBT_RUBY_MAX_THREADS 1024 /* threads list lookup: a longer list finds no thread */
#define RBT_RUBY_THREAD_READ 96   /* bytes of rb_thread_t read per thread of the list */

/* rb_method_type_t VM_METHOD_TYPE_CFUNC and imemo_ment: a C frame's method entry. */
#define RBT_RUBY_METHOD_TYPE_CFUNC 1
#define RBT_RUBY_IMEMO_MENT 6
#define RBT_RUBY_T_STRING 0x05
#define RBT_RUBY_T_ARRAY 0x07
#define RBT_RUBY_T_IMEMO 0x1a
#define RBT_RUBY_FL_USHIFT 12
#define RBT_RUBY_STRING_NOEMBED (1ULL << 13) /* FL_USER1 */
#define RBT_RUBY_ARRAY_EMBED (1ULL << 13)    /* FL_USER1 */
#define RBT_RUBY_LAST_OP_ID 169              /* tLAST_OP_ID: IDs above it carry 4 flag bits */
#define RBT_RUBY_ID_ENTRY_UNIT 512           /* IDs per chunk of ruby_global_symbols.ids */

/* Where one Ruby minor version keeps what the walker reads. All byte offsets. */
struct rbt_ruby_layout {
  __u32 version; /* major * 100 + minor: 301 for 3.1 */
  __u32 cfp_size; /* sizeof(rb_control_frame_t) */
  __u32 ec_vm_stack, ec_vm_stack_size, ec_cfp;
  __u32 cfp_pc, cfp_iseq, cfp_ep;
  __u32 iseq_body;
  __u32 body_iseq_encoded, body_location;
  __u32 loc_pathobj, loc_label, loc_first_lineno; /* from body_location */
  __u32 insns_info_body, insns_info_size, insns_info_succ;
  __u32 insn_info_entry_size; /* line_no at 0 */
  __u32 rstring_len;          /* heap length (<= 3.1) or length (>= 3.2) */
  __u32 rstring_heap_ptr, rstring_embed;
  __u32 rstring_embed_len_in_flags; /* 1: embedded length is (flags >> 14) & 0x1f (<= 3.1) */
  __u32 rarray_embed, rarray_heap_ptr;
  __u32 cme_def, def_original_id, def_cfunc_func;
  __u32 thread_ec;
  /* The threads list, for the lookup without a TLS ec (Ruby 2.7; RBT_RUBY_THREAD_LOOKUP=list):
   * the list head is in rb_vm_t (2.7: vm->living_threads) or, when vm_main_ractor is not 0, in
   * the main ractor (3.x: vm->ractor.main_ractor->threads.set). Its nodes are thread_node
   * bytes into rb_thread_t; a node's first word is the next node. A thread's pthread_t (equal
   * to its thread pointer, fsbase, on x86_64 glibc) is thread_native_id bytes into rb_thread_t,
   * or into its rb_native_thread when thread_nt (the offset of th->nt) is not 0 (>= 3.2). */
  __u32 vm_main_ractor, threads_head, thread_node, thread_nt, thread_native_id;
};

/* The versions rbt knows, as the columns of the design's table. Positional (C++20 wants
 * designated initializers in declaration order), through one macro naming what varies. */
#define RBT_RUBY_LAYOUT(ver, cfp, info_body, info_size, info_succ, entry, embed, len_in_flags, \
                        th_ec, main_ractor, th_head, th_nt, native_id)                         \
  {                                                                                            \
    (ver), (cfp), /* ec: vm_stack, vm_stack_size, cfp */ 0, 8, 16,                              \
        /* cfp: pc, iseq, ep */ 0, 16, 32, /* iseq.body */ 16,                                 \
        /* body: iseq_encoded, location */ 8, 64, /* location: pathobj, label, first_lineno */ \
        0, 16, 24, (info_body), (info_size), (info_succ), (entry),                             \
        /* RString: len, heap ptr, embedded bytes */ 16, 24, (embed), (len_in_flags),         \
        /* RArray: embedded elements, heap ptr */ 16, 32,                                      \
        /* cme.def, def.original_id, def.body.cfunc.func */ 16, 32, 8, (th_ec),                \
        (main_ractor), (th_head), /* rb_thread_t's list node */ 0, (th_nt), (native_id)        \
  }

/* Threads list offsets (the last four): from Ruby's vm_core.h, ractor_core.h and
 * thread_pthread.h of each version for x86_64 glibc (pthread_mutex_t 40 bytes, pthread_cond_t
 * 48, USE_SIGALTSTACK), cross-checked with rbspy's bindgen structs; 3.1's were checked on
 * Debian's ruby 3.1.2 (tests/runtime/rstack.test runs the marker tests with the list lookup). */
static const struct rbt_ruby_layout rbt_ruby_layouts_table[] = {
    RBT_RUBY_LAYOUT(207, 56, 120, 136, 144, 8, 16, 1, 32, 0, 312, 0, 72),
    RBT_RUBY_LAYOUT(300, 56, 120, 136, 144, 8, 16, 1, 40, 32, 304, 0, 80),
    RBT_RUBY_LAYOUT(301, 64, 120, 136, 144, 12, 16, 1, 40, 32, 304, 0, 80),
    RBT_RUBY_LAYOUT(302, 64, 112, 128, 136, 12, 24, 0, 48, 32, 304, 40, 8),
    RBT_RUBY_LAYOUT(303, 56, 112, 128, 136, 12, 24, 0, 48, 32, 256, 40, 16),
    RBT_RUBY_LAYOUT(304, 56, 112, 128, 136, 12, 24, 0, 48, 32, 256, 40, 16),
};
#define RBT_RUBY_LAYOUT_COUNT (sizeof(rbt_ruby_layouts_table) / sizeof(rbt_ruby_layouts_table[0]))

/* How the walker finds the thread's execution context from the thread pointer (fsbase). */
enum rbt_ruby_tls_kind {
  RBT_RUBY_TLS_DTV = 1,   /* general dynamic: *(*(tp + 8) + modid * 16) + offset */
  RBT_RUBY_TLS_TPOFF = 2, /* static TLS (TPOFF64, TLSDESC resolved statically, static ruby) */
  /* No TLS ec (Ruby 2.7): the thread in the VM's threads list whose pthread_t is tp, then its
   * ec (vm_ptr holds where ruby_current_vm_ptr is). Per thread, not the GVL holder's. */
  RBT_RUBY_THREAD_LIST = 3,
};

/* What the runtime learnt about one process (rbt_ruby_procs, keyed by tgid). */
struct rbt_ruby_proc {
  __u32 layout;   /* index into rbt_ruby_layouts; RBT_RUBY_NOT_RUBY: not a Ruby process */
  __u32 tls_kind; /* enum rbt_ruby_tls_kind */
  __u64 tls_modid;
  __s64 tls_offset;      /* in the module's block (DTV) or from the thread pointer (TPOFF) */
  __u64 global_symbols;  /* address of ruby_global_symbols, 0 when unknown */
  /* When the process started, in clock ticks since boot (/proc/PID/stat field 22, which is
   * the leader's start_boottime / RBT_RUBY_NS_PER_TICK): a probe that meets another start time
   * under this tgid meets a new process that reused the pid. 0: not checked. */
  __u64 start;
  __u64 vm_ptr; /* RBT_RUBY_THREAD_LIST: address of the ruby_current_vm_ptr variable */
  /* Which image of the process the facts describe: stacks and frames carry it (their `start`)
   * so that an exec under the same pid and start time is another process to them. User space
   * writes the low 32 bits of `start`; BPF's discovery (ruby_discovery.h) a fresh tag. */
  __u32 image;
  __u32 binary; /* index into rbt_ruby_binaries when BPF found the process, else NO_BINARY */
  __u64 bias;   /* load bias of the interpreter (BPF-found processes) */
};
#define RBT_RUBY_NS_PER_TICK 10000000ULL /* USER_HZ = 100 */
#define RBT_RUBY_NO_BINARY 0xffffffffu

/* Per-file facts of a Ruby interpreter (libruby or a ruby executable), computed once by user
 * space and kept in rbt_ruby_binaries at the index its early uprobes carry as their cookie.
 * From them and the probe's address, BPF writes a process's rbt_ruby_proc itself. */
#define RBT_RUBY_MAX_BINARIES 64
enum rbt_ruby_tls_source {
  RBT_RUBY_TLS_FROM_GOT_MODID = 1,   /* module id in the GOT slot; offset is tls_offset */
  RBT_RUBY_TLS_FROM_GOT_TPOFF = 2,   /* TP offset in the GOT slot (R_X86_64_TPOFF64) */
  RBT_RUBY_TLS_FROM_GOT_DESC = 3,    /* TP offset in the slot's second word (TLSDESC) */
  RBT_RUBY_TLS_CONSTANT = 4,         /* TP offset is tls_offset (local exec) */
  RBT_RUBY_TLS_NONE = 5,             /* threads list: no TLS ec */
};
struct rbt_ruby_binary {
  __u64 probe_vaddr[2];        /* link-time addresses of the early-probe symbols */
  __u64 got_vaddr;             /* GOT slot of ruby_current_ec's relocation */
  __s64 tls_offset;            /* FROM_GOT_MODID: offset in the block; CONSTANT: from tp */
  __u64 vm_ptr_vaddr;          /* ruby_current_vm_ptr (threads list) */
  __u64 global_symbols_vaddr;  /* ruby_global_symbols, 0 until user space found it once */
  __u32 layout;                /* index into rbt_ruby_layouts */
  __u32 tls_source;            /* enum rbt_ruby_tls_source */
};

/* An executable file as the kernel names it (inode number, superblock device), and what rbt
 * knows of it (rbt_ruby_exes): RBT_RUBY_EXE_NOT_RUBY when the file neither is a Ruby nor
 * links libruby, so its processes are known not to be Ruby from their exec on. */
struct rbt_ruby_file_id {
  __u64 ino;
  __u32 dev;
  __u32 pad;
};
#define RBT_RUBY_EXE_NOT_RUBY 1
#define RBT_RUBY_EXEC_PATH_LEN 256
/* An exec of a file rbt has no verdict on (rbt_ruby_execs, keyed by tgid): for user space to
 * judge the file, once. */
struct rbt_ruby_exec_file {
  struct rbt_ruby_file_id id;
  char path[RBT_RUBY_EXEC_PATH_LEN]; /* as exec opened it (bprm->interp), in its namespace */
};

/* What BPF's discovery tells user space about a process it found (rbt_ruby_born, keyed by
 * tgid << 32 | image): user space needs it only to name C functions by ELF symbol and to
 * look for Ruby's symbol table, never to walk stacks. */
struct rbt_ruby_born {
  __u32 binary;       /* RBT_RUBY_NO_BINARY: copied at fork from a parent user space found */
  __u32 parent_image; /* fork: the parent's image, with parent_tgid */
  __u32 parent_tgid;  /* 0: not a fork */
  __u32 pad;
  __u64 bias;
};
#define RBT_RUBY_NOT_RUBY 0xffffffffu

/* One raw frame: (iseq, pc) of a Ruby frame, (method entry, 0) of a C method frame. */
struct rbt_ruby_raw_frame {
  __u64 addr;
  __u64 pc;
};

/* A stack as recorded (rbt_ruby_stacks, keyed by stack id), leaf first. Only the first
 * `count` frames are copied out by user space. */
struct rbt_ruby_stack {
  __u32 tgid;
  __u32 count;
  __u32 truncated; /* frames past the depth limit (0: complete), | RBT_RUBY_TRUNCATED_AT_LEAST */
  __u32 start;     /* low 32 bits of rbt_ruby_proc.start: with tgid, which process */
  struct rbt_ruby_raw_frame frames[RBT_RUBY_MAX_DEPTH];
};

/* Stacks recorded while rbt_ruby_stacks could not allocate (ruby_stack.bpf.c explains). */
#define RBT_RUBY_SPILL_STACKS 64

/* An rstack value is {u64 id; u32 pid; u32 cut}. A stack's id is odd; an empty stack's id is
 * one of these even numbers, saying why it is empty (0: no reason known). */
#define RBT_RUBY_EMPTY_NOT_INSPECTED 2    /* rbt has not inspected this process yet */
#define RBT_RUBY_EMPTY_NOT_RUBY_PROCESS 4 /* no Ruby interpreter in the process */
#define RBT_RUBY_EMPTY_UNKNOWN_LAYOUT 6   /* a Ruby rstack has no (or a failing) layout for */
#define RBT_RUBY_EMPTY_NOT_RUBY_THREAD 8  /* the thread has no Ruby execution context */
#define RBT_RUBY_EMPTY_NOT_INITIALISED 10 /* the thread's VM stack is not set up yet */
#define RBT_RUBY_EMPTY_NO_FRAMES 12       /* a VM stack without method or block frames */
/* `cut` of a per-event value (print, printf): frames cut below the depth limit for this very
 * event (rbt_ruby_stack.truncated's encoding) | RBT_RUBY_CUT_EXACT. 0 in map keys, so that one
 * key holds every stack with the same kept frames. */
#define RBT_RUBY_CUT_EXACT (1u << 30)
/* rbt_ruby_proc.layout of a Ruby whose layout failed its attach-time check. */
#define RBT_RUBY_BAD_LAYOUT 0xfffffffeu

/* Frames resolved once (rbt_ruby_frames, LRU, keyed by rbt_ruby_frame_key). */
struct rbt_ruby_frame_key {
  __u64 addr;
  __u64 pc;
  __u32 tgid;
  __u32 start; /* as in rbt_ruby_stack: a reused pid does not see the old process's frames */
};
/* The walk ran out of its budget of control frames before the root: `truncated` is a floor. */
#define RBT_RUBY_TRUNCATED_AT_LEAST (1u << 31)

enum rbt_ruby_frame_kind {
  RBT_RUBY_FRAME_RUBY = 1,
  RBT_RUBY_FRAME_CFUNC = 2,
};

struct rbt_ruby_frame {
  __u32 kind; /* enum rbt_ruby_frame_kind */
  __u32 line; /* Ruby frames: the line of pc */
  __u64 cfunc; /* C frames: address of the C function, named by user space when label is empty */
  char label[RBT_RUBY_LABEL_LEN];
  char path[RBT_RUBY_PATH_LEN];
};

/* ---- The pc → line decoder (Ruby's succinct bitvector), shared so it is unit-tested. ---- */

/* Layout of struct succ_index_table (iseq.c): 54 immediate 7-bit entries in 6 u64 words, then
 * 80-byte blocks of 512 bits. */
#define RBT_RUBY_SUCC_IMM_ENTRIES 54
#define RBT_RUBY_SUCC_IMM_BYTES 48
#define RBT_RUBY_SUCC_BLOCK_BYTES 80
#define RBT_RUBY_SUCC_BLOCK_BITS 512

/* The instruction index of a pc (Ruby's calc_pos: pc points after the instruction). */
static inline __u64 rbt_ruby_insn_pos(__u64 pc, __u64 iseq_encoded) {
  __u64 pos = (pc - iseq_encoded) / 8;
  return pos ? pos - 1 : 0;
}

/* Bits set in x, without a popcount instruction (BPF has none). */
static inline __u32 rbt_ruby_popcount64(__u64 x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return (__u32)((x * 0x0101010101010101ULL) >> 56);
}

/* Byte offset (from the table's start) of what succ_index_lookup reads for `pos`: the
 * immediate word, or the 80-byte block. The caller reads it, then calls the function below. */
static inline __u64 rbt_ruby_succ_read_offset(__u64 pos) {
  if (pos < RBT_RUBY_SUCC_IMM_ENTRIES)
    return (pos / 9) * 8;
  return RBT_RUBY_SUCC_IMM_BYTES +
         ((pos - RBT_RUBY_SUCC_IMM_ENTRIES) / RBT_RUBY_SUCC_BLOCK_BITS) * RBT_RUBY_SUCC_BLOCK_BYTES;
}

/* succ_index_lookup: for pos < 54 `data` is the immediate u64 word; otherwise the block
 * {u32 rank; u64 small_block_ranks @8; u64 bits[8] @16} as 10 u64 words. Returns the 1-based
 * index into insns_info.body. */
static inline __u32 rbt_ruby_succ_index(__u64 pos, const __u64 *data) {
  if (pos < RBT_RUBY_SUCC_IMM_ENTRIES)
    return (__u32)((data[0] >> ((pos % 9) * 7)) & 0x7f);
  __u64 bit = (pos - RBT_RUBY_SUCC_IMM_ENTRIES) % RBT_RUBY_SUCC_BLOCK_BITS;
  __u64 small = bit / 64;
  __u32 rank = (__u32)(data[0] & 0xffffffffULL);
  __u32 small_rank = small ? (__u32)((data[1] >> ((small - 1) * 9)) & 0x1ff) : 0;
  return rank + small_rank + rbt_ruby_popcount64(data[2 + (small & 7)] << (63 - bit % 64));
}

#endif /* RBT_RUBY_LAYOUTS_H */
