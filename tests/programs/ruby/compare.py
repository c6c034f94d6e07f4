#!/usr/bin/env python3
"""Runs a marker workload (marks.rb) under rbt and compares every rstack with Ruby's own
caller_locations, frame by frame, per thread (design: ruby-stack.md §6).

usage: compare.py RBT WORKLOAD.rb [--thread-lookup=list]
Prints "rstack: N marks match" and exits 0, or prints each mismatch and exits 1."""
import json
import os
import re
import subprocess
import sys
import tempfile

import thread_lookup

PROG = 'uprobe:libruby:rb_gcd { printf("MARK %d\\n%s\\nEND\\n", tid, rstack); }'
FRAME = re.compile(r"^(?P<label>.*) \((?P<path>.*):(?P<line>\d+)\)$")
CUT = re.compile(r"^\[\.\.\. (\d+) more frames\]$")
DEPTH = 128


def rbt_marks(text):
    """{tid: [frames...]} in order, each frame (label, path, line) or (label, None, None)."""
    marks, cur, tid = {}, None, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("MARK "):
            tid, cur = int(line.split()[1]), []
        elif line == "END" and cur is not None:
            marks.setdefault(tid, []).append(cur)
            cur = None
        elif cur is not None and line:
            if line.endswith(" <cfunc>"):
                cur.append((line[: -len(" <cfunc>")], None, None))
            elif CUT.match(line):
                cur.append(("<cut>", None, int(CUT.match(line).group(1))))
            else:
                m = FRAME.match(line)
                cur.append((m.group("label"), m.group("path"), int(m.group("line"))) if m
                           else (line, "?", -1))
    return marks


def compare(expected, got):
    """None when got matches expected (gcd, then caller_locations(0)), else the reason."""
    want = [("gcd", None, None)] + [tuple(f) for f in expected]
    cut = got and got[-1][0] == "<cut>"
    frames = got[:-1] if cut else got
    if cut and len(frames) != DEPTH:
        return f"cut after {len(frames)} frames, not {DEPTH}"
    if not cut and len(frames) != len(want):
        return f"{len(frames)} frames, Ruby has {len(want)}"
    for i, (g, w) in enumerate(zip(frames, want)):
        if g[0] != w[0]:
            return f"frame {i}: label {g[0]!r}, Ruby says {w[0]!r}"
        if g[1] is not None and (os.path.basename(g[1]) != os.path.basename(w[1]) or g[2] != w[2]):
            return f"frame {i} ({g[0]}): {g[1]}:{g[2]}, Ruby says {w[1]}:{w[2]}"
    return None


def main():
    (rbt, workload), lookup = thread_lookup.parse(sys.argv)
    with tempfile.TemporaryDirectory() as tmp:
        out_json = os.path.join(tmp, "marks.json")
        run = subprocess.run([rbt, *thread_lookup.rbt_flags(lookup), "-e", PROG,
                              "-c", f"ruby {workload} {out_json}"],
                             capture_output=True, text=True, timeout=120,
                             env=thread_lookup.rbt_env(lookup))
        if run.returncode != 0:
            print(run.stderr)
            return 1
        why = thread_lookup.check(lookup, run.stderr)
        if why:
            print(why)
            return 1
        ruby = json.load(open(out_json))
    got = rbt_marks(run.stdout)
    expected = {}
    for tid, frames in ruby:
        expected.setdefault(tid, []).append(frames)
    bad = 0
    for tid, stacks in expected.items():
        mine = got.get(tid, [])
        if len(mine) != len(stacks):
            print(f"thread {tid}: rbt saw {len(mine)} marks, Ruby made {len(stacks)}")
            bad += 1
        for n, (w, g) in enumerate(zip(stacks, mine)):
            why = compare(w, g)
            if why:
                bad += 1
                print(f"thread {tid} mark {n}: {why}")
                print("  rbt:  " + " | ".join(f"{f[0]} {f[1]}:{f[2]}" for f in g[:12]))
                print("  ruby: " + " | ".join(f"{f[0]} {f[1]}:{f[2]}" for f in w[:12]))
    total = sum(len(s) for s in expected.values())
    print(f"rstack: {total - bad} of {total} marks match" if bad else f"rstack: {total} marks match")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
