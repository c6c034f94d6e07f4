#!/usr/bin/env python3
"""rstack for Ruby processes that start after rbt attached, system-wide (no -p or -c), checked
against Ruby's own caller_locations mark by mark, the very first mark included (design:
docs/rstack-discovery.md; workload: early.rb, whose first mark is made while the main script
requires its first file).

usage: everywhere.py RBT SCENARIO
  shell       a ruby started by a shell
  fork        a Process.fork child (another pid, the parent's facts)
  chain       sh -c -> exec env -> ruby, as bundle exec does
  exec        a ruby that execs a new ruby (same pid, a new image)
  namespace   a ruby in its own PID and mount namespaces whose libruby is reached through a
              path that exists only inside them; marks keyed by the pid the host sees
  namespace_p the same ruby traced with -p given its host pid
  new_binary  a copy of libruby made after the attach (LD_LIBRARY_PATH): its first process is
              found by user space, its second by BPF from its first mark
  static      a ruby with the interpreter linked into the executable (no libruby.so;
              $RBT_STATIC_RUBY, built by scripts/build-static-ruby), first on the PATH rbt and
              the shell see, as rbenv/ruby-build install one
  static_c    that ruby started by rbt -c
  static_p    that ruby traced with -p
Prints "rstack everywhere: SCENARIO: N marks match" and exits 0, or each mismatch and exits 1."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import compare

HERE = os.path.dirname(os.path.abspath(__file__))
EARLY = os.path.join(HERE, "early.rb")
PRINT = '{ printf("MARK %d %d\\n%s\\nEND\\n", pid, tid, rstack); }'
MARK_PROG = "uprobe:libruby:rb_ary_assoc " + PRINT
PPID_PROG = 'tracepoint:syscalls:sys_enter_getppid /comm == "ruby"/ ' + PRINT


class Tracer:
    """rbt running in the background from its attach until stop()."""

    def __init__(self, rbt, args, env=None):
        env = dict(env or os.environ, RBT_ATTACH_MARKER="1")
        self.proc = subprocess.Popen([rbt, *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        self.out, self.err = [], []
        self.reader = threading.Thread(target=lambda: self.out.append(self.proc.stdout.read()))
        self.reader.start()
        attached = threading.Event()

        def read_stderr():
            for line in self.proc.stderr:
                self.err.append(line)
                if "__rbt_attached__" in line:
                    attached.set()
            attached.set()  # rbt ended
        threading.Thread(target=read_stderr, daemon=True).start()
        attached.wait(60)
        if self.proc.poll() is not None or not any("__rbt_attached__" in l for l in self.err):
            self.proc.kill()
            raise SystemExit("rbt did not attach: " + "".join(self.err))

    def stop(self):
        if self.proc.poll() is None:
            time.sleep(0.3)  # the last events reach user space
            self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=30)
        self.reader.join()
        return "".join(self.out)


def rbt_marks(text):
    """{pid: [frames...]} in order; frames as compare.rbt_marks makes them, and the marker's
    leaf (assoc or ppid) named as marks.rb's (gcd) so that compare.compare() applies."""
    marks, cur, pid = {}, None, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("MARK "):
            pid, cur = int(line.split()[1]), []
        elif line == "END" and cur is not None:
            marks.setdefault(pid, []).append(cur)
            cur = None
        elif cur is not None and line.startswith("[no Ruby frames"):
            pass  # an empty stack says why in one line: no frames
        elif cur is not None and line:
            cur.extend(compare.rbt_marks(f"MARK 0\n{line}\nEND")[0][0])
    for stacks in marks.values():
        for s in stacks:
            if s and s[0][0] in ("assoc", "ppid"):
                s[0] = ("gcd", None, None)
    return marks


def ruby_marks(paths, pid_map=None):
    """{pid: [caller_locations frames...]} from early.rb's files, in the order given."""
    out = {}
    for path in paths:
        for pid, _tid, frames in json.load(open(path)):
            pid = (pid_map or {}).get(pid, pid)
            out.setdefault(pid, []).append(frames)
    return out


def check(expected, got, empty_first_ok=0):
    """Problems (strings) comparing every pid's marks; the first `empty_first_ok` marks of a
    pid may be empty (a process user space had not found yet), never wrong."""
    bad = []
    for pid, stacks in expected.items():
        mine = got.get(pid, [])
        if len(mine) != len(stacks):
            bad.append(f"pid {pid}: rbt saw {len(mine)} marks, Ruby made {len(stacks)}")
        for n, (w, g) in enumerate(zip(stacks, mine)):
            if not g and n < empty_first_ok:
                continue
            why = compare.compare(w, g)
            if why:
                bad.append(f"pid {pid} mark {n}: {why}\n  rbt:  " +
                           " | ".join(f"{f[0]} {f[1]}:{f[2]}" for f in g[:8]) + "\n  ruby: " +
                           " | ".join(f"{f[0]} {f[1]}:{f[2]}" for f in w[:8]))
    return bad


def run(cmd, **kw):
    subprocess.run(cmd, check=True, timeout=60, **kw)


def libruby():
    """(the file a ruby maps as its libruby, the soname the dynamic loader looks for)."""
    out = subprocess.run(["ruby", "-e", 'puts File.readlines("/proc/self/maps").grep(/libruby/)'
                          '.first.split.last, RbConfig::CONFIG["LIBRUBY_SONAME"]'],
                         capture_output=True, text=True, check=True)
    path, soname = out.stdout.split()
    return path, soname


def host_child(parent, timeout=10):
    """The host pid of `parent`'s first child (unshare --fork's namespace init)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            kids = open(f"/proc/{parent}/task/{parent}/children").read().split()
        except OSError:
            kids = []
        if kids:
            return int(kids[0])
        time.sleep(0.005)
    raise SystemExit("the namespace's first process did not start")


def in_namespace(tmp, args):
    """Starts early.rb in new PID and mount namespaces, libruby bind-mounted at a path that only
    they have (a tmpfs on /mnt); returns (unshare's Popen, the ruby's host pid)."""
    lib, name = libruby()
    script = (f"set -e; mount -t tmpfs rbt-ns /mnt; mkdir /mnt/rubylib; "
              f"touch /mnt/rubylib/{name}; mount --bind {lib} /mnt/rubylib/{name}; "
              f"LD_LIBRARY_PATH=/mnt/rubylib exec ruby {EARLY} {' '.join(args)}")
    p = subprocess.Popen(["unshare", "--fork", "--pid", "--mount-proc", "--mount", "sh", "-c",
                          script])
    pid = host_child(p.pid)
    return p, pid


def p_problems(expected, got, pid):
    """Problems of marks taken with -p of a process already running (its early marks were made
    before the attach): enough marks, of that pid only, each the same as some stack Ruby made."""
    bad, seen, mine = [], expected.get(pid, []), got.get(pid, [])
    if len(mine) < 3:
        bad.append(f"rbt -p saw {len(mine)} marks of pid {pid}")
    if set(got) - {pid}:
        bad.append(f"marks of other pids: {sorted(set(got) - {pid})}")
    for n, g in enumerate(mine):
        if all(compare.compare(w, g) for w in seen):
            bad.append(f"mark {n}: no stack Ruby made is " +
                       " | ".join(f"{f[0]} {f[1]}:{f[2]}" for f in g[:8]))
    return bad


def static_scenario(rbt, name, tmp, out):
    """The static ruby's scenarios: (expected, got, extra, empty_first_ok) as scenario()."""
    ruby = os.environ["RBT_STATIC_RUBY"]
    prog = f"uprobe:{ruby}:rb_ary_assoc " + PRINT  # no libruby: the probe names the executable
    extra = []
    if subprocess.run(["ldd", ruby], capture_output=True, text=True).stdout.count("libruby"):
        extra.append(f"{ruby} links a libruby")
    if name == "static":
        env = dict(os.environ, PATH=os.path.dirname(ruby) + ":" + os.environ["PATH"])
        t = Tracer(rbt, ["-e", prog], env)
        run(["sh", "-c", f"ruby {EARLY} {out}; true"], env=env)
        return ruby_marks([out]), rbt_marks(t.stop()), extra, 0
    if name == "static_c":
        t = Tracer(rbt, ["-c", f"{ruby} {EARLY} {out}", "-e", prog])
        t.proc.wait(timeout=60)  # rbt ends with its child
        return ruby_marks([out]), rbt_marks(t.stop()), extra, 0
    # static_p: marks of a running ruby, each the same as some stack Ruby made
    stop = os.path.join(tmp, "stop")
    p = subprocess.Popen([ruby, EARLY, out, f"loop:{stop}"])
    time.sleep(0.5)
    t = Tracer(rbt, ["-p", str(p.pid), "-e", prog])
    time.sleep(1)
    open(stop, "w").close()
    p.wait(timeout=60)
    got = rbt_marks(t.stop())
    return {}, got, extra + p_problems(ruby_marks([out]), got, p.pid), 0


def scenario(rbt, name, tmp):
    """(expected, got, problems beyond the comparison, empty_first_ok)."""
    out = os.path.join(tmp, "marks.json")
    extra = []
    if name.startswith("static"):
        return static_scenario(rbt, name, tmp, out)
    if name in ("shell", "fork", "chain", "exec"):
        cmd = {
            "shell": ["sh", "-c", f"ruby {EARLY} {out}; true"],
            "fork": ["ruby", EARLY, out, "fork"],
            "chain": ["sh", "-c", f"exec env ruby {EARLY} {out}"],
            "exec": ["ruby", EARLY, out, "exec"],
        }[name]
        t = Tracer(rbt, ["-e", MARK_PROG])
        run(cmd)
        text = t.stop()
        files = [out] + [p for p in (out + ".child", out + ".exec") if os.path.exists(p)]
        expected = ruby_marks(files)
        if name == "fork" and len(expected) != 2:
            extra.append(f"expected marks of 2 processes, got {sorted(expected)}")
        if "0x" in "".join(l for l in text.splitlines() if l.strip().endswith("<cfunc>")):
            extra.append("a C method printed as a raw address")
        return expected, rbt_marks(text), extra, 0
    if name == "namespace":
        go = os.path.join(tmp, "go")
        t = Tracer(rbt, ["-e", MARK_PROG])
        p, pid = in_namespace(tmp, [out, f"wait:{go}"])
        maps, deadline = "", time.time() + 10
        while "libruby" not in maps and time.time() < deadline:  # sh has exec'd ruby
            maps = open(f"/proc/{pid}/maps").read()
            time.sleep(0.01)
        open(go, "w").close()
        p.wait(timeout=60)
        text = t.stop()
        if "/mnt/rubylib/" not in maps:
            extra.append("the namespace's ruby did not map libruby from /mnt/rubylib")
        expected = ruby_marks([out], {1: pid})
        got = rbt_marks(text)
        if 1 in got:
            extra.append("marks printed under the namespace's pid 1, not the host's")
        return expected, got, extra, 0
    if name == "namespace_p":
        stop = os.path.join(tmp, "stop")
        p, pid = in_namespace(tmp, [out, f"loop:{stop}"])
        time.sleep(0.5)
        t = Tracer(rbt, ["-p", str(pid), "-e", MARK_PROG])
        time.sleep(1)
        open(stop, "w").close()
        p.wait(timeout=60)
        got = rbt_marks(t.stop())
        return {}, got, extra + p_problems(ruby_marks([out], {1: pid}), got, pid), 0
    if name == "new_binary":
        lib, soname = libruby()
        libdir = os.path.join(tmp, "lib")
        out2 = os.path.join(tmp, "second.json")
        env = dict(os.environ, RBT_MARK="ppid", LD_LIBRARY_PATH=libdir)
        t = Tracer(rbt, ["-e", PPID_PROG])
        os.mkdir(libdir)
        shutil.copy(lib, os.path.join(libdir, soname))  # a file no process maps, in no cache, made after the attach
        run(["ruby", EARLY, out, "late"], env=env)
        run(["ruby", EARLY, out2], env=env)
        got = rbt_marks(t.stop())
        first, second = ruby_marks([out]), ruby_marks([out2])
        # The first process: marks before user space found it may be empty (never wrong); the
        # ones after `late` must be right.
        (pid1, stacks1), = first.items()
        empty = sum(1 for g in got.get(pid1, []) if not g)
        print(f"first process of the new file: {empty} of {len(stacks1)} marks empty")
        late = len(stacks1) - 2
        return {**first, **second}, got, extra, late
    raise SystemExit(f"unknown scenario {name}")


def main():
    rbt, name = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        expected, got, extra, empty_ok = scenario(rbt, name, tmp)
    bad = extra + check(expected, got, empty_ok)
    for b in bad:
        print(b)
    total = sum(len(s) for s in expected.values()) or len(next(iter(got.values()), []))
    if bad:
        print(f"rstack everywhere: {name}: {len(bad)} problems")
        return 1
    print(f"rstack everywhere: {name}: {total} marks match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
