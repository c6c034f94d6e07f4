#!/usr/bin/env python3
"""`rbt record`'s cost per sample, its losses, and its memory over a long record.

    sudo bench/record_cost.py [--rbt build/rbt] [--seconds 20] [--rss-seconds 120] [--no-native]

1. Cost per sample: `rbt record -F 999 -p PID` on a Ruby process that recurses to a 15-frame
   Ruby stack and spins (bench/rstack_cost.py's workload). The sample program's run_time_ns
   (BPF stats) over the target's samples (in the file, plus lost): the whole probe, i.e.
   rstack, nstack and kstack walks (ustack in place of nstack with --no-native, passed on), the event's fields and the ring buffer output. It also runs,
   and returns at once, on the other CPU's ticks; their time is charged to the target's
   samples, so this is an upper bound. Also the per-run mean, and rbt's own CPU time (user
   space: reading the ring buffer, symbolizing, building the profile) per sample.
   Target: <= 1.5 us in BPF.
2. No sample lost silently: the same record with one more probe,
   `profile:hz:999 /pid == PID/ { @bpf_counted = count(); }` printed in END, an independent count of the
   target's ticks (its own timer, started a moment apart): file samples + lost should equal it
   within a few ticks.
3. Memory: VmRSS of rbt every few seconds over --rss-seconds of a 999 Hz record (ten times
   the samples per second of the default 99 Hz), and the peak (ru_maxrss, which includes
   writing the file at the end).

Needs root, bpftool and ruby. Prints a table; exits 0 whatever the numbers are.
"""

import argparse
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rstack_cost import RUBY_DEEP, bpftool_prog, enable_stats, prog_ids_of  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPTH = 15  # Ruby frames: <main>, r x (DEPTH - 2), spin


def start_ruby(script):
    p = subprocess.Popen(["ruby", script, str(DEPTH - 3), "0"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    time.sleep(0.5)  # past Ruby's start-up, into the spin
    return p


NO_NATIVE = []  # ["--no-native"] when asked: record's native stacks by frame pointers


def start_record(rbt, pid, out, log, extra=None):
    args = [rbt, "record", "-F", "999", "-p", str(pid), "-o", out] + NO_NATIVE
    if extra:
        args += ["-e", extra]
    env = dict(os.environ, RBT_ATTACH_MARKER="1")
    with open(log, "wb") as f:
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                             env=env, start_new_session=True)
    deadline = time.time() + 30
    while time.time() < deadline and p.poll() is None:
        with open(log, "rb") as f:
            if b"__rbt_attached__" in f.read():
                return p
        time.sleep(0.01)
    raise RuntimeError("rbt record did not attach: " + open(log).read()[-500:])


def stop(p):
    os.killpg(p.pid, signal.SIGINT)
    _, status, usage = os.wait4(p.pid, 0)
    return usage


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def vm_rss_kb(pid):
    """VmRSS in KB; 0 once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def file_counts(path, pid):
    doc = json.loads(gzip.open(path).read())
    samples = sum(len(t["samples"]["data"]) for t in doc["threads"] if t["pid"] == pid)
    deepest = 0
    for t in doc["threads"]:
        frames = t["rbtFrames"]
        stacks = t["stackTable"]["data"]
        for s in {row[0] for row in t["samples"]["data"] if row[0] is not None}:
            n = 0
            while s is not None:
                n += frames[stacks[s][1]][0] in ("ruby", "cfunc")
                s = stacks[s][0]
            deepest = max(deepest, n)
    return samples, doc["meta"]["rbt"]["lost"], deepest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rbt", default=os.path.join(REPO, "build", "rbt"))
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rss-seconds", type=float, default=120)
    ap.add_argument("--no-native", action="store_true")
    args = ap.parse_args()
    if args.no_native:
        NO_NATIVE.append("--no-native")
    if os.geteuid() != 0:
        print("record_cost: needs root", file=sys.stderr)
        return 2
    stats = enable_stats()
    work = tempfile.mkdtemp(prefix="rbt-record-bench-")
    script = os.path.join(work, "deep.rb")
    with open(script, "w") as f:
        f.write(RUBY_DEEP)
    out, log = os.path.join(work, "r.json.gz"), os.path.join(work, "rbt.log")

    # 1. Cost per sample.
    ruby = start_ruby(script)
    try:
        rec = start_record(args.rbt, ruby.pid, out, log)
        progs = prog_ids_of(rec.pid)
        cpu0 = cpu_seconds(rec.pid)
        time.sleep(args.seconds)
        infos = [i for i in (bpftool_prog(x) for x in progs) if i]
        cpu1 = cpu_seconds(rec.pid)
        stop(rec)
    finally:
        os.killpg(ruby.pid, signal.SIGKILL)
        ruby.wait()
    samples, lost, deepest = file_counts(out, ruby.pid)
    perf = [i for i in infos if i.get("type") == "perf_event"]
    info = max(perf, key=lambda i: i.get("run_cnt", 0), default=None)
    if not info or not info.get("run_cnt"):
        print("record_cost: no run_cnt for the sample program (BPF stats off?)", file=sys.stderr)
        return 2
    per_sample = info["run_time_ns"] / max(1, samples + lost) / 1000
    per_run = info["run_time_ns"] / info["run_cnt"] / 1000
    user_us = (cpu1 - cpu0) / max(1, samples) * 1e6

    # The cost of a run that returns at once (another process's tick): the same record of a
    # process that never runs. The cost per target sample charges other runs at this price.
    idle = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    try:
        rec = start_record(args.rbt, idle.pid, out, log)
        progs = prog_ids_of(rec.pid)
        time.sleep(min(args.seconds, 5))
        idle_infos = [i for i in (bpftool_prog(x) for x in progs) if i]
        stop(rec)
    finally:
        idle.kill()
        idle.wait()
    idle_info = max((i for i in idle_infos if i.get("type") == "perf_event"),
                    key=lambda i: i.get("run_cnt", 0))
    early = idle_info["run_time_ns"] / max(1, idle_info["run_cnt"])
    others = max(0, info["run_cnt"] - samples - lost)
    per_sample_net = (info["run_time_ns"] - others * early) / max(1, samples + lost) / 1000

    # 2. Losses against an independent count.
    ruby = start_ruby(script)
    try:
        counter = f"profile:hz:999 /pid == {ruby.pid}/ {{ @bpf_counted = count(); }} " \
                  "END { print(@bpf_counted); }"
        rec = start_record(args.rbt, ruby.pid, out, log, counter)
        time.sleep(args.seconds)
        stop(rec)
    finally:
        os.killpg(ruby.pid, signal.SIGKILL)
        ruby.wait()
    text = open(log).read()
    m = re.search(r"@bpf_counted: (\d+)", text)
    counted = int(m.group(1)) if m else -1
    samples2, lost2, _ = file_counts(out, ruby.pid)

    # 3. Memory over a long record.
    ruby = start_ruby(script)
    rss = []
    try:
        rec = start_record(args.rbt, ruby.pid, out, log)
        t0 = time.time()
        while time.time() - t0 < args.rss_seconds:
            time.sleep(min(10, args.rss_seconds / 12))
            rss.append((round(time.time() - t0), vm_rss_kb(rec.pid)))
        usage = stop(rec)
    finally:
        os.killpg(ruby.pid, signal.SIGKILL)
        ruby.wait()
    samples3, lost3, _ = file_counts(out, ruby.pid)
    size = os.path.getsize(out)

    print(f"rbt record -F 999 -p PID{' --no-native' if NO_NATIVE else ''}, Ruby stack of {deepest} frames (target {DEPTH}), "
          f"{args.seconds:g} s runs, {os.cpu_count()} CPUs")
    print(f"{'metric':58} {'value':>14}  target")
    print(f"{'BPF time per target sample (upper bound), us':58} {per_sample:14.2f}")
    print(f"{'BPF time per target sample, other runs at ' + format(early, '.0f') + ' ns, us':58} "
          f"{per_sample_net:14.2f}  <= 1.5")
    print(f"{'BPF time per program run (all CPUs), us':58} {per_run:14.2f}")
    print(f"{'rbt user+system CPU per sample, us':58} {user_us:14.1f}")
    print(f"{'samples in file / lost (cost run)':58} {samples:>8} / {lost:<5}")
    print(f"{'independent BPF count / file samples / lost':58} "
          f"{counted:>6} / {samples2} / {lost2}")
    print(f"{'RSS over a ' + format(args.rss_seconds, 'g') + ' s record, KB (t=s:KB)':58} "
          + " ".join(f"{t}:{kb}" for t, kb in rss))
    print(f"{'peak RSS incl. writing the file (ru_maxrss), KB':58} {usage.ru_maxrss:14}")
    print(f"{'samples / lost / file bytes of the long record':58} "
          f"{samples3} / {lost3} / {size}")
    if stats is not None:
        os.close(stats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
