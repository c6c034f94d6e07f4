"""print() of a large map, rbt next to bpftrace (issue 15 §4): `sudo bench/run print_map`.

Each tool fills @m with KEYS integer keys from a getppid() loop, then prints the whole map every
10 ms (`interval:ms:10 { printf("---\\n"); print(@m); }`), as fast as it can keep up: the
time per print is the time between the first and the last `---` marker seen in a WINDOW-second
window, divided by the prints in between. Then the tool gets SIGINT; the time until it exits
(it prints @m once more, at exit) is the second metric: Ctrl-C must work while printing.
Text (default) and JSON (-f json) output; stdout is read by this script through a pipe.
"""

import os
import signal
import statistics
import subprocess
import threading
import time

KEYS = 100000
WINDOW = 5.0        # seconds of printing measured per run
FILL_TIMEOUT = 60.0
EXIT_TIMEOUT = 60.0

SCRIPT = ("tracepoint:syscalls:sys_enter_getppid /@c < %d/ { @m[@c] = @c; @c = @c + 1; } "
          "interval:ms:10 /@c >= %d/ { printf(\"---\\n\"); print(@m); }") % (KEYS, KEYS)


def one_run(tool, json_output):
    """(seconds per print, seconds from SIGINT to exit, prints seen), or None on failure."""
    env = dict(os.environ)
    env["BPFTRACE_MAP_KEYS_MAX"] = str(2 * KEYS)   # bpftrace 0.17's name
    env["BPFTRACE_MAX_MAP_KEYS"] = str(2 * KEYS)   # rbt's (and later bpftrace's)
    argv = [tool.path] + (["-f", "json"] if json_output else []) + ["-e", SCRIPT]
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    markers = []

    def read():
        for line in p.stdout:
            if b"---" in line and len(line) < 64:
                markers.append(time.perf_counter())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.perf_counter() + FILL_TIMEOUT
        while not markers and time.perf_counter() < deadline and p.poll() is None:
            time.sleep(0.01)
        if not markers:
            return None
        start = markers[0]
        time.sleep(max(0.0, start + WINDOW - time.perf_counter()))
        seen = [t for t in markers if t <= start + WINDOW]
        os.killpg(p.pid, signal.SIGINT)
        sigint = time.perf_counter()
        try:
            p.wait(timeout=EXIT_TIMEOUT)
            exit_s = time.perf_counter() - sigint
        except subprocess.TimeoutExpired:
            exit_s = float("inf")
        if len(seen) < 2:
            per_print = WINDOW  # not even two prints in the window: at least this long
        else:
            per_print = (seen[-1] - seen[0]) / (len(seen) - 1)
        return per_print, exit_s, len(seen)
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
        reader.join(timeout=2)


def rows(ctx, Row, getppid_load):
    getppid_load(ctx)
    runs = min(ctx.runs, 3)
    out = []
    for json_output in (False, True):
        label = "json" if json_output else "text"
        per_print = {t.name: [] for t in ctx.tools}
        exits = {t.name: [] for t in ctx.tools}
        for i in range(runs):
            order = ctx.tools if i % 2 == 0 else list(reversed(ctx.tools))
            for tool in order:
                r = one_run(tool, json_output)
                if r:
                    per_print[tool.name].append(r[0])
                    exits[tool.name].append(r[1])
        med = lambda d: {k: (statistics.median(v) if v else None) for k, v in d.items()}
        out.append(Row(f"print() of {KEYS:,} keys ({label})", "s", med(per_print), None,
                       note=f"interval:ms:10 printing; median of {runs} runs of {WINDOW:g} s"))
        out.append(Row(f"SIGINT to exit while printing ({label})", "s", med(exits), None,
                       note="includes printing the map once more at exit"))
    return out
