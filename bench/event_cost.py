#!/usr/bin/env python3
"""Added cost per event of a `@ = count()` probe: rbt, bpftrace and a minimal libbpf program.

    sudo bench/event_cost.py [--rbt build/rbt] [--bpftrace /usr/bin/bpftrace] [--runs 7]
                             [--uprobe-n 100000] [--getppid-n 5000000] [--usdt-n 100000]
                             [SCENARIO ...]        # uprobe, tracepoint, usdt (default all)

Also run by `bench/run event_cost` (then with bench/run's --runs).

For each scenario, every round runs the workload once with nothing attached and once under
each tool (rbt, bpftrace, the minimal loader of bench/minimal/), in an order rotated round by
round. A tool is started, waited for until attached, the workload is timed from spawn to
reap, then the tool gets SIGINT and its printed count is read. Per tool:

    ns/event = (median workload wall under the tool - median wall with nothing attached)
               / median count printed by the tool

A second pass (3 interleaved runs per tool, median reported) turns on kernel.bpf_stats_enabled and reads run_time_ns /
run_cnt of the BPF programs the tool holds (from /proc/PID/fdinfo): the cost of the BPF
program alone, without the kernel's uprobe/tracepoint machinery. It is a separate pass because
the statistics themselves add time to every event.

Scenarios (targets from issue 4):
  uprobe      uprobe on rb_str_new in libruby; `ruby -e 'N.times { |i| "x#{i}" }'`
              rbt <= bpftrace, rbt within 10% of minimal
  tracepoint  tracepoint:syscalls:sys_enter_getppid; `getppid_loop N`
              rbt <= bpftrace, rbt within 10% of minimal
  usdt        usdt ruby:cmethod__entry in libruby;
              `ruby --disable-gems -e 'N.times { |i| i.to_s }'` (Integer#to_s is a C method,
              so one event per iteration; "x#{i}" calls none). --disable-gems because Debian's
              Ruby 3.1.2, with its cmethod__entry semaphore set, sometimes writes "RSTRING_PTR is
              returning NULL!!" and about 1 run in 30 crashes in rb_dtrace_setup while
              rubygems loads monitor.rb (whichever tool enables the probe; 0 of 40 runs with
              --disable-gems).
              rbt <= bpftrace (minimal shown for context)

Exit status: 0 whatever the numbers are, 2 when it cannot run (not root, a tool missing, the
minimal programs do not build).
"""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
LIBRUBY = "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1"
ATTACH_TIMEOUT = 30.0  # seconds for a tool to attach
RUN_TIMEOUT = 120.0  # seconds for one workload run
STOP_TIMEOUT = 15.0  # seconds for a tool to print its maps after SIGINT
RUBY_COMM = "rbtbench-ruby"  # command names of the workloads (symlinks), for calibration
GETPPID_COMM = "rbtbench-ppid"
STATS_RUNS = 3  # runs per tool with kernel.bpf_stats_enabled (median reported)
COUNT_RE = re.compile(rb"^@: (\d+)\s*$", re.M)


@dataclass
class Tool:
    name: str  # "rbt", "bpftrace", "minimal"; "nothing" is the baseline
    argv: list  # full command line, None for the baseline
    marker: bytes = b""  # printed (stdout or stderr) once attached, or just before
    settle: float = 0.0  # extra seconds to wait after the marker
    env: dict = None


@dataclass
class Scenario:
    name: str
    label: str
    workload: list
    tools: list  # [Tool], rbt first
    minimal_target: bool  # issue 4 wants rbt within 10% of minimal here
    calibrate: list = field(default_factory=list)  # [Tool] counting the workload's own events
    own_events: dict = field(default_factory=dict)  # calibrating tool -> count
    results: dict = field(default_factory=dict)  # tool -> {"wall": [...], "count": [...]}
    stats: dict = field(default_factory=dict)  # tool -> (run_time_ns, run_cnt) or None
    notes: list = field(default_factory=list)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Building the minimal programs and the getppid load generator


def build_minimal(outdir):
    """Builds bench/minimal (count.bpf.o and loader) into outdir; returns (obj, loader)."""
    p = subprocess.run(["make", "-s", "-C", os.path.join(BENCH, "minimal"), f"OUT={outdir}"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise RuntimeError("building bench/minimal failed:\n" + p.stdout.decode(errors="replace"))
    return os.path.join(outdir, "count.bpf.o"), os.path.join(outdir, "loader")


def getppid_loop(outdir):
    exe = os.path.join(REPO, "build", "tests", "programs", "getppid_loop")
    if os.access(exe, os.X_OK):
        return exe
    exe = os.path.join(outdir, "getppid_loop")
    subprocess.run(["gcc", "-O1", "-g", "-fno-inline", "-o", exe,
                    os.path.join(REPO, "tests", "programs", "getppid_loop.c")], check=True)
    return exe


def workload_link(workdir, target, comm):
    """A symlink named comm to target: the workload runs under a command name of its own, so
    that a calibration run can count its events apart from other processes' (the probes are
    system-wide, and tests running Ruby or getppid_loop at the same time add to the counts)."""
    link = os.path.join(workdir, comm)
    if not os.path.lexists(link):
        os.symlink(target, link)
    return link


def scenarios(rbt, bpftrace, minimal, workdir, n_uprobe, n_getppid, n_usdt):
    obj, loader = minimal
    ruby = workload_link(workdir, shutil.which("ruby") or "/usr/bin/ruby", RUBY_COMM)
    ppid = workload_link(workdir, getppid_loop(workdir), GETPPID_COMM)
    rbt_env = dict(os.environ, RBT_ATTACH_MARKER="1")

    def rbt_tool(prog, name="rbt"):
        return Tool(name, [rbt, "-e", prog], b"__rbt_attached__", 0.0, rbt_env)

    def bt_tool(prog, name="bpftrace"):
        # bpftrace 0.17 prints "Attaching N probes..." before it attaches: give it a moment
        # (the counts, checked against the other tools', show whether it was in time).
        return Tool(name, [bpftrace, "-e", prog], b"Attaching", 1.0)

    def tools(rbt_prog, bt_prog, minimal_args):
        return [rbt_tool(rbt_prog), bt_tool(bt_prog),
                Tool("minimal", [loader, obj, *minimal_args], b"attached", 0.0)]

    def calibrate(rbt_probe, bt_probe, comm):
        body = f'/comm == "{comm}"/ {{ @ = count(); }}'
        return [rbt_tool(f"{rbt_probe} {body}", "rbt /comm/"),
                bt_tool(f"{bt_probe} {body}", "bpftrace /comm/")]

    return {
        "uprobe": Scenario(
            "uprobe", "uprobe rb_str_new",
            [ruby, "-e", f'{n_uprobe}.times {{ |i| "x#{{i}}" }}'],
            tools("uprobe:libruby:rb_str_new { @ = count(); }",
                  f"uprobe:{LIBRUBY}:rb_str_new {{ @ = count(); }}",
                  ["uprobe", LIBRUBY, "rb_str_new"]),
            True,
            calibrate("uprobe:libruby:rb_str_new", f"uprobe:{LIBRUBY}:rb_str_new", RUBY_COMM)),
        "tracepoint": Scenario(
            "tracepoint", "tracepoint sys_enter_getppid",
            [ppid, str(n_getppid)],
            tools("tracepoint:syscalls:sys_enter_getppid { @ = count(); }",
                  "tracepoint:syscalls:sys_enter_getppid { @ = count(); }",
                  ["tracepoint", "syscalls", "sys_enter_getppid"]),
            True,
            calibrate("tracepoint:syscalls:sys_enter_getppid",
                      "tracepoint:syscalls:sys_enter_getppid", GETPPID_COMM)),
        "usdt": Scenario(
            "usdt", "usdt ruby:cmethod__entry",
            [ruby, "--disable-gems", "-e", f"{n_usdt}.times {{ |i| i.to_s }}"],
            tools("usdt:libruby:ruby:cmethod__entry { @ = count(); }",
                  f"usdt:{LIBRUBY}:ruby:cmethod__entry {{ @ = count(); }}",
                  ["usdt", LIBRUBY, "ruby", "cmethod__entry"]),
            False,
            calibrate("usdt:libruby:ruby:cmethod__entry",
                      f"usdt:{LIBRUBY}:ruby:cmethod__entry", RUBY_COMM)),
    }


# ---------------------------------------------------------------------------------------------
# Running


def kill_group(p, sig):
    try:
        os.killpg(p.pid, sig)
    except ProcessLookupError:
        pass


def start_tool(tool, logpath):
    """Starts tool with stdout+stderr to logpath; returns its Popen once attached, else raises."""
    with open(logpath, "wb") as out:
        try:
            p = subprocess.Popen(tool.argv, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT, env=tool.env, start_new_session=True)
        except OSError as e:
            raise RuntimeError(f"cannot start {tool.name}: {e}")
    deadline = time.perf_counter() + ATTACH_TIMEOUT
    while True:
        with open(logpath, "rb") as f:
            if tool.marker in f.read():
                break
        if p.poll() is not None or time.perf_counter() > deadline:
            kill_group(p, signal.SIGKILL)
            p.wait()
            raise RuntimeError(f"{tool.name} did not attach: " + tail(logpath))
        time.sleep(0.01)
    time.sleep(tool.settle)
    return p


def stop_tool(tool, p, logpath):
    """SIGINT, wait for the maps to be printed; returns the count (None if none printed)."""
    kill_group(p, signal.SIGINT)
    try:
        p.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        kill_group(p, signal.SIGKILL)
        p.wait()
    kill_group(p, signal.SIGKILL)  # leftovers, if any
    with open(logpath, "rb") as f:
        counts = COUNT_RE.findall(f.read())
    return int(counts[-1]) if counts else None


def tail(path, n=3):
    with open(path, "rb") as f:
        return " | ".join(f.read().decode(errors="replace").strip().splitlines()[-n:])


def time_workload(argv, errpath):
    """Wall time of argv from spawn to reap (s); its stderr goes to errpath."""
    with open(errpath, "wb") as err:
        start = time.perf_counter()
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=err, start_new_session=True)
        try:
            status = p.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            kill_group(p, signal.SIGKILL)
            p.wait()
            raise RuntimeError(f"workload took more than {RUN_TIMEOUT:g} s")
        wall = time.perf_counter() - start
    if status != 0:
        raise RuntimeError(f"workload exited {status}: " + tail(errpath))
    return wall


def prog_stats(pid):
    """{prog_id: (run_time_ns, run_cnt)} of the BPF programs process pid holds (fdinfo)."""
    out = {}
    fd_dir = f"/proc/{pid}/fdinfo"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return out
    for fd in fds:
        try:
            with open(os.path.join(fd_dir, fd)) as f:
                kv = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if "prog_id" in kv and "run_cnt" in kv:
            out[int(kv["prog_id"])] = (int(kv["run_time_ns"]), int(kv["run_cnt"]))
    return out


def one_run(sc, tool, workdir, stats=False):
    """Runs sc's workload under tool (None: nothing attached). Returns (wall, count, stats)."""
    errpath = os.path.join(workdir, "workload.err")
    if tool is None:
        wall = time_workload(sc.workload, errpath)
        check_workload_stderr(sc, "nothing", errpath)
        return wall, None, None
    logpath = os.path.join(workdir, re.sub(r"\W+", "_", tool.name) + ".log")
    p = start_tool(tool, logpath)
    try:
        wall = time_workload(sc.workload, errpath)
        check_workload_stderr(sc, tool.name, errpath)
        st = prog_stats(p.pid) if stats else None
    finally:
        count = stop_tool(tool, p, logpath)
    if count is None:
        raise RuntimeError(f"{tool.name} printed no count: " + tail(logpath))
    return wall, count, st


def check_workload_stderr(sc, who, errpath):
    """Ruby writes warnings on stderr (e.g. 'RSTRING_PTR is returning NULL!!' seen once with
    USDT probes enabled); keep one note per tool so the table says so."""
    if os.path.getsize(errpath):
        prefix = f"workload wrote to stderr under {who}"
        if not any(n.startswith(prefix) for n in sc.notes):
            sc.notes.append(f"{prefix} (first time shown): {tail(errpath, 1)[:120]}")


def run_scenario(sc, runs, workdir, with_stats=True):
    everyone = [None] + sc.tools
    names = ["nothing"] + [t.name for t in sc.tools]
    sc.results = {n: {"wall": [], "count": []} for n in names}
    failures = {n: [] for n in names}
    for i in range(-1, runs):  # round -1 is a warm-up, not counted
        k = i % len(everyone)
        order = everyone[k:] + everyone[:k]
        for tool in order:
            name = "nothing" if tool is None else tool.name
            try:
                wall, count, _ = one_run(sc, tool, workdir)
            except RuntimeError as e:
                failures[name].append(str(e))
                continue
            if i >= 0:
                sc.results[name]["wall"].append(wall)
                if count is not None:
                    sc.results[name]["count"].append(count)
    for name, errs in failures.items():
        if errs:
            log(f"warning: {sc.name}: {name}: {len(errs)} run(s) failed ({errs[-1]})")
            sc.notes.append(f"{name}: {len(errs)} run(s) failed: {errs[-1][:200]}")
    run_calibration(sc, workdir)
    if with_stats:
        run_stats_pass(sc, workdir)


def run_calibration(sc, workdir):
    """The workload's own number of events: rbt and bpftrace each count them once with a
    `/comm == "<workload's name>"/` filter (not timed)."""
    for tool in sc.calibrate:
        try:
            _, count, _ = one_run(sc, tool, workdir)
            sc.own_events[tool.name] = count
        except RuntimeError as e:
            sc.notes.append(f"calibration with {tool.name} failed: {e}")


def run_stats_pass(sc, workdir):
    """One run per tool with kernel.bpf_stats_enabled=1: BPF program run time per event."""
    path = "/proc/sys/kernel/bpf_stats_enabled"
    try:
        with open(path) as f:
            old = f.read().strip()
        with open(path, "w") as f:
            f.write("1")
    except OSError as e:
        sc.notes.append(f"bpf_stats not measured: cannot enable {path}: {e}")
        return
    per_tool = {t.name: [] for t in sc.tools}
    try:
        for i in range(STATS_RUNS):
            order = sc.tools if i % 2 == 0 else list(reversed(sc.tools))
            for tool in order:
                try:
                    _, count, st = one_run(sc, tool, workdir, stats=True)
                except RuntimeError as e:
                    sc.notes.append(f"bpf_stats run of {tool.name} failed: {e}")
                    continue
                ran = [v for v in (st or {}).values() if v[1] > 0]
                if ran:
                    per_tool[tool.name].append((sum(v[0] for v in ran), sum(v[1] for v in ran)))
    finally:
        with open(path, "w") as f:
            f.write(old)
    # Median run, by ns per run.
    for name, xs in per_tool.items():
        xs.sort(key=lambda v: v[0] / v[1])
        sc.stats[name] = xs[len(xs) // 2] if xs else None


# ---------------------------------------------------------------------------------------------
# Results


def median(xs):
    return statistics.median(xs) if xs else None


def events(sc, name):
    """Events the workload itself causes: the calibrated count when there is one (the
    smallest, should the calibrating tools disagree), else the tool's median count."""
    own = [c for c in sc.own_events.values() if c]
    return min(own) if own else median(sc.results[name]["count"])


def per_event(sc):
    """{tool: ns/event} from the medians, None where a tool has no good runs."""
    base = median(sc.results["nothing"]["wall"])
    out = {}
    for t in sc.tools:
        wall, count = median(sc.results[t.name]["wall"]), events(sc, t.name)
        out[t.name] = ((wall - base) * 1e9 / count) if base and wall and count else None
    return out


def spread(sc, name):
    """Half the interquartile range of the tool's walls, in ns/event (noise indication)."""
    r = sc.results[name]
    count = events(sc, name)
    if len(r["wall"]) < 4 or not count:
        return None
    q = statistics.quantiles(r["wall"], n=4)
    return (q[2] - q[0]) / 2 * 1e9 / count


def counts_note(sc):
    """Whether the counts agree: the calibrating tools' counts of the workload's own events
    with each other, and every timed run's count with them (more is other processes' events
    on the same probe; fewer would mean a tool attached late or lost events)."""
    own = [c for c in sc.own_events.values() if c]
    ranges = {t.name: (min(sc.results[t.name]["count"]), max(sc.results[t.name]["count"]))
              for t in sc.tools if sc.results[t.name]["count"]}
    timed = ", ".join(f"{n} {a}" + (f"..{b}" if b != a else "") for n, (a, b) in ranges.items())
    if not own:
        vals = [v for r in ranges.values() for v in r]
        if not vals:
            return "no counts"
        agree = max(vals) - min(vals) <= 0.001 * max(vals)
        return ("counts agree: " if agree else "COUNTS DISAGREE: ") + timed
    ref = min(own)
    cal = ", ".join(f"{n} {c}" for n, c in sc.own_events.items())
    parts = [("workload's own events agree: " if max(own) == ref else
              "WORKLOAD'S OWN EVENTS DISAGREE: ") + cal]
    low = [n for n, (a, _) in ranges.items() if a < ref]
    high = [n for n, (_, b) in ranges.items() if b > ref]
    parts.append("timed runs' counts: " + timed)
    if low:
        parts.append("BELOW the workload's own (late attach or lost events): " + ", ".join(low))
    if high:
        parts.append("above it in some runs (other processes hit the probe): " + ", ".join(high))
    return "; ".join(parts)


def fmt_ns(v):
    return "ERR" if v is None else f"{v:,.1f}"


def verdict(ok):
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def table(rows, header):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda cells: "  ".join(
        (str(c).ljust(w) if i == 0 else str(c).rjust(w)) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header).rstrip()] + [line(r).rstrip() for r in rows])


def report(scs, runs):
    out = [f"added cost per event (ns) = (median workload wall under the tool - median with "
           f"nothing attached) / median count; {runs} interleaved runs each"]
    rows, targets, stat_rows = [], [], []
    for sc in scs:
        pe = per_event(sc)
        rbt, bt, mn = pe.get("rbt"), pe.get("bpftrace"), pe.get("minimal")
        ratio = rbt / bt if rbt is not None and bt else None
        vs_min = (rbt / mn - 1) * 100 if rbt is not None and mn else None
        base = median(sc.results["nothing"]["wall"])
        rows.append([sc.label, f"{events(sc, 'rbt') or 0:,.0f}",
                     "ERR" if base is None else f"{base * 1000:.1f}",
                     fmt_ns(rbt), fmt_ns(bt), fmt_ns(mn),
                     "n/a" if ratio is None else f"{ratio:.3f}",
                     "n/a" if vs_min is None else f"{vs_min:+.1f}%"])
        targets.append([sc.label, "rbt <= bpftrace", f"{fmt_ns(rbt)} vs {fmt_ns(bt)}",
                        verdict(None if ratio is None else ratio <= 1.0)])
        if sc.minimal_target:
            targets.append([sc.label, "rbt within 10% of minimal",
                            "n/a" if vs_min is None else f"{vs_min:+.1f}%",
                            verdict(None if vs_min is None else vs_min <= 10.0)])
        if sc.stats:
            cell = lambda n: ("ERR" if not sc.stats.get(n) else
                              f"{sc.stats[n][0] / sc.stats[n][1]:,.1f} ({sc.stats[n][1]:,})")
            ns = lambda n: sc.stats[n][0] / sc.stats[n][1] if sc.stats.get(n) else None
            rel = (f"{(ns('rbt') / ns('minimal') - 1) * 100:+.1f}%"
                   if ns("rbt") is not None and ns("minimal") else "n/a")
            stat_rows.append([sc.label] + [cell(t.name) for t in sc.tools] + [rel])
    out.append(table(rows, ["scenario", "events", "nothing ms", "rbt ns/ev", "bpftrace ns/ev",
                            "minimal ns/ev", "rbt/bpftrace", "rbt vs minimal"]))
    out.append("")
    out.append(table(targets, ["scenario", "target (issue 4)", "measured", ""]))
    if stat_rows:
        out.append("")
        out.append(f"BPF program alone (kernel.bpf_stats_enabled, median of {STATS_RUNS} runs per "
                   "tool): run_time_ns / run_cnt, ns (run_cnt)")
        out.append(table(stat_rows, ["scenario"] + [t.name for t in scs[0].tools]
                         + ["rbt vs minimal"]))
    out.append("")
    for sc in scs:
        sp = ", ".join(f"{n} ±{v:,.1f}" for n in ["rbt", "bpftrace", "minimal"]
                       if (v := spread(sc, n)) is not None)
        out.append(f"note: {sc.label}: {counts_note(sc)}" + (f"; noise (half IQR of walls, "
                                                              f"ns/event): {sp}" if sp else ""))
        out.append(f"      workload: {' '.join(sc.workload)}")
        for t in sc.tools:
            out.append(f"      {t.name}: {' '.join(t.argv)}")
        for n in sc.notes:
            out.append(f"      {n}")
    return "\n".join(out)


def run_all(rbt, bpftrace, runs, selected, workdir, n_uprobe, n_getppid, n_usdt,
            with_stats=True):
    minimal = build_minimal(os.path.join(workdir, "minimal"))
    # A copy of rbt, so that a rebuild of build/rbt during the run (others work in the same
    # tree) neither fails a run nor mixes two versions in one measurement.
    # rbt runs rbt-full (the LLVM half) from its own directory, so that is copied too.
    snapshot = os.path.join(workdir, "rbt")
    shutil.copy2(rbt, snapshot)
    full = os.path.join(os.path.dirname(os.path.abspath(rbt)), "rbt-full")
    if os.path.exists(full):
        shutil.copy2(full, os.path.join(workdir, "rbt-full"))
    log(f"event_cost: measuring a copy of {rbt} (modified "
        f"{time.strftime('%H:%M:%S', time.localtime(os.stat(rbt).st_mtime))})")
    rbt = snapshot
    all_sc = scenarios(rbt, bpftrace, minimal, workdir, n_uprobe, n_getppid, n_usdt)
    done = []
    for name in selected:
        sc = all_sc[name]
        log(f"event_cost: {sc.label} ({runs} interleaved runs of nothing/rbt/bpftrace/minimal)")
        run_scenario(sc, runs, workdir, with_stats)
        done.append(sc)
    return done


def bench(ctx, Row):
    """Entry point for bench/run: prints the full table, returns bench/run Rows."""
    rbt = next(t.path for t in ctx.tools if t.name == "rbt")
    bpftrace = next(t.path for t in ctx.tools if t.name == "bpftrace")
    try:
        scs = run_all(rbt, bpftrace, ctx.runs, ["uprobe", "tracepoint", "usdt"], ctx.workdir,
                      100000, 5000000, 100000)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        log(f"warning: event_cost: {e}")
        return []
    print(report(scs, ctx.runs), flush=True)
    rows = []
    for sc in scs:
        pe = per_event(sc)
        r1 = lambda v: None if v is None else round(v, 1)
        rows.append(Row(f"{sc.label} ns/event", "ns",
                        {"rbt": r1(pe["rbt"]), "bpftrace": r1(pe["bpftrace"])}, 1.0,
                        note=f"minimal libbpf {fmt_ns(pe['minimal'])} ns/event; {counts_note(sc)}"))
        if sc.minimal_target and pe["minimal"] is not None:
            rows.append(Row(f"{sc.label} rbt vs minimal", "ns", {"rbt": r1(pe["rbt"])}, None,
                            abs_target=round(pe["minimal"] * 1.1, 1),
                            note="target: within 10% of the minimal libbpf program"))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rbt", default=os.path.join(REPO, "build", "rbt"))
    ap.add_argument("--bpftrace", default=shutil.which("bpftrace") or "/usr/bin/bpftrace")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--uprobe-n", type=int, default=100000)
    ap.add_argument("--getppid-n", type=int, default=5000000)
    ap.add_argument("--usdt-n", type=int, default=100000)
    ap.add_argument("--no-stats", action="store_true", help="skip the bpf_stats pass")
    ap.add_argument("scenarios", nargs="*", metavar="SCENARIO",
                    help="uprobe, tracepoint, usdt (default: all)")
    args = ap.parse_args()
    known = ["uprobe", "tracepoint", "usdt"]
    selected = args.scenarios or known
    if any(s not in known for s in selected) or args.runs < 1:
        ap.error(f"scenarios are {', '.join(known)}; --runs >= 1")
    for name, path in [("rbt", args.rbt), ("bpftrace", args.bpftrace), ("libruby", LIBRUBY)]:
        if not os.path.isfile(path):
            log(f"event_cost: {name} not found at {path}")
            return 2
    if os.geteuid() != 0:
        log("event_cost: needs root (it loads BPF programs)")
        return 2
    with tempfile.TemporaryDirectory(prefix="rbt-event-cost-") as workdir:
        try:
            scs = run_all(os.path.abspath(args.rbt), args.bpftrace, args.runs, selected,
                          workdir, args.uprobe_n, args.getppid_n, args.usdt_n,
                          not args.no_stats)
        except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
            log(f"event_cost: {e}")
            return 2
    print(report(scs, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
