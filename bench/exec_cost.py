#!/usr/bin/env python3
"""What rstack's discovery costs processes that are not Ruby (docs/rstack-discovery.md).

    sudo bench/exec_cost.py [--rbt build/rbt] [--runs 9] [--execs 1000]
    sudo bench/run exec_cost               # the same rows in bench/run's table

A shell runs `true` --execs times (each a fork and an exec: what the discovery's fork and exec
programs see). Its wall time is measured with nothing attached, and with rbt attached
system-wide running the issue's rstack script `profile:hz:99 { @[pid, rstack] = count(); }`,
in interleaved rounds with a second bare run as an A/A control; reported: the median over
rounds of each run's ratio to its round's bare run (rbt gets 1 s after its attach to inspect
the processes already running, once each, before the execs start). For context, the same with a script
without rstack (`profile:hz:99 { @[pid] = count(); }`: no discovery programs). Target: the
rstack run within the noise (two standard errors of the A/A ratio, at least 1%). Also, free of
the wall clock's noise: the run time per call of rstack's exec and fork programs (kernel BPF
stats, read with bpftool), as a share of a fork+exec.

Needs root, bpftool and rbt; exits 0 whatever the numbers are.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rstack_cost import bpftool_prog, enable_stats, prog_ids_of  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RSTACK = "profile:hz:99 { @[pid, rstack] = count(); }"
PLAIN = "profile:hz:99 { @[pid] = count(); }"


def exec_loop(n):
    """Wall seconds of a shell running `true` n times (fork + exec each)."""
    t = time.perf_counter()
    subprocess.run(["sh", "-c", f'i=0; while [ $i -lt {n} ]; do /bin/true; i=$((i+1)); done'],
                   check=True)
    return time.perf_counter() - t


def attached(rbt, script):
    env = dict(os.environ, RBT_ATTACH_MARKER="1")
    p = subprocess.Popen([rbt, "-e", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=env)
    for line in p.stderr:
        if "__rbt_attached__" in line:
            # Right after the attach rbt inspects the processes its first samples met (once
            # each); that is not what an exec costs.
            time.sleep(1)
            return p
    raise SystemExit("exec_cost: rbt did not attach")


def stop(p):
    p.send_signal(signal.SIGINT)
    p.stderr.close()
    p.wait(timeout=60)


def discovery_time(rbt, execs):
    """Per call run time (ns) of rstack's exec and fork programs during `execs` execs, from the
    kernel's BPF stats: what each fork and exec pays, free of the wall clock's noise."""
    stats = enable_stats()
    if stats is None:
        return {}
    try:
        p = attached(rbt, RSTACK)
        before = {i: bpftool_prog(i) for i in prog_ids_of(p.pid)}
        exec_loop(execs)
        out = {}
        for i, b in before.items():
            a = bpftool_prog(i)
            if a and a.get("name") in ("rbt_ruby_exec", "rbt_ruby_fork"):
                runs = a.get("run_cnt", 0) - b.get("run_cnt", 0)
                ns = a.get("run_time_ns", 0) - b.get("run_time_ns", 0)
                out[a["name"]] = (ns / runs if runs else 0.0, runs)
        stop(p)
        return out
    finally:
        os.close(stats)


def measure(rbt, runs, execs):
    """[(metric, value, unit, target, verdict, note)]"""
    ratios = {"A/A": [], "rstack": [], "plain": []}
    bare_times = []
    exec_loop(execs // 4)  # warm-up
    for r in range(runs):
        bare = exec_loop(execs)
        bare_times.append(bare)
        order = ["rstack", "plain"] if r % 2 == 0 else ["plain", "rstack"]
        for which in order:
            p = attached(rbt, RSTACK if which == "rstack" else PLAIN)
            ratios[which].append(exec_loop(execs) / bare)
            stop(p)
        ratios["A/A"].append(exec_loop(execs) / bare)
    aa = ratios["A/A"]
    noise = max(0.01, 2 * statistics.stdev(aa) / len(aa) ** 0.5 if len(aa) > 1 else 0.01)
    med = {k: statistics.median(v) for k, v in ratios.items()}
    per_exec_us = statistics.median(bare_times) / execs * 1e6
    bpf = discovery_time(rbt, execs)
    bpf_rows = [(f"{name} per call", ns / 1000, "us", "-", None,
                 f"{calls} calls; {ns / 1000 / per_exec_us * 100:.3f}% of a fork+exec")
                for name, (ns, calls) in sorted(bpf.items())]
    return bpf_rows + [
        (f"{execs} execs of true, bare", statistics.median(bare_times), "s", "-", None,
         f"{per_exec_us:.0f} us per fork+exec"),
        ("A/A (bare again / bare)", med["A/A"], "x", "-", None, f"noise {noise * 100:.1f}%"),
        ("rstack system-wide / bare", med["rstack"], "x", f"<= {1 + noise:.3f}",
         med["rstack"] <= 1 + noise, RSTACK),
        ("no-rstack script / bare", med["plain"], "x", "-", None, PLAIN),
    ]


def rows(ctx, Row):
    """bench/run's hook."""
    out = []
    for metric, value, unit, target, verdict, note in measure(ctx.tools[0].path, ctx.runs, 1000):
        abs_target = float(target[3:]) if verdict is not None else None
        out.append(Row(metric, unit, {"rbt": round(value, 4)}, None, note=note,
                       abs_target=abs_target))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rbt", default=os.path.join(REPO, "build", "rbt"))
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--execs", type=int, default=1000)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("exec_cost: needs root", file=sys.stderr)
        return 2
    table = measure(os.path.abspath(args.rbt), args.runs, args.execs)
    print(f"{'metric':<32} {'value':>10}  {'target':<10} verdict")
    for metric, value, unit, target, verdict, note in table:
        v = "" if verdict is None else ("PASS" if verdict else "MISS")
        print(f"{metric:<32} {value:>8.3f} {unit:<2} {target:<10} {v}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
