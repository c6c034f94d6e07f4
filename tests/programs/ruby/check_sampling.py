#!/usr/bin/env python3
"""Samples sampling.rb system-wide with `profile:hz:499 { @[comm, rstack] = count(); }` and checks that
each thread's stacks show only its own method (spin_ruby for rb_spin, squeeze_zlib for rb_zlib).

usage: check_sampling.py RBT WORKLOAD.rb [--thread-lookup=list]"""
import os
import re
import subprocess
import sys

import thread_lookup

PROG = ('profile:hz:499 /comm == "rb_spin" || comm == "rb_zlib"/ '
        '{ @[comm, rstack] = count(); }')
OWN = {"rb_spin": "spin_ruby", "rb_zlib": "squeeze_zlib"}


def main():
    (rbt, workload), lookup = thread_lookup.parse(sys.argv)
    # System-wide, as a profiler is used: rbt discovers the Ruby process by itself. The
    # workload runs until it is killed after rbt's 2 s of sampling: with a fixed 3 s it had
    # ended before rbt sampled it, both under a sanitized rbt (several times slower to start)
    # and under a loaded CI machine (rbt attached 3.4 s after ruby started).
    scale = float(os.environ.get("RBT_TEST_TIMEOUT_SCALE", "1"))
    ruby = subprocess.Popen(["ruby", workload, str(120 * scale)])
    try:
        run = subprocess.run([rbt, *thread_lookup.rbt_flags(lookup),
                              "-e", PROG + " interval:ms:2000 { exit(); }"],
                             capture_output=True, text=True, timeout=60 * scale,
                             env=thread_lookup.rbt_env(lookup))
    finally:
        ruby.kill()
        ruby.wait()
    if run.returncode != 0:
        print(run.stderr)
        return 1
    why = thread_lookup.check(lookup, run.stderr)
    if why:
        print(why)
        print("rbt's stderr:\n" + run.stderr + "rbt's stdout:\n" + run.stdout[:2000])
        return 1
    # Keys print as "@[comm, " newline, frames, "]: N".
    entries = re.findall(r"@\[(rb_spin|rb_zlib), \n(.*?)\]: (\d+)", run.stdout, re.S)
    samples = {"rb_spin": 0, "rb_zlib": 0}
    bad = 0
    for comm, frames, n in entries:
        text = frames.strip()
        if not text or text.startswith("[no Ruby frames"):
            continue  # before discovery, or a moment outside Ruby code
        samples[comm] += int(n)
        other = OWN["rb_zlib" if comm == "rb_spin" else "rb_spin"]
        if OWN[comm] not in text or other in text:
            bad += int(n)
            print(f"{comm}: {n} samples with a foreign stack:\n{frames}")
    print(f"samples: rb_spin {samples['rb_spin']}, rb_zlib {samples['rb_zlib']}, foreign {bad}")
    if bad or samples["rb_spin"] < 50 or samples["rb_zlib"] < 50:
        return 1
    print("rstack: every thread samples its own stack")
    return 0


if __name__ == "__main__":
    sys.exit(main())
