#include "record_script.h"

namespace rbt {

namespace {
// An interval's stacks are taken where it starts and kept in maps named after `map` under
// `key` until it ends: one rstack(native), or (--no-native) a Ruby, a user and a kernel stack.
std::string keep(const std::string &map, const std::string &key, bool native) {
  if (native)
    return map + "_s[" + key + "] = rstack(native);";
  return map + "_r[" + key + "] = rstack; " + map + "_u[" + key + "] = ustack(perf, 127); " +
         map + "_k[" + key + "] = kstack(perf, 127);";
}
std::string kept(const std::string &map, const std::string &key, bool native) {
  if (native)
    return map + "_s[" + key + "]";
  return map + "_r[" + key + "], " + map + "_u[" + key + "], " + map + "_k[" + key + "]";
}
std::string forget(const std::string &map, const std::string &key, bool native) {
  if (native)
    return "delete(" + map + "_s, " + key + ");";
  return "delete(" + map + "_r, " + key + "); delete(" + map + "_u, " + key + "); delete(" + map +
         "_k, " + key + ");";
}
}  // namespace

std::string record_script(const RecordScriptOptions &o) {
  // A sample's and a marker's stacks: Ruby, native and kernel, which the recorder merges into
  // one. rstack(native) walks all three as the mixed stack does: the native frames by DWARF
  // CFI, exact through libruby, libc and C extensions built without frame pointers, recorded by
  // function and only down to the root-most C method (what the merge keeps). --no-native:
  // ustack, cheaper, but it loses frames there.
  const std::string stacks = o.native ? "rstack(native)" : "rstack, ustack(perf, 127), kstack(perf, 127)";
  // Markers carry their thread's name as BPF sees it (comm, or next_comm for the thread
  // sched_switch brings back): by the time user space reads them the thread may be gone.
  // `mine` selects the target's events; system wide every task but the idle one.
  std::string mine = o.target.empty() ? "pid != 0" : "pid == " + o.target;
  std::string s = "// rbt record: on-CPU samples at " + std::to_string(o.hz) + " Hz";
  s += o.target.empty() ? ", every process\n" : ", process " + o.target + "\n";
  s += "profile:hz:" + std::to_string(o.hz) + " /" + mine + "/ { sample(" + stacks + "); }\n";
  if (o.off_cpu) {
    // A task leaving the CPU blocked (prev_state != 0: not merely preempted) keeps its stacks
    // until it is switched back in; sched_switch runs in the leaving task, so the marker names
    // the returning thread explicitly.
    s += "\n// --off-cpu: each blocked interval with the stacks it blocked in\n";
    s += "tracepoint:sched:sched_switch /" + mine + " && args.prev_state != 0/ {\n";
    s += "  @rbt_off[tid] = (nsecs, pid, args.prev_state);\n";
    s += "  " + keep("@rbt_off", "tid", o.native) + "\n}\n";
    s += "tracepoint:sched:sched_switch /has_key(@rbt_off, (uint32)args.next_pid)/ {\n";
    s += "  $t = (uint32)args.next_pid; $o = @rbt_off[$t];\n";
    s += "  marker(\"OffCPU\", $o.0, nsecs, $o.1, $t, args.next_comm, $o.2, " +
         kept("@rbt_off", "$t", o.native) +
         ");\n";
    s += "  delete(@rbt_off, $t); " + forget("@rbt_off", "$t", o.native) + "\n}\n";
  }
  if (o.io) {
    // Issue in the task that submits (its stacks); completion usually in an interrupt.
    s += "\n// --io: block I/O requests, issue to completion, with the issuing stacks\n";
    s += "tracepoint:block:block_rq_issue /" + mine + "/ {\n";
    s += "  $k = ((uint64)args.dev << 40) | args.sector;\n";
    s += "  @rbt_io[$k] = (nsecs, pid, tid, args.bytes, comm);\n";
    s += "  " + keep("@rbt_io", "$k", o.native) + "\n}\n";
    s += "tracepoint:block:block_rq_complete /has_key(@rbt_io, ((uint64)args.dev << 40) | "
         "args.sector)/ {\n";
    s += "  $k = ((uint64)args.dev << 40) | args.sector; $o = @rbt_io[$k];\n";
    s += "  marker(\"BlockIO\", $o.0, nsecs, $o.1, $o.2, $o.4, $o.3, args.dev, args.sector, " +
         kept("@rbt_io", "$k", o.native) + ");\n";
    s += "  delete(@rbt_io, $k); " + forget("@rbt_io", "$k", o.native) + "\n}\n";
  }
  if (o.faults) {
    s += "\n// --faults: page faults, each an instant with its stacks\n";
    s += "software:page-faults:1 /" + mine + "/ {\n";
    s += "  $now = nsecs; marker(\"PageFault\", $now, $now, pid, tid, comm, " + stacks + ");\n}\n";
  }
  if (o.gc) {
    s += "\n// --gc: Ruby GC phases (libruby's USDT probes)\n";
    for (const char *phase : {"mark", "sweep"}) {
      std::string p = phase;
      s += "usdt:libruby:ruby:gc__" + p + "__begin { @rbt_gc_" + p + "[tid] = nsecs; }\n";
      s += "usdt:libruby:ruby:gc__" + p + "__end /@rbt_gc_" + p + "[tid]/ {\n";
      s += "  marker(\"GC " + p + "\", @rbt_gc_" + p + "[tid], nsecs, pid, tid, comm, rstack);\n";
      s += "  delete(@rbt_gc_" + p + ", tid);\n}\n";
    }
  }
  return s;
}

}  // namespace rbt
