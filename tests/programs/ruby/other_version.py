#!/usr/bin/env python3
"""rstack on a Ruby whose version rbt does not know, and RBT_RUBY_LAYOUT's override.

Copies the system's libruby into a temporary directory with its `ruby_version` bytes changed
(3.1.2 becomes 3.9.2), runs ruby on it through LD_LIBRARY_PATH (a method that spins), and
attaches `rbt -p` to it:

    unknown  no override: an error naming the version found and the override
    override RBT_RUBY_LAYOUT=3.1: the right layout, stacks print
    wrong    RBT_RUBY_LAYOUT=3.3: the attach-time check says the layout does not match
    systemwide  no override and no -p: a sampler filtered on the pid meets it, and its stacks
             say "[no Ruby frames: unknown Ruby layout]"

usage: other_version.py RBT MODE"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# Stopped with SIGINT once it has run for a moment (an error exits at once).
PROG = "profile:hz:199 { @[rstack] = count(); }"
RUBY = "def spin_here = (x = 0; while true; x += 1; end); spin_here"


def libruby_of(ruby):
    out = subprocess.run(["ldd", ruby], capture_output=True, text=True).stdout
    m = re.search(r"(libruby\S*) => (\S+)", out)
    return (m.group(1), os.path.realpath(m.group(2))) if m else (None, None)


def file_offset(lib, vaddr):
    """File offset of a virtual address, from the PT_LOAD headers."""
    out = subprocess.run(["readelf", "-lW", lib], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            off, va, filesz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
            if va <= vaddr < va + filesz:
                return off + vaddr - va
    return None


def patched_copy(workdir):
    ruby = shutil.which("ruby")
    soname, lib = libruby_of(ruby)
    if not lib:
        print("ruby is not linked with a shared libruby: nothing to patch")
        return None
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) R ruby_version$", nm, re.M)
    off = file_offset(lib, int(m.group(1), 16)) if m else None
    data = bytearray(open(lib, "rb").read())
    if off is None or not re.match(rb"\d\.\d+\.\d+\0", bytes(data[off:off + 8])):
        print("cannot find ruby_version's bytes in", lib)
        return None
    data[off + 2] = ord("9")  # "3.1.2" -> "3.9.2": a minor version no layout is for
    with open(os.path.join(workdir, soname), "wb") as f:
        f.write(data)
    return ruby


def main():
    rbt, mode = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="rbt-ruby-") as workdir:
        ruby = patched_copy(workdir)
        if not ruby:
            return 1
        env = dict(os.environ, LD_LIBRARY_PATH=workdir)
        target = subprocess.Popen([ruby, "--disable-gems", "-e", RUBY], env=env)
        try:
            time.sleep(0.5)
            maps = open(f"/proc/{target.pid}/maps").read()
            if workdir not in maps:
                print("the patched libruby is not the one ruby loaded")
                return 1
            env = dict(os.environ)
            env.pop("RBT_RUBY_LAYOUT", None)
            if mode == "override":
                env["RBT_RUBY_LAYOUT"] = "3.1"
            elif mode == "wrong":
                env["RBT_RUBY_LAYOUT"] = "3.3"
            args = ["-p", str(target.pid), "-e", PROG]
            if mode == "systemwide":
                args = ["-e", f"profile:hz:199 /pid == {target.pid}/ {{ @[rstack] = count(); }} "
                              "interval:ms:800 { exit(); }"]
            rbt_proc = subprocess.Popen([rbt] + args, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
            # An error exits at once: within 2 s, or a sanitized rbt's several times that
            # (RBT_TEST_TIMEOUT_SCALE, scripts/sanitize), which a fixed 2 s interrupted mid-start.
            scale = float(os.environ.get("RBT_TEST_TIMEOUT_SCALE", "1"))
            try:
                out, err = rbt_proc.communicate(timeout=2 * scale)
            except subprocess.TimeoutExpired:
                rbt_proc.send_signal(signal.SIGINT)
                out, err = rbt_proc.communicate(timeout=20 * scale)
            run = subprocess.CompletedProcess(rbt_proc.args, rbt_proc.returncode, out, err)
        finally:
            target.kill()
            target.wait()
    print(f"exit {run.returncode}")
    print(run.stdout, end="")
    print(run.stderr, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
