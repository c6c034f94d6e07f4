#!/usr/bin/env python3
"""Writes rbt profiles of real processes and checks them with their real consumers.

    check_profiles.py RBT hot FORMAT     a 99 Hz rstack profile of profile_hot.rb: the format's
                                         consumer must show `hot` as the hottest frame
    check_profiles.py RBT exact FORMAT   a uprobe on rb_gcd counted by rstack (exactly 500
                                         calls): totals and per-stack counts must equal
                                         rbt's own text output
    check_profiles.py RBT report FORMAT  `rbt record` of profile_hot.rb converted by `rbt report -f
                                         FORMAT`: the same checks as hot
    check_profiles.py RBT native FORMAT  @[comm, pid, kstack, ustack] at sys_enter_getppid of
                                         `getppid_loop 1000`: 1000 in total, libc's syscall
                                         (user) above do_syscall_64 (kernel)

FORMAT: folded, pprof, speedscope or svg. Consumers: go tool pprof (-raw, -top), speedscope's
schema with ajv and its web app in headless Chromium, xmllint and Chromium for the SVG. Each
check prints `ok: ...` lines; any failure prints `FAIL: ...` and exits 1. Environment:
RBT_TEST_PROGRAMS (built test programs), RBT_TEST_TOOLS (npm packages: build/test-tools).
"""

import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.environ.get("RBT_TEST_PROGRAMS", "")
TOOLS = os.environ.get("RBT_TEST_TOOLS", "")
EXT = {"folded": ".folded", "pprof": ".pb.gz", "speedscope": ".speedscope.json", "svg": ".svg"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, **kw):
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"))
    env.setdefault("NODE_PATH", os.path.join(TOOLS, "node_modules"))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=180, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}: {p.stdout[-2000:]}{p.stderr[-2000:]}")
    return p.stdout


def rbt(binary, args):
    return run([binary, "-q"] + args)


def node(script, *args):
    out = run(["node", os.path.join(HERE, script)] + list(args))
    print("ok: " + out.strip().replace("\n", "\nok: "))


def pprof(flag, path):
    return run(["go", "tool", "pprof", flag, path])


# --- reading each format back (independently of rbt's writers) ---

def folded_lines(path):
    stacks = {}
    with open(path) as f:
        for line in f:
            stack, _, value = line.rstrip("\n").rpartition(" ")
            stacks[stack] = stacks.get(stack, 0) + int(value)
    return stacks


def pprof_top(path):
    """(total, [(flat, name)]) from go tool pprof -top."""
    out = pprof("-top", path)
    total = re.search(r"of (\d+) total", out)
    if not total:
        fail("go tool pprof -top shows no total:\n" + out)
    rows = [(int(m.group(1)), m.group(2).strip())
            for m in re.finditer(r"^\s*(\d+)\s+\S+%\s+\S+%\s+\d+\s+\S+%\s+(.+)$", out, re.M)]
    return int(total.group(1)), rows


def pprof_raw_samples(path):
    """[(value, [location ids])] from go tool pprof -raw, and its location names."""
    out = pprof("-raw", path)
    samples = [(int(m.group(1)), m.group(2).split())
               for m in re.finditer(r"^\s+(\d+): ([\d ]+)$", out, re.M)]
    location = re.compile(r"^\s+(\d+): 0x0 M=\d+ (.*?) \S*:\d+ s=", re.M)
    names = {m.group(1): m.group(2) for m in location.finditer(out)}
    return out, samples, names


def text_stacks(output):
    """rbt's text output of @[rstack] as {(frames leaf first): count}."""
    stacks, frames = {}, []
    for line in output.splitlines():
        if line.startswith("@["):
            frames = []
        elif line.startswith("]: "):
            stacks[tuple(frames)] = int(line[3:])
        elif line.startswith("        "):
            frames.append(line.strip())
    return stacks


# --- the checks ---

def check_hot(binary, fmt, tmp):
    path = os.path.join(tmp, "hot" + EXT[fmt])
    script = os.path.join(PROGRAMS, "ruby", "profile_hot.rb")
    rbt(binary, ["-c", "ruby " + script, "-e",
                 "profile:hz:99 /pid == cpid/ { @[rstack] = count(); }", "-o", path])
    check_hot_file(fmt, path)


def check_report(binary, fmt, tmp):
    """The same checks on what `rbt report` converts a `rbt record` file into."""
    recorded = os.path.join(tmp, "hot.json.gz")
    script = os.path.join(PROGRAMS, "ruby", "profile_hot.rb")
    run([binary, "record", "-q", "-c", "ruby " + script, "-o", recorded])
    path = os.path.join(tmp, "report" + EXT[fmt])
    run([binary, "report", "-f", fmt, "-o", path, recorded])
    check_hot_file(fmt, path)


def check_hot_file(fmt, path):
    if fmt == "folded":
        stacks = folded_lines(path)
        self_time = {}
        for stack, v in stacks.items():
            leaf = stack.split(";")[-1]
            self_time[leaf] = self_time.get(leaf, 0) + v
        top = max(self_time, key=self_time.get)
        if not top.startswith("hot ("):
            fail(f"hottest leaf is {top!r}: {self_time}")
        print(f"ok: folded: {sum(stacks.values())} samples, hottest leaf {top}")
        node("view_speedscope.js", path, "hot")
    elif fmt == "pprof":
        total, rows = pprof_top(path)
        if not rows or rows[0][1] != "hot":
            fail(f"go tool pprof -top's first row is {rows[:1]}")
        print(f"ok: pprof: go tool pprof -top: {total} samples, hottest function hot")
        raw = pprof("-raw", path)
        if "PeriodType: cpu nanoseconds" not in raw or "Period: 10101010" not in raw:
            fail("no 99 Hz period in:\n" + raw[:500])
        if not re.search(r" hot \S*profile_hot\.rb:\d+ s=", raw):
            fail("no location for hot with its file and line:\n" + raw)
        print("ok: pprof: period 10101010 ns, hot with its file and line")
        node("view_speedscope.js", path, "hot")
    elif fmt == "speedscope":
        node("validate_speedscope.js", path)
        node("view_speedscope.js", path, "hot")
    elif fmt == "svg":
        run(["xmllint", "--noout", path])
        print("ok: svg: xmllint accepts it")
        node("view_svg.js", path, "^hot ")


def check_exact(binary, fmt, tmp):
    path = os.path.join(tmp, "exact" + EXT[fmt])
    script = os.path.join(PROGRAMS, "ruby", "profile_exact.rb")
    prog = "uprobe:libruby:rb_gcd /pid == cpid/ { @[rstack] = count(); }"
    text = text_stacks(rbt(binary, ["-c", "ruby " + script, "-e", prog]))
    rbt(binary, ["-c", "ruby " + script, "-e", prog, "-o", path])
    total = sum(text.values())
    if total != 500:
        fail(f"text output counts {total} calls, not 500: {text}")

    def leaf_pair(frames):  # the two frames above gcd: (mark, left|right)
        labels = [f.split(" ")[0] for f in frames]
        return labels[1], labels[4]  # gcd <cfunc>, mark, block, times, left|right
    want = {}
    for frames, v in text.items():
        k = leaf_pair(frames)
        want[k] = want.get(k, 0) + v
    if want != {("mark", "left"): 300, ("mark", "right"): 200}:
        fail(f"text output stacks: {want}")

    if fmt == "folded":
        got = {}
        for stack, v in folded_lines(path).items():
            labels = [f.split(" ")[0] for f in reversed(stack.split(";"))]
            got[(labels[1], labels[4])] = got.get((labels[1], labels[4]), 0) + v
        if got != want:
            fail(f"folded {got} != text {want}")
    elif fmt == "pprof":
        total_pp, rows = pprof_top(path)
        if total_pp != total:
            fail(f"go tool pprof -top total {total_pp} != text total {total}")
        flat = dict((name, v) for v, name in rows)
        if flat.get("gcd") != 500:
            fail(f"go tool pprof -top: gcd flat {flat.get('gcd')}, not 500")
        raw, samples, names = pprof_raw_samples(path)
        got = {}
        for v, locs in samples:
            k = (names.get(locs[1]), names.get(locs[4]))
            got[k] = got.get(k, 0) + v
        if got != want:
            fail(f"go tool pprof -raw stacks {got} != text {want}\n{raw}")
    elif fmt == "speedscope":
        node("validate_speedscope.js", path)
        with open(path) as f:
            data = json.load(f)
        frames = data["shared"]["frames"]
        prof = data["profiles"][0]
        got = {}
        for stack, w in zip(prof["samples"], prof["weights"]):
            labels = [frames[i]["name"].split(" ")[0] for i in reversed(stack)]
            got[(labels[1], labels[4])] = got.get((labels[1], labels[4]), 0) + w
        if got != want or prof["endValue"] != total:
            fail(f"speedscope {got} (end {prof['endValue']}) != text {want}")
    elif fmt == "svg":
        run(["xmllint", "--noout", path])
        with open(path) as f:
            svg = f.read()
        m = re.search(r"<title>all\n([\d,]+) samples, 100.00%</title>", svg)
        if not m or int(m.group(1).replace(",", "")) != total:
            fail(f"svg root is not {total} samples")
        for label, n in (("left", 300), ("right", 200)):
            if not re.search(rf"<title>{label} \([^)]*\)\n{n} samples, ", svg):
                fail(f"svg has no {label} frame of {n} samples")
    print(f"ok: {fmt}: {total} calls, left 300 and right 200, as in the text output")


def check_native(binary, fmt, tmp):
    path = os.path.join(tmp, "native" + EXT[fmt])
    loop = os.path.join(PROGRAMS, "getppid_loop")
    prog = ("tracepoint:syscalls:sys_enter_getppid /pid == cpid/ "
            "{ @[comm, pid, kstack, ustack] = count(); }")
    rbt(binary, ["-c", loop + " 1000", "-e", prog, "-o", path])
    if fmt == "folded":
        stacks = folded_lines(path)
        total = sum(stacks.values())
        roots = {s.split(";")[0] for s in stacks}
        in_order = re.compile(r"^getppid_loop;pid \d+;.*;syscall;.*;do_syscall_64;")
        if total != 1000 or roots != {"getppid_loop"} or not all(in_order.match(s) for s in stacks):
            fail(f"folded: {total} calls, roots {roots}: {stacks}")
    elif fmt == "pprof":
        total, rows = pprof_top(path)
        raw = pprof("-raw", path)
        if total != 1000 or "comm:[getppid_loop]" not in raw or not re.search(r"pid:\[\d+\]", raw):
            fail(f"pprof: {total} calls, labels:\n{raw}")
        if not re.search(r" syscall \S*libc\S*:0 s=", raw) or " do_syscall_64 [kernel]:0" not in raw:
            fail("pprof: no syscall in libc or do_syscall_64 in the kernel:\n" + raw)
    elif fmt == "speedscope":
        node("validate_speedscope.js", path)
        with open(path) as f:
            data = json.load(f)
        names = [fr["name"] for fr in data["shared"]["frames"]]
        if sum(data["profiles"][0]["weights"]) != 1000 or "syscall" not in names or \
                "do_syscall_64" not in names:
            fail(f"speedscope: frames {names}")
    elif fmt == "svg":
        run(["xmllint", "--noout", path])
        with open(path) as f:
            svg = f.read()
        if "<title>all\n1,000 samples, 100.00%</title>" not in svg or "<title>syscall\n" not in svg:
            fail("svg: no 1,000-sample root or no syscall frame")
        node("view_svg.js", path, "^do_syscall_64$")
    print(f"ok: {fmt}: 1000 getppid calls with comm, pid, kernel and user stacks")


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in EXT:
        print(__doc__)
        sys.exit(2)
    binary, what, fmt = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        {"hot": check_hot, "exact": check_exact, "native": check_native,
         "report": check_report}[what](binary, fmt, tmp)
    print(f"check_profiles: {what} {fmt} passed")


if __name__ == "__main__":
    main()
