#!/usr/bin/env python3
"""bpftrace's own tools (the *.bt files Debian's bpftrace package installs in /usr/sbin) run
by rbt, for tests/runtime/bpftrace_tools.test.

    bpftrace_tools.py RBT verify          every tool through `rbt --dry-run` (compile, load,
                                          verify): one line per tool, then "N of M verify"
    bpftrace_tools.py RBT shape TOOL      TOOL run by bpftrace and by rbt on the same workload:
                                          prints "same shape: TOOL" when the header and the
                                          workload's event lines (or the maps printed at exit)
                                          have the same shape, else both outputs

A line's shape is the line with every number replaced by N, histogram bars by one @ and runs
of blanks by one blank: values differ from run to run, columns and words must not.
"""

import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

TOOLS_DIR = "/usr/sbin"

# Per tool: the workload run once both tracers have attached, and the regex that picks its
# event lines out of the output (None: compare the maps printed at exit instead).
WORKLOADS = {
    "execsnoop": ("/bin/echo rbt-tools-probe >/dev/null", r".*/bin/echo rbt-tools-probe$"),
    "opensnoop": ("cat /tmp/rbt-tools-no-such-file 2>/dev/null; true", r".* cat .*/tmp/rbt-tools-no-such-file$"),
    "statsnoop": ("stat /tmp/rbt-tools-no-such-file 2>/dev/null; true", r".* stat .*/tmp/rbt-tools-no-such-file$"),
    "killsnoop": ("sleep 5 & p=$!; /bin/kill -s 0 $p; kill $p", r".* kill +0 +\d+ +0$"),
    "syncsnoop": ("sync", r".* sync +tracepoint:syscalls:sys_enter_sync$"),
    "gethostlatency": ("getent ahosts localhost >/dev/null", r".* getent +\d+ localhost$"),
    "syscount": ("true", None),
    "cpuwalk": ("timeout 1 sh -c 'while :; do :; done'", None),
    "pidpersec": ("for i in 1 2 3; do /bin/true; done; sleep 1.2", r"\d\d:\d\d:\d\d PIDs/sec: @: \d+$"),
}

ATTACHED = re.compile(r"^(Attaching \d+ probes?\.\.\.|Attached \d+ probes?)$")


def shape(line):
    line = re.sub(r"@+", "@", line.rstrip())
    line = re.sub(r"\d+", "N", line)
    return re.sub(r"\s+", " ", line)


def verify(rbt):
    tools = sorted(glob.glob(os.path.join(TOOLS_DIR, "*.bt")))
    ok = 0
    for path in tools:
        name = os.path.basename(path)
        r = subprocess.run([rbt, "--dry-run", path], capture_output=True, text=True, timeout=120)
        if r.returncode == 0:
            ok += 1
            print(f"ok {name}")
            continue
        first = next((l for l in r.stderr.splitlines() if "error:" in l), r.stderr.strip()[:200])
        print(f"refused {name}: {first.split('error: ', 1)[-1]}")
    print(f"{ok} of {len(tools)} verify")


def tool_env():
    # As a user runs them: not with the test runner's attach marker, which rbt would print.
    env = dict(os.environ)
    env.pop("RBT_ATTACH_MARKER", None)
    return env


def run_tool(argv, workload, seconds_after):
    """Output of argv (a tracer on a tool): started, given time to attach, the workload run,
    then stopped with SIGINT as a user's Ctrl-C."""
    with tempfile.TemporaryFile(mode="w+") as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                             env=tool_env())
        # Both print the attach line once every probe is attached.
        deadline = time.time() + 30
        while time.time() < deadline:
            out.seek(0)
            if any(ATTACHED.match(l.strip()) for l in out.read().splitlines()):
                break
            if p.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(0.3)
        # bash by its path: run by name, Python tries every PATH entry in turn, and each failed
        # execve is an event for execsnoop (16 under CI's PATH), which bpftrace 0.17 printed
        # with one argv missing, merged into the workload's line.
        subprocess.run(["/bin/bash", "-c", workload], timeout=30)
        time.sleep(seconds_after)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGINT)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        out.seek(0)
        return [l for l in out.read().splitlines()
                if not ATTACHED.match(l.strip()) and not l.startswith("ERROR: Unknown error -1")]


def header(lines):
    """The lines BEGIN printed: up to the first event, map or blank line."""
    head = []
    for l in lines:
        if not l.strip() or l.startswith("@") or re.match(r"^\s*\d", l):
            break
        head.append(shape(l))
    return head


def map_shapes(lines):
    return sorted({shape(l) for l in lines if l.startswith("@") or re.match(r"^\[", l)})


def compare(rbt, tool):
    workload, event = WORKLOADS[tool]
    path = os.path.join(TOOLS_DIR, tool + ".bt")
    got = {}
    for name, argv in (("bpftrace", ["bpftrace", path]), ("rbt", [rbt, path])):
        got[name] = run_tool(argv, workload, 0.5)
    b, r = got["bpftrace"], got["rbt"]
    problems = []
    if header(b) != header(r):
        problems.append(f"headers differ: {header(b)} / {header(r)}")
    if event:
        eb = {shape(l) for l in b if re.match(event, l)}
        er = {shape(l) for l in r if re.match(event, l)}
        if not eb:
            problems.append("bpftrace printed no workload event (the reference failed)")
        if not er:
            problems.append("rbt printed no workload event")
        elif eb and not (eb & er):
            problems.append(f"event lines differ: {sorted(eb)} / {sorted(er)}")
    else:
        mb, mr = map_shapes(b), map_shapes(r)
        if not mb:
            problems.append("bpftrace printed no map (the reference failed)")
        # Histogram rows and keys depend on what ran: the map names and line forms must
        # match, counted as a set of shapes present in both.
        names_b = {re.match(r"@\w*", l).group(0) for l in mb if l.startswith("@")}
        names_r = {re.match(r"@\w*", l).group(0) for l in mr if l.startswith("@")}
        if names_b != names_r:
            problems.append(f"maps differ: {sorted(names_b)} / {sorted(names_r)}")
        if mb and not (set(mb) & set(mr)):
            problems.append(f"no map line of the same shape: {mb[:5]} / {mr[:5]}")
    if problems:
        print(f"different shape: {tool}")
        for p in problems:
            print("  " + p)
        for name in ("bpftrace", "rbt"):
            print(f"--- {name}")
            for l in got[name][:40]:
                print("  " + l)
        return 1
    print(f"same shape: {tool}")
    return 0


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rbt, what = sys.argv[1], sys.argv[2]
    if what == "verify":
        verify(rbt)
        return 0
    if what == "shape" and len(sys.argv) == 4 and sys.argv[3] in WORKLOADS:
        return compare(rbt, sys.argv[3])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
