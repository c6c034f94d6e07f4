#include "record_script.h"

namespace rbt {

std::string record_script(const RecordScriptOptions &o) {
  // A sample's and a marker's stacks: Ruby, native and kernel, which the recorder merges into
  // one. nstack unwinds by each binary's CFI, exact through libruby, libc and C extensions
  // built without frame pointers; ustack (--no-native) is cheaper but loses frames there.
  const std::string user = o.native ? "nstack(128)" : "ustack(perf, 127)";
  const std::string stacks = "rstack, " + user + ", kstack(perf, 127)";
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
    s += "  @rbt_off_r[tid] = rstack; @rbt_off_u[tid] = " + user +
       "; @rbt_off_k[tid] = kstack(perf, 127);\n}\n";
    s += "tracepoint:sched:sched_switch /has_key(@rbt_off, (uint32)args.next_pid)/ {\n";
    s += "  $t = (uint32)args.next_pid; $o = @rbt_off[$t];\n";
    s += "  marker(\"OffCPU\", $o.0, nsecs, $o.1, $t, $o.2, @rbt_off_r[$t], @rbt_off_u[$t],"
         " @rbt_off_k[$t]);\n";
    s += "  delete(@rbt_off, $t); delete(@rbt_off_r, $t); delete(@rbt_off_u, $t);"
         " delete(@rbt_off_k, $t);\n}\n";
  }
  if (o.io) {
    // Issue in the task that submits (its stacks); completion usually in an interrupt.
    s += "\n// --io: block I/O requests, issue to completion, with the issuing stacks\n";
    s += "tracepoint:block:block_rq_issue /" + mine + "/ {\n";
    s += "  $k = ((uint64)args.dev << 40) | args.sector;\n";
    s += "  @rbt_io[$k] = (nsecs, pid, tid, args.bytes);\n";
    s += "  @rbt_io_r[$k] = rstack; @rbt_io_u[$k] = " + user +
       "; @rbt_io_k[$k] = kstack(perf, 127);\n}\n";
    s += "tracepoint:block:block_rq_complete /has_key(@rbt_io, ((uint64)args.dev << 40) | "
         "args.sector)/ {\n";
    s += "  $k = ((uint64)args.dev << 40) | args.sector; $o = @rbt_io[$k];\n";
    s += "  marker(\"BlockIO\", $o.0, nsecs, $o.1, $o.2, $o.3, args.dev, args.sector,"
         " @rbt_io_r[$k], @rbt_io_u[$k], @rbt_io_k[$k]);\n";
    s += "  delete(@rbt_io, $k); delete(@rbt_io_r, $k); delete(@rbt_io_u, $k);"
         " delete(@rbt_io_k, $k);\n}\n";
  }
  if (o.faults) {
    s += "\n// --faults: page faults, each an instant with its stacks\n";
    s += "software:page-faults:1 /" + mine + "/ {\n";
    s += "  $now = nsecs; marker(\"PageFault\", $now, $now, pid, tid, " + stacks + ");\n}\n";
  }
  if (o.gc) {
    s += "\n// --gc: Ruby GC phases (libruby's USDT probes)\n";
    for (const char *phase : {"mark", "sweep"}) {
      std::string p = phase;
      s += "usdt:libruby:ruby:gc__" + p + "__begin { @rbt_gc_" + p + "[tid] = nsecs; }\n";
      s += "usdt:libruby:ruby:gc__" + p + "__end /@rbt_gc_" + p + "[tid]/ {\n";
      s += "  marker(\"GC " + p + "\", @rbt_gc_" + p + "[tid], nsecs, pid, tid, rstack);\n";
      s += "  delete(@rbt_gc_" + p + ", tid);\n}\n";
    }
  }
  return s;
}

}  // namespace rbt
