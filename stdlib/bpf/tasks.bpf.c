// comm(pid): the name of another task, found by its pid with the kernel's kfuncs. The kernel
// gives bpf_task_from_pid to BTF-typed tracing programs (iter, tp_btf) among others, not to
// kprobe/uprobe/tracepoint/perf_event ones (sema checks the probe kind).

#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

// libbpf matches a kfunc's prototype with the kernel's loosely: a struct pointer matches any
// struct pointer, so the struct needs no members here. rbt knows comm's offset from the
// kernel's BTF and passes it in.
struct task_struct {
  int unused;
};

extern struct task_struct *bpf_task_from_pid(int pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

// Fills the 16-byte `comm` with the task's name; no task for `pid` leaves it empty (returns
// 0, else 1). Arguments are 64-bit, as codegen passes them.
__u64 rbt_comm_of_pid(__u64 pid, char *comm, __u64 comm_offset) {
  struct task_struct *task = bpf_task_from_pid((int)pid);
  comm[0] = 0;
  if (!task)
    return 0;
  bpf_probe_read_kernel_str(comm, 16, (char *)task + comm_offset);
  bpf_task_release(task);
  return 1;
}
