#!/usr/bin/env python3
"""rstack's cost: per sample in BPF, against an rbperf-style reference, and on the target.

    sudo bench/rstack_cost.py [--rbt build/rbt] [--runs 11] [--seconds 3]
    sudo bench/run rstack_cost            # the same rows in bench/run's table

1. Cost per sample of `profile:hz:999 { @[rstack] = count(); }` with `-p` on a Ruby process
   that recurses to a fixed depth (15 and 105 frames) and spins: the program's run_time_ns
   (kernel.bpf_stats_enabled=1, read with bpftool) divided by the samples it took of that
   process (the sum of the map's counts). The program also runs, and returns at once, on the
   other CPU's samples; their time is charged to the Ruby samples, so this is an upper bound.
   Targets: <= 2 us at depth 15, <= 5 us at depth 105.
2. The same with RBT_RSTACK_REFERENCE=1, which makes rbt link the walker that reads every
   frame's label, path and line on every sample (rbperf's way; stdlib/bpf/ruby_stack.bpf.c
   rbt_rstack_reference). Target: rstack at least 5x cheaper.
3. Target slowdown: wall time of a fixed Ruby CPU workload (depth 15, a counted loop) with
   nothing attached, with `profile:hz:99` and with `profile:hz:999` rstack sampling filtered by
   `comm == "ruby"`, runs interleaved in rounds with a second bare run as an A/A control; the
   median over rounds of each run's ratio to its round's bare run. Targets: at 99 Hz within the
   noise (two standard errors of the A/A ratio, at least 0.5%), at 999 Hz <= 1%.

Needs root, bpftool and ruby. Stats are enabled through bpf(BPF_ENABLE_STATS) for the run (or,
without it, kernel.bpf_stats_enabled, restored afterwards).
"""

import argparse
import ctypes
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import json

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATS_SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"

# Recurses to a depth (frames: <main>, r x (ARGV[0] + 1), spin), then spins: forever, or for a
# fixed number of iterations (the slowdown workload).
RUBY_DEEP = """\
def spin(n)
  x = 0
  i = 0
  while n == 0 || i < n
    i += 1
    x = (x + i) & 0xffff
  end
  x
end
def r(d, n) = d.zero? ? spin(n) : r(d - 1, n)
r(Integer(ARGV[0]), Integer(ARGV[1]))
"""

TARGET_US = {15: 2.0, 105: 5.0}
RATIO_TARGET = 5.0
SLOWDOWN_999 = 1.0  # percent
NOISE_FLOOR = 0.5  # percent: what "not measurable" means at best on this machine
SETTLE = 0.3  # seconds of quiet before each timed run


def enable_stats():
    """Turns BPF run-time stats on for as long as the returned fd is open (bpf(BPF_ENABLE_STATS),
    counted by the kernel, so benchmarks running side by side do not switch them off under each
    other as writes of the sysctl would). None when the syscall is unavailable."""
    if os.uname().machine != "x86_64":
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(8)  # enable_stats.type = BPF_STATS_RUN_TIME (0)
    fd = libc.syscall(321, 32, attr, ctypes.c_uint(8))  # SYS_bpf, BPF_ENABLE_STATS
    return fd if fd >= 0 else None


def bpftool_prog(prog_id):
    p = subprocess.run(["bpftool", "-j", "prog", "show", "id", str(prog_id)],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30)
    return json.loads(p.stdout) if p.returncode == 0 and p.stdout else None


def prog_ids_of(pid):
    ids = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return []
    for fd in fds:
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return sorted(ids)


class Rbt:
    """rbt running `prog` until stop(); output kept in a file."""

    def __init__(self, rbt, prog, args, workdir, env_extra=None, timeout=20.0):
        self.log = os.path.join(workdir, "rbt-rstack.log")
        env = {k: v for k, v in os.environ.items() if k != "RBT_RSTACK_REFERENCE"}
        env.update(RBT_ATTACH_MARKER="1", **(env_extra or {}))
        with open(self.log, "wb") as out:
            self.p = subprocess.Popen([rbt, *args, "-e", prog], stdin=subprocess.DEVNULL,
                                      stdout=out, stderr=subprocess.STDOUT, env=env,
                                      start_new_session=True)
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline and self.p.poll() is None:
            with open(self.log, "rb") as f:
                if b"__rbt_attached__" in f.read():
                    return
            time.sleep(0.01)
        out = self.stop()
        raise RuntimeError(f"rbt did not attach `{prog}`: " +
                           " | ".join(out.strip().splitlines()[-3:]))

    def stop(self):
        try:
            os.killpg(self.p.pid, signal.SIGINT)
            self.p.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()
        with open(self.log, "rb") as f:
            return f.read().decode(errors="replace")


def samples_in(output):
    """(all samples, samples with a non-empty stack) from `@[rstack] = count()`'s output."""
    total = nonempty = 0
    for m in re.finditer(r"@\[(.*?)\]: (\d+)", output, re.S):
        n = int(m.group(2))
        total += n
        if m.group(1).strip():
            nonempty += n
    return total, nonempty


def cost_per_sample(rbt, script, depth, seconds, workdir, reference):
    """Returns (ns per Ruby sample, ns per run of the program, Ruby samples, frames seen)."""
    ruby = subprocess.Popen(["ruby", script, str(depth - 3), "0"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        time.sleep(0.3)  # past Ruby's start-up, into the spin
        env = {"RBT_RSTACK_REFERENCE": "1"} if reference else None
        t = Rbt(rbt, "profile:hz:999 { @[rstack] = count(); }", ["-p", str(ruby.pid)],
                workdir, env)
        progs = prog_ids_of(t.p.pid)
        time.sleep(seconds)
        infos = [i for i in (bpftool_prog(x) for x in progs) if i]
        out = t.stop()
    finally:
        os.killpg(ruby.pid, signal.SIGKILL)
        ruby.wait()
    info = max(infos, key=lambda i: i.get("run_cnt", 0), default=None)
    if not info or not info.get("run_cnt"):
        raise RuntimeError("no run_cnt for rbt's program (is kernel.bpf_stats_enabled on?)")
    total, nonempty = samples_in(out)
    if nonempty < total * 0.9 or total == 0:
        raise RuntimeError(f"rstack gave {total - nonempty} empty stacks of {total} samples")
    frames = max((len(m.group(1).strip().splitlines())
                  for m in re.finditer(r"@\[(.*?)\]: (\d+)", out, re.S)), default=0)
    return (info["run_time_ns"] / total, info["run_time_ns"] / info["run_cnt"], total, frames)


def run_workload(script, iterations, tries=3):
    """Wall seconds of one run. Retried when Ruby crashes: on a shared machine someone else's
    USDT semaphores can make Ruby 3.1 run its dtrace hooks, which crash at start-up at times."""
    for _ in range(tries):
        start = time.perf_counter()
        p = subprocess.run(["ruby", script, "12", str(iterations)], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        if p.returncode == 0:
            return wall
    raise RuntimeError(f"the Ruby workload failed {tries} times (exit {p.returncode})")


def calibrate(script, want_seconds=1.0):
    """Iterations for a run of about want_seconds (Ruby's start-up time aside)."""
    n = 2_000_000
    t1, t2 = run_workload(script, n), run_workload(script, 2 * n)
    per = max((t2 - t1) / n, 1e-9)
    return max(n, int(want_seconds / per))


def slowdown(rbt, script, runs, workdir):
    """Per-round wall-time ratios to the round's bare run, for: a second bare run (the A/A
    control that measures the noise), 99 Hz and 999 Hz. Rounds rotate the order. Ratios within
    a round cancel the slow drift of this VM's CPU speed (about 10% over a minute here), which
    medians of raw times do not."""
    iterations = calibrate(script)
    variants = ["none", "none2", "99", "999"]
    walls = {v: [] for v in variants}
    samples = {v: 0 for v in variants}
    for i in range(-1, runs):  # one uncounted warm-up round
        order = variants[i % 4:] + variants[:i % 4]
        for v in order:
            t = None
            if v.isdigit():
                t = Rbt(rbt, f'profile:hz:{v} /comm == "ruby"/ {{ @[rstack] = count(); }}', [],
                        workdir)
            time.sleep(SETTLE)  # the same pause before every run: rbt's start-up and the
            try:                # kernel's freeing of the last run's maps are not timed
                wall = run_workload(script, iterations)
            finally:
                out = t.stop() if t else ""
            if i >= 0:
                walls[v].append(wall)
                samples[v] += samples_in(out)[1]
    ratios = {v: [w / b for w, b in zip(walls[v], walls["none"])] for v in variants[1:]}
    return walls, ratios, samples, iterations


def measure(rbt, runs, seconds, workdir, log=lambda s: print(s, file=sys.stderr)):
    """Returns [(metric, value, unit, target text, verdict, note)]."""
    script = os.path.join(workdir, "rstack_deep.rb")
    with open(script, "w") as f:
        f.write(RUBY_DEEP)
    rows = []
    stats_fd, old_stats = enable_stats(), None
    if stats_fd is None:  # no BPF_ENABLE_STATS: the global sysctl, restored afterwards
        with open(STATS_SYSCTL) as f:
            old_stats = f.read().strip()
    try:
        if old_stats is not None:
            with open(STATS_SYSCTL, "w") as f:
                f.write("1")
        per = {}
        for depth in (15, 105):
            for reference in (False, True):
                log(f"rstack_cost: depth {depth}, {'reference' if reference else 'rstack'}...")
                per[depth, reference] = cost_per_sample(rbt, script, depth, seconds, workdir,
                                                        reference)
    finally:
        if stats_fd is not None:
            os.close(stats_fd)
        else:
            with open(STATS_SYSCTL, "w") as f:
                f.write(old_stats)
    for depth in (15, 105):
        ns, ns_run, n, frames = per[depth, False]
        rns, rns_run, rn, _ = per[depth, True]
        us = ns / 1000
        rows.append((f"rstack cost/sample, depth {depth}", us, "us", f"<= {TARGET_US[depth]:g} us",
                     us <= TARGET_US[depth],
                     f"{frames} frames, {n} samples in {seconds:g} s; per run of the program "
                     f"(other CPU's samples included) {ns_run / 1000:.2f} us"))
        rows.append((f"reference cost/sample, depth {depth}", rns / 1000, "us", "-", None,
                     f"strings read every sample; {rn} samples; per run {rns_run / 1000:.2f} us"))
        ratio = rns / ns
        rows.append((f"reference/rstack, depth {depth}", ratio, "x",
                     f">= {RATIO_TARGET:g}x", ratio >= RATIO_TARGET, ""))
    log(f"rstack_cost: slowdown, {runs} interleaved rounds...")
    walls, ratios, samples, iterations = slowdown(rbt, script, runs, workdir)
    # Noise: two standard errors of the A/A ratio (bare against bare), at least NOISE_FLOOR.
    aa = ratios["none2"]
    se = 100 * statistics.stdev(aa) / len(aa) ** 0.5 if len(aa) > 1 else 100.0
    noise = max(NOISE_FLOOR, 2 * se)
    aa_pct = 100 * (statistics.median(aa) - 1)
    # What the BPF program alone takes of the sampled CPU at 999 Hz (cost x rate): the part of
    # the slowdown the wall times cannot resolve below their noise.
    share = per[15, False][0] * 999 / 1e9 * 100
    rows.append(("BPF time share at 999 Hz, depth 15", share, "%", "-", None,
                 "cost per sample x 999/s; perf's own interrupt cost not included"))
    for v, target in (("99", noise), ("999", SLOWDOWN_999)):
        pct = 100 * (statistics.median(ratios[v]) - 1)
        rows.append((f"target slowdown, {v} Hz", pct, "%",
                     f"<= {target:.2f}%" + (" (noise)" if v == "99" else ""), pct <= target,
                     f"median of {runs} per-round ratios to the bare run; medians "
                     f"{statistics.median(walls[v]):.4f} s vs {statistics.median(walls['none']):.4f} s "
                     f"bare ({iterations} iterations); A/A (bare vs bare) {aa_pct:+.2f}%, "
                     f"2 SE {2 * se:.2f}%; {samples[v]} rstack samples in all"))
    return rows


def rows(ctx, Row):
    """bench/run's hook: the same measurements as bench/run rows (rbt's column only)."""
    out = []
    for metric, value, unit, target, verdict, note in measure(ctx.tools[0].path, ctx.runs, 3.0,
                                                               ctx.workdir):
        if unit == "x":  # bench/run's targets are upper bounds: show rstack/reference
            metric = metric.replace("reference/rstack", "rstack/reference")
            value, abs_target = 1 / value, 1 / RATIO_TARGET
        else:
            abs_target = float(re.search(r"[\d.]+", target).group()) if verdict is not None \
                else None
        out.append(Row(metric, unit, {"rbt": round(value, 3)}, None, note=note,
                       abs_target=abs_target))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rbt", default=os.path.join(REPO, "build", "rbt"))
    ap.add_argument("--runs", type=int, default=11, help="interleaved rounds of the slowdown")
    ap.add_argument("--seconds", type=float, default=3.0, help="sampling time per cost run")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("rstack_cost: needs root", file=sys.stderr)
        return 2
    for tool in ("bpftool", "ruby"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"],
                          stdout=subprocess.DEVNULL).returncode != 0:
            print(f"rstack_cost: {tool} not found", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="rbt-rstack-") as workdir:
        table = measure(os.path.abspath(args.rbt), args.runs, args.seconds, workdir)
    print(f"{'metric':<36} {'value':>10}  {'target':<18} verdict")
    for metric, value, unit, target, verdict, _ in table:
        v = "" if verdict is None else ("PASS" if verdict else "MISS")
        print(f"{metric:<36} {value:>8.2f} {unit:<2} {target:<18} {v}")
    for metric, _, _, _, _, note in table:
        if note:
            print(f"note: {metric}: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
