#!/usr/bin/env python3
"""Start-up of rbt with and without its compiled-object cache, beside bpftrace 0.17 (issue 13).

    sudo bench/startup.py [--rbt build/rbt] [--bpftrace /usr/bin/bpftrace] [--runs 11]
    sudo bench/run startup          # the same rows in bench/run's table

1. One one-liner, `tracepoint:syscalls:sys_enter_getppid { printf("attached\\n"); exit(); }`,
   while a process calls getppid() nonstop: time-to-attached is spawn until the tool prints the
   probe's first line (the probe is attached and fired), and peak RSS is the tool's VmHWM at
   that moment (ru_maxrss would include the forking Python's pages). rbt cold: an empty cache directory each run (parse, check, LLVM,
   store); rbt warm: the object from the cache; bpftrace: the same one-liner (0.17 has no cache).
   Targets: warm ≤ 40 ms and ≤ 12 MiB.
2. Every stdlib tool (`rbt --list-tools`), cold and warm: spawn until rbt's attach marker (the
   `Attached N probes` banner is printed at the same moment; RBT_ATTACH_MARKER=1), then SIGINT.
   Tools that need a process get `-p` of a sleeping Ruby. Target: every tool < 0.3 s.
Medians of --runs runs, the variants interleaved. Needs root, ruby, bpftrace for its column.
"""

import argparse
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ONE_LINER = 'tracepoint:syscalls:sys_enter_getppid { printf("attached\\n"); exit(); }'
TIMEOUT = 30.0


def spawn_until(argv, env, stream, needle):
    """Starts argv, returns (seconds until `needle` shows on `stream`, peak RSS KiB then, ok).
    The tool is stopped with SIGINT once the needle showed (if it has not exited)."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE if stream == "stdout" else subprocess.DEVNULL,
                         stderr=subprocess.PIPE if stream == "stderr" else subprocess.DEVNULL,
                         start_new_session=True)
    pipe = p.stdout if stream == "stdout" else p.stderr
    seen, buf, found, peak = None, b"", False, None
    deadline = start + TIMEOUT
    while time.perf_counter() < deadline:
        ready, _, _ = select.select([pipe], [], [], 0.05)
        if ready:
            chunk = os.read(pipe.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            if needle in buf:
                seen = time.perf_counter() - start
                found = True
                peak = vm_hwm(p.pid)
                break
    if found:
        try:
            os.killpg(p.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    try:
        # Drain so that the tool never blocks on a full pipe while it exits.
        while True:
            ready, _, _ = select.select([pipe], [], [], 5)
            if not ready or not os.read(pipe.fileno(), 65536):
                break
    except OSError:
        pass
    try:
        _, status, _ = os.wait4(p.pid, 0)
    except ChildProcessError:
        return None, None, False
    p.returncode = os.waitstatus_to_exitcode(status)
    return seen, peak, found


def vm_hwm(pid):
    """The process's peak RSS in KiB since its exec. (ru_maxrss would also count the memory
    of the forked Python before the exec, about 15 MiB, more than rbt's own.)"""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def getppid_loop(workdir):
    exe = os.path.join(REPO, "build", "tests", "programs", "getppid_loop")
    if not os.access(exe, os.X_OK):
        exe = os.path.join(workdir, "getppid_loop")
        subprocess.run(["gcc", "-O1", "-o", exe,
                        os.path.join(REPO, "tests", "programs", "getppid_loop.c")], check=True)
    return subprocess.Popen([exe, "0"], stdout=subprocess.DEVNULL, start_new_session=True)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def one_liner_rows(rbt, bpftrace, runs, workdir, Row):
    load = getppid_loop(workdir)
    warm_dir = os.path.join(workdir, "warm-cache")
    try:
        variants = {
            "rbt cold": lambda i: ([rbt, "-e", ONE_LINER],
                                   dict(os.environ, RBT_CACHE_DIR=os.path.join(workdir, f"cold-{i}"))),
            "rbt warm": lambda i: ([rbt, "-e", ONE_LINER], dict(os.environ, RBT_CACHE_DIR=warm_dir)),
        }
        if bpftrace and os.access(bpftrace, os.X_OK):
            variants["bpftrace"] = lambda i: ([bpftrace, "-e", ONE_LINER], dict(os.environ))
        times = {k: [] for k in variants}
        rss = {k: [] for k in variants}
        for i in range(-1, runs):  # run -1 warms the cache (and the page cache) uncounted
            names = list(variants)
            for name in (names if i % 2 == 0 else names[::-1]):
                argv, env = variants[name](i)
                t, kib, ok = spawn_until(argv, env, "stdout", b"attached\n")
                if i >= 0 and ok:
                    times[name].append(t)
                    rss[name].append(kib)
    finally:
        os.killpg(load.pid, signal.SIGKILL)
        load.wait()
    t = {k: median(v) for k, v in times.items()}
    m = {k: median(v) for k, v in rss.items()}
    bt = "bpftrace"
    return [
        Row("one-liner time-to-attached, rbt cold (no cache)", "s",
            {"rbt": t["rbt cold"], bt: t.get(bt)}, None),
        Row("one-liner time-to-attached, rbt warm (cache hit)", "s",
            {"rbt": t["rbt warm"], bt: t.get(bt)}, None, abs_target=0.040),
        Row("one-liner peak RSS, rbt cold (no cache)", "KiB",
            {"rbt": m["rbt cold"], bt: m.get(bt)}, None),
        Row("one-liner peak RSS, rbt warm (cache hit)", "KiB",
            {"rbt": m["rbt warm"], bt: m.get(bt)}, None, abs_target=12 * 1024),
    ]


def tool_rows(rbt, runs, workdir, Row):
    listing = subprocess.run([rbt, "--list-tools"], stdout=subprocess.PIPE, text=True).stdout
    tools = [line.split()[0] for line in listing.splitlines() if line.strip()]
    ruby = shutil.which("ruby")
    target = subprocess.Popen([ruby, "-e", "sleep"], start_new_session=True) if ruby else None
    warm_dir = os.path.join(workdir, "tools-cache")
    rows = []
    try:
        for tool in tools:
            argv = [rbt, tool]
            if target:
                argv += ["-p", str(target.pid)]
            cold, warm = [], []
            for i in range(-1, runs):
                for kind in (("cold", "warm") if i % 2 == 0 else ("warm", "cold")):
                    cache = (os.path.join(workdir, f"tool-{tool}-{i}") if kind == "cold"
                             else warm_dir)
                    env = dict(os.environ, RBT_CACHE_DIR=cache, RBT_ATTACH_MARKER="1")
                    t, _, ok = spawn_until(argv, env, "stderr", b"__rbt_attached__")
                    if i >= 0 and ok:
                        (cold if kind == "cold" else warm).append(t)
            rows.append(Row(f"{tool} time-to-banner, cold", "s", {"rbt": median(cold)}, None,
                            abs_target=0.3))
            rows.append(Row(f"{tool} time-to-banner, warm", "s", {"rbt": median(warm)}, None,
                            abs_target=0.3))
    finally:
        if target:
            os.killpg(target.pid, signal.SIGKILL)
            target.wait()
    return rows


def rows(ctx, Row):
    rbt, bpftrace = ctx.tools[0].path, ctx.tools[1].path
    return (one_liner_rows(rbt, bpftrace, ctx.runs, ctx.workdir, Row) +
            tool_rows(rbt, ctx.runs, ctx.workdir, Row))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rbt", default=os.path.join(REPO, "build", "rbt"))
    ap.add_argument("--bpftrace", default=shutil.which("bpftrace") or "/usr/bin/bpftrace")
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("startup: needs root", file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from importlib.machinery import SourceFileLoader
    run = SourceFileLoader("bench_run", os.path.join(REPO, "bench", "run")).load_module()
    with tempfile.TemporaryDirectory(prefix="rbt-startup-") as workdir:
        ctx = run.Context(tools=[run.Tool("rbt", os.path.abspath(args.rbt)),
                                 run.Tool("bpftrace", args.bpftrace)],
                          runs=args.runs, workdir=workdir)
        table = rows(ctx, run.Row)
    print(f"medians of {args.runs} runs")
    run.print_table(table, ctx.tools)
    return 0


if __name__ == "__main__":
    sys.exit(main())
