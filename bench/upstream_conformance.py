#!/usr/bin/env python3
"""Run bpftrace's own runtime test files against rbt and report the pass rate (issue 14).

The test files (tests/runtime/*) and the programs they trace (tests/testprogs, tests/testlibs)
are read from a git directory of bpftrace's repository at run time (default: the local mirror)
into a temporary directory; nothing of bpftrace's is copied into this repository. Every case is
classified as applicable on this machine or not (with the reason), each applicable case is run
once, one at a time, with {{BPFTRACE}} replaced by rbt, and the failures are grouped by a cause
inferred from rbt's output. See docs/bpftrace-compat.md.

    sudo bench/upstream_conformance.py [--rbt build/rbt] [--filter REGEX] [--cases FILE] [--json] [--list]
"""

import argparse
import collections
import fnmatch
import json
import os
import platform
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MIRROR = "/work/.mirror/bpftrace+bpftrace/repo"
DEFAULT_TIMEOUT = 5     # seconds after attach, when a case gives no TIMEOUT
ATTACH_TIMEOUT = 10     # seconds from spawn until rbt says it is attached
AFTER_SHELL = "/usr/bin/sh" if os.path.exists("/usr/bin/sh") else "/bin/sh"
MARKER = "__rbt_attached__"
# bpftrace's attach notice, printed by rbt on stdout too (before BEGIN's output) when the
# variable of that name is set, as some cases drop it with `| tail -n +2`.
BPFTRACE_NOTICE = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"

# --- the case files ------------------------------------------------------------------------

MULTILINE = {"PROG", "EXPECT", "EXPECT_REGEX"}


class Case:
    def __init__(self, suite):
        self.suite = suite
        self.name = ""
        self.run = ""
        self.prog = ""
        self.expects = []        # (kind, text): text, text_none, regex, regex_none, file, json
        self.timeout = None
        self.befores = []
        self.after = ""
        self.setup = ""
        self.cleanup = ""
        self.min_kernel = ""
        self.max_kernel = ""
        self.requires = []
        self.env = {}
        self.arch = []
        self.features = []       # "name" or "!name"
        self.will_fail = False
        self.new_pidns = False
        self.skip_if_env = None
        self.return_code = None
        self.localize_ts = None

    @property
    def id(self):
        return f"{self.suite}.{self.name}"

    @property
    def exact(self):
        return any(k in ("file", "json") for k, _ in self.expects)


STRING_FIELDS = {"NAME": "name", "RUN": "run", "PROG": "prog", "AFTER": "after",
                 "SETUP": "setup", "CLEANUP": "cleanup", "MIN_KERNEL": "min_kernel",
                 "MAX_KERNEL": "max_kernel"}
LIST_FIELDS = {"BEFORE": "befores", "REQUIRES": "requires"}
INT_FIELDS = {"TIMEOUT": "timeout", "RETURN_CODE": "return_code",
              "LOCALIZE_TIMESTAMPS": "localize_ts"}
EXPECT_KINDS = {"EXPECT": "text", "EXPECT_NONE": "text_none", "EXPECT_REGEX": "regex",
                "EXPECT_REGEX_NONE": "regex_none", "EXPECT_FILE": "file", "EXPECT_JSON": "json"}


def parse_directive(case, key, value):
    if key in STRING_FIELDS:
        setattr(case, STRING_FIELDS[key], value)
    elif key in LIST_FIELDS:
        getattr(case, LIST_FIELDS[key]).append(value)
    elif key in INT_FIELDS:
        setattr(case, INT_FIELDS[key], int(value))
    elif key in EXPECT_KINDS:
        case.expects.append([EXPECT_KINDS[key], value])
    elif key == "ENV":
        for word in value.split():
            k, _, v = word.partition("=")
            case.env[k] = v
    elif key == "ARCH":
        case.arch = [a.strip() for a in value.split("|") if a.strip()]
    elif key == "REQUIRES_FEATURE":
        case.features += value.split()
    elif key == "WILL_FAIL":
        case.will_fail = True
    elif key == "NEW_PIDNS":
        case.new_pidns = True
    elif key == "SKIP_IF_ENV_HAS":
        k, _, v = value.partition("=")
        case.skip_if_env = (k, v)

KNOWN = set(STRING_FIELDS) | set(LIST_FIELDS) | set(INT_FIELDS) | set(EXPECT_KINDS) | {
    "ENV", "ARCH", "REQUIRES_FEATURE", "WILL_FAIL", "NEW_PIDNS", "SKIP_IF_ENV_HAS"}


def parse_suite(path):
    """A file holds cases separated by blank lines; '#' lines are comments; a line indented by
    at least the width of the previous directive's name plus one continues PROG/EXPECT/
    EXPECT_REGEX."""
    suite = os.path.basename(path)
    cases, errors = [], []
    block = []

    def flush():
        if not block:
            return
        case, prev = Case(suite), None
        try:
            for line in block:
                width = len(prev) + 1 if prev else 0
                if prev in MULTILINE and line[:width].isspace() and len(line) > width:
                    more = line[width:]
                    if prev == "PROG":
                        case.prog += "\n" + more
                    else:
                        case.expects[-1][1] += "\n" + more
                    continue
                key, _, value = line.strip().partition(" ")
                if key not in KNOWN:
                    raise ValueError(f"unknown directive {key}")
                parse_directive(case, key, value.strip() if key != "PROG" else value.lstrip())
                prev = key
            if not case.name or bool(case.run) == bool(case.prog):
                raise ValueError("needs NAME and one of RUN/PROG")
            cases.append(case)
        except ValueError as e:
            errors.append(f"{suite}: {e}: {block[0].strip()}")
        block.clear()

    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                flush()
            else:
                block.append(line)
    flush()
    return cases, errors


# --- what a case needs ---------------------------------------------------------------------

# REQUIRES_FEATURE names bpftrace derives from `bpftrace --info`. rbt has no --info, so they are
# decided here for this kernel (Linux 6.18, BTF, no kprobes, no fentry trampolines) and for what
# issue 14 leaves out (DWARF). Features not listed are treated as absent.
FEATURES = {
    "btf": True, "loop": True, "probe_read_kernel": True, "signal": True, "iter": True,
    "lookup_percpu_elem": True, "uprobe_multi": True, "get_tai_ns": True, "jiffies64": True,
    "get_func_ip": True,          # the helper works in uprobes on this kernel
    "libpath_resolv": True,       # library names resolved like the dynamic loader: rbt does
    "blazesym": True,             # a bpftrace build option for symbolization, not a kernel one
    "dwarf": False, "dwunwind": False,          # left out by issue 14
    "fentry": False, "dpath": False,   # need fentry/fexit trampolines
    "skboutput": True,            # bpf_skb_output in a tp_btf program loads here (s25-values)
    "kprobe_multi": False, "kprobe_session": False,        # no kprobes
    "aot": False,
}

LONG_KINDS = {"kprobe": "kprobe", "kretprobe": "kprobe", "kfunc": "fentry", "kretfunc": "fentry",
              "fentry": "fentry", "fexit": "fentry", "watchpoint": "watchpoint",
              "asyncwatchpoint": "watchpoint", "hardware": "hardware PMU"}
SHORT_KINDS = {"k": "kprobe", "kr": "kprobe", "f": "fentry", "fr": "fentry", "w": "watchpoint",
               "aw": "watchpoint", "h": "hardware PMU"}
RE_LONG = re.compile(r"(?<![\w$@.])(" + "|".join(LONG_KINDS) + r"):(?=[\w*./{\[\s$-]|$)")
RE_SHORT = re.compile(r"(?:^|(?<=[\s,}';]))(" + "|".join(SHORT_KINDS) + r"):(?=[A-Za-z_*./\[$])",
                      re.M)
RE_LISTED = re.compile(r"\b(" + "|".join(LONG_KINDS) + r")(?=[:*]|s\b)")
RE_SELF_ENDING = re.compile(r"\bexit\s*\(")


def strip_strings(text):
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def program_text(case, workdir):
    """The bpftrace program a case runs: PROG, or the -e argument / script file of RUN."""
    if case.prog:
        return case.prog
    parts = []
    try:
        words = shlex.split(case.run)
    except ValueError:
        return case.run
    for i, w in enumerate(words):
        if w == "-e" and i + 1 < len(words):
            parts.append(words[i + 1])
        elif re.search(r"\.(bt|rbt)$", w) and os.path.isfile(os.path.join(workdir, w)):
            with open(os.path.join(workdir, w), errors="replace") as f:
                parts.append(f.read())
    return "\n".join(parts) if parts else ""


def needed_kinds(case, workdir):
    text = strip_strings(program_text(case, workdir))
    found = [LONG_KINDS[m.group(1)] for m in RE_LONG.finditer(text)]
    found += [SHORT_KINDS[m.group(1)] for m in RE_SHORT.finditer(text)]
    if case.run:   # -l 'kprobe:*', --dry-run ... outside the program
        found += [LONG_KINDS[m.group(1)] for m in RE_LONG.finditer(case.run)]
        found += [SHORT_KINDS[m.group(1)] for m in re.finditer(
            r"(?<=[\s'])(" + "|".join(SHORT_KINDS) + r"):(?=[\w*./$])", case.run)]
    if case.run:   # `-l | grep kprobes`, `-l 'kprobe*'`, and cases expecting such listings
        texts = [case.run] + [t for k, t in case.expects if k in ("text", "regex")]
        found += [LONG_KINDS[m.group(1)] for t in texts for m in RE_LISTED.finditer(t)]
    for b in case.befores + [case.after]:
        if "watchpoint" in b:
            found.append("watchpoint")
    return sorted(set(found))


def referenced_programs(case, workdir=None):
    """Test programs and libraries a case names, in its commands or in the script file its RUN
    line runs (runtime/scripts/usdt_multi_modules.bt)."""
    text = " ".join([case.run, case.prog, case.after, case.setup] + case.befores + case.requires)
    if workdir and case.run:
        text += " " + program_text(case, workdir)
    progs = set(re.findall(r"testprogs/([A-Za-z0-9_.\-/]+)(?![A-Za-z0-9_.\-/]*\*)", text))
    libs = set(re.findall(r"testlibs/([A-Za-z0-9_.\-]+)", text))
    out = set()
    for p in progs:
        p = p.rstrip(".")
        if "*" in p or p.endswith("/"):
            continue
        out.add("testprogs/" + p)
    out |= {"testlibs/" + l for l in libs}
    return sorted(out)


def wildcard_programs(case, workdir):
    """Test programs a wildcard in a case names (`usdt:./testprogs/usdt_test*::*`): each one's
    plain and -pie build, as bpftrace's CMake builds every test program both ways."""
    text = " ".join([case.run, case.prog, case.after] + case.befores)
    out = set()
    for pat in re.findall(r"testprogs/([A-Za-z0-9_.\-]*\*[A-Za-z0-9_.\-*]*)", text):
        for src in os.listdir(os.path.join(workdir, "testprogs")):
            base, ext = os.path.splitext(src)
            if ext != ".c":
                continue
            out |= {"testprogs/" + n for n in (base, base + "-pie") if fnmatch.fnmatch(n, pat)}
    return sorted(out)


def expects_to_be_stopped(case, workdir):
    """True when bpftrace itself would not end this case, so that its runner stops it at its
    TIMEOUT (and passes it when the output matched): no exit() that anything makes run, no -c
    command that ends, not a listing, and a probe other than begin/end; or a case that only
    checks that its probes attach; or the runner's own self-test, which runs no tracer."""
    run = case.run
    if run and "{{BPFTRACE}}" not in run:
        return True      # tests the runner itself (selftest): nothing of rbt's runs
    text = program_text(case, workdir)
    if re.search(r"(^|\s)(-l|--dry-run|-d|--help|-h|-V|--version|--info)(\s|$|=)", run):
        return False
    if checks_attaching_only(case):
        return True
    if RE_SELF_ENDING.search(text) and not untriggered_test_programs(case, text):
        return False
    command = cmd_argument(run)
    if command is not None and not never_ends(command, workdir):
        return False
    if case.run and not text:
        return False     # not a tracing program (e.g. a shell command around rbt)
    body = strip_strings(text)
    heads = re.findall(r"(?:^|[}\s])([A-Za-z_][\w-]*)(?::|\s*[{/,])", body)
    probes = {h for h in heads if h in PROBE_NAMES}
    return bool(probes - {"BEGIN", "END", "begin", "end"})


RE_ATTACHED = re.compile(r"Attached \d+ probes?")


def checks_attaching_only(case):
    """Every expectation is `Attached N probes` and the case runs nothing that would make a
    probe fire (no BEFORE, AFTER or -c): what ends it is the runner's TIMEOUT, in bpftrace too
    (a tracepoint such as sys_enter_nanosleep may not fire at all on an idle machine)."""
    if case.befores or case.after or cmd_argument(case.run) is not None:
        return False
    return bool(case.expects) and all(k == "text" and RE_ATTACHED.fullmatch(t.strip())
                                      for k, t in case.expects)


RE_TESTPROG_PROBE = re.compile(r"^(?:uprobe|uretprobe|usdt|u|ur|U):(?:\./)?testprogs/([\w.-]+)")


def untriggered_test_programs(case, text):
    """True when every probe of the program is a uprobe/USDT probe in a test program that the
    case never runs (no BEFORE, AFTER or -c names it): its exit() cannot run, in bpftrace
    either."""
    heads = re.findall(r"(?:^|[}\s,])([A-Za-z]+:[^\s{,]+)", strip_strings(text))
    heads = [h for h in heads if h.split(":")[0] in PROBE_NAMES and h.split(":")[0] != "config"]
    if not heads or re.search(r"(?:^|[}\s,])(BEGIN|END|begin|end)\b", strip_strings(text)):
        return False
    runs = " ".join(case.befores + [case.after, cmd_argument(case.run) or ""])
    for h in heads:
        m = RE_TESTPROG_PROBE.match(h)
        if not m or m.group(1) in runs:
            return False
    return True


def cmd_argument(run):
    """The -c/--cmd command of a RUN line, or None."""
    try:
        words = shlex.split(run)
    except ValueError:
        return None
    for i, w in enumerate(words):
        if w in ("-c", "--cmd") and i + 1 < len(words):
            return words[i + 1]
        if w.startswith("--cmd="):
            return w[len("--cmd="):]
    return None


def never_ends(command, workdir):
    """True when the -c command is a test program whose main() loops forever (uprobe_test):
    bpftrace then runs until its runner stops it."""
    words = command.split()
    m = re.fullmatch(r"(?:\./)?testprogs/([\w.-]+?)(?:-pie)?", words[0]) if words else None
    if not m:
        return False
    try:
        with open(os.path.join(workdir, "testprogs", m.group(1) + ".c"), errors="replace") as f:
            src = f.read()
    except OSError:
        return False
    main = src[src.find("main("):] if "main(" in src else ""
    return bool(re.search(r"while\s*\(\s*(1|true)\s*\)|for\s*\(\s*;\s*;\s*\)", main))


PROBE_NAMES = {"BEGIN", "END", "begin", "end", "tracepoint", "t", "rawtracepoint", "rt", "uprobe",
               "u", "uretprobe", "ur", "usdt", "U", "profile", "p", "interval", "i", "software",
               "s", "hardware", "h", "kprobe", "k", "kretprobe", "kr", "fentry", "f", "fexit",
               "fr", "kfunc", "kretfunc", "iter", "it", "watchpoint", "w", "asyncwatchpoint",
               "aw", "self", "signal", "test", "bench"}


def kernel_version():
    return tuple(int(x) for x in re.findall(r"\d+", os.uname().release)[:3])


def version_tuple(s):
    return tuple(int(x) for x in re.findall(r"\d+", s)[:3])


# Stacks with source lines (`func+12@file.c:34`) or inlined frames (`[inlined] f`,
# `f (inlined)`) come from DWARF, which issue 14 leaves out as it leaves out the cases that
# declare REQUIRES_FEATURE dwarf; some such cases do not declare it.
RE_DWARF_FRAME = re.compile(r"\.c:(\[0-9\]|[0-9])|[\[(]inlined\\?[\])]")


def needs_dwarf(case):
    return any(RE_DWARF_FRAME.search(t) for k, t in case.expects if k in ("text", "regex"))


def classify(case, workdir, built):
    """None when applicable here, else the reason."""
    host = {platform.machine().lower(), "le" if sys.byteorder == "little" else "be"}
    if case.arch:
        pos = {a for a in case.arch if not a.startswith("!")}
        neg = {a[1:] for a in case.arch if a.startswith("!")}
        if (pos and not (host & pos)) or (host & neg):
            return "arch: " + "|".join(case.arch)
    if case.skip_if_env and os.environ.get(case.skip_if_env[0]) == case.skip_if_env[1]:
        return "environment: " + "=".join(case.skip_if_env)
    kv = kernel_version()
    if case.min_kernel and version_tuple(case.min_kernel) > kv:
        return "kernel older than " + case.min_kernel
    if case.max_kernel and version_tuple(case.max_kernel) < kv:
        return "kernel newer than " + case.max_kernel
    kinds = needed_kinds(case, workdir)
    if kinds:
        return "probe: " + "/".join(kinds)
    for f in case.features:
        name, want = (f[1:], False) if f.startswith("!") else (f, True)
        if FEATURES.get(name, False) != want:
            return "feature: " + ("" if want else "!") + name
    if needs_dwarf(case):
        return "feature: dwarf (source lines or inlined frames in its expected stacks)"
    for p in referenced_programs(case, workdir):
        if p not in built:
            return "program not buildable here: " + p
    for req in case.requires:
        r = subprocess.run(req, shell=True, cwd=workdir, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return "requirement unmet: " + req
    return None


# --- building the traced programs ----------------------------------------------------------

CFLAGS = ["-g", "-O0", "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer"]


class Builder:
    """Builds tests/testprogs and tests/testlibs on demand, as bpftrace's CMake files do (gcc,
    -O0 -g with frame pointers; NAME non-PIE, NAME-pie PIE), into the work directory."""

    def __init__(self, workdir, log):
        self.w = workdir
        self.log = log
        self.done = {}

    def sh(self, argv, **kw):
        r = subprocess.run(argv, cwd=self.w, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=300, **kw)
        if r.returncode != 0:
            self.log(f"build failed: {' '.join(argv)}\n{r.stdout[-2000:]}")
        return r.returncode == 0

    def path(self, rel):
        return os.path.join(self.w, rel)

    def build(self, rel):
        if rel not in self.done:
            try:
                self.done[rel] = self._build(rel)
            except (OSError, subprocess.TimeoutExpired) as e:
                self.log(f"build of {rel} failed: {e}")
                self.done[rel] = False
        return self.done[rel]

    def _lib(self, name):       # testlibs/libNAME.so
        src = self.path(f"testlibs/{name}.c")
        out = f"testlibs/lib{name}.so"
        if not os.path.exists(src):
            return False
        ok = self.sh(["gcc", "-shared", "-fPIC", "-g", "-O0", "-Iinclude", "-o", out, src])
        if ok:
            os.chmod(self.path(out), 0o644)   # bpftrace traces non-executable libraries
        return ok

    def _build(self, rel):
        if os.path.exists(self.path(rel)) and rel.startswith("testprogs/") and \
                not os.path.exists(self.path(rel + ".c")):
            return True
        d, name = rel.split("/", 1)
        if d == "testlibs":
            m = re.fullmatch(r"lib(\w+)\.so", name)
            return bool(m) and self._lib(m.group(1))
        if name == "false.bin":
            return (self.sh(["gcc", "-c", "testprogs/false.c", "-o", "testprogs/false.o"]) and
                    self.sh(["llvm-objcopy-19", "-S", "--only-section=.text",
                             "--keep-symbol=main", "-O", "binary", "testprogs/false.o",
                             "testprogs/false.bin"]))
        if name == "archive.zip":
            return self.build("testprogs/true") and self.sh(
                ["zip", "-0", "-j", "testprogs/archive.zip", "testprogs/true"])
        if name in ("uprobe_test-stripped", "uprobe_separate_debug-stripped"):
            base = name[:-len("-stripped")]
            if not self.build("testprogs/" + base):
                return False
            os.makedirs(self.path("testprogs/external_debug"), exist_ok=True)
            os.makedirs(self.path("testprogs/.debug"), exist_ok=True)
            dbg = ("testprogs/external_debug/" if base == "uprobe_test" else "testprogs/.debug/")
            dbg += name + ".debug"
            ok = (self.sh(["objcopy", "--only-keep-debug", "testprogs/" + base, dbg]) and
                  self.sh(["objcopy", "--strip-debug", "testprogs/" + base, "testprogs/" + name]))
            if ok and base != "uprobe_test":
                ok = self.sh(["objcopy", "--add-gnu-debuglink=" + dbg, "testprogs/" + name])
            return ok
        if name.startswith("external_debug/") and name.endswith("/uprobe_test-split"):
            kind = name.split("/")[1]
            out = f"testprogs/external_debug/{kind}"
            os.makedirs(self.path(out), exist_ok=True)
            ok = subprocess.run(["gcc", "-g", "-O0", "-gsplit-dwarf", "../../uprobe_test.c",
                                 "-o", "uprobe_test-split"], cwd=self.path(out),
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL).returncode == 0
            if ok and kind == "dwp":
                ok = subprocess.run(["llvm-dwp-19", "-e", "uprobe_test-split", "-o",
                                     "uprobe_test-split.dwp"], cwd=self.path(out),
                                    stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL).returncode == 0
                for f in os.listdir(self.path(out)):
                    if f.endswith(".dwo"):
                        os.unlink(os.path.join(self.path(out), f))
            return ok
        if name in ("hello_go", "hello_rust"):
            src = self.path(f"testprogs/{name}.{'go' if name == 'hello_go' else 'rs'}")
            tool = shutil.which("go" if name == "hello_go" else "rustc")
            if not tool or not os.path.exists(src):
                return False
            if name == "hello_go":
                env = dict(os.environ, GOCACHE=self.path(".gocache"), GOFLAGS="-p=1")
                return self.sh([tool, "build", "-o", "testprogs/hello_go", src], env=env)
            return self.sh([tool, "-C", "symbol_mangling_version=v0", "-C", "codegen-units=1",
                            "-o", "testprogs/hello_rust", src])
        pie = name.endswith("-pie")
        base = name[:-4] if pie else name
        src = None
        for ext in (".c", ".cpp"):
            if os.path.exists(self.path(f"testprogs/{base}{ext}")):
                src = f"testprogs/{base}{ext}"
        if not src:
            return False
        cc = "g++" if src.endswith(".cpp") else "gcc"
        flags = list(CFLAGS)
        if base == "uprobe_nofp":
            flags = ["-g", "-O1", "-fomit-frame-pointer", "-fno-optimize-sibling-calls"]
        flags += ["-fpie", "-pie"] if pie else ["-no-pie"]
        extra = []
        if base == "usdt_lib":
            if not self.build("testlibs/libusdt_tp.so"):
                return False
            flags += ["-fPIC", "-Itestlibs"]
            extra = ["-Ltestlibs", "-lusdt_tp", "-Wl,-rpath," + self.path("testlibs")]
        return self.sh([cc] + flags + ["-Iinclude", "-o", "testprogs/" + name, src] + extra +
                       ["-lpthread"])


def extract(gitdir, rev, workdir):
    """tests/runtime, tests/testprogs, tests/testlibs, tests/include of REV into WORKDIR (which
    then looks like bpftrace's build/tests directory: runtime/, testprogs/, testlibs/)."""
    archive = subprocess.run(["git", "--git-dir", gitdir, "archive", rev, "tests/runtime",
                              "tests/testprogs", "tests/testlibs", "tests/include"],
                             stdout=subprocess.PIPE, check=True).stdout
    subprocess.run(["tar", "x", "--strip-components=1", "-C", workdir], input=archive,
                   check=True)
    commit = subprocess.run(["git", "--git-dir", gitdir, "rev-parse", rev],
                            stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    return commit


# --- running one case ----------------------------------------------------------------------

def kill_group(p, sig=signal.SIGKILL):
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def comm_of(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def children_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def wait_until(pred, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    return None


class Result:
    def __init__(self):
        self.status = "fail"     # pass | pass_stopped | fail
        self.output = ""
        self.rc = None
        self.killed = False
        self.attached = False
        self.failed_expects = []
        self.command = ""
        self.elapsed = 0.0
        self.note = ""


def check_expect(kind, text, output, workdir, case):
    def line_re(t):
        return re.compile(r"^\s*" + re.escape(t) + r"\s*$", re.M)
    try:
        if kind == "text":
            return bool(line_re(text).search(output))
        if kind == "text_none":
            return not line_re(text).search(output)
        if kind == "regex":
            return bool(re.search(text, output, re.M))
        if kind == "regex_none":
            return not re.search(text, output, re.M)
        with open(os.path.join(workdir, text)) as f:
            want = f.read()
        if kind == "file":
            if case.localize_ts is not None:
                want = time.strftime(want, time.localtime(case.localize_ts))
            return output.strip() == want.strip()
        got_lines = output.strip().splitlines()
        if text.endswith(".ndjson"):
            want_lines = want.strip().splitlines()
            return len(want_lines) == len(got_lines) and all(
                json.loads(a) == json.loads(b) for a, b in zip(want_lines, got_lines))
        return len(got_lines) == 1 and json.loads(got_lines[0]) == json.loads(want)
    except (ValueError, OSError, re.error):
        return False


RE_INTERVAL_EXIT = re.compile(
    r"\b(?:interval|i):(?:(s|ms|us):(\d+)|(\d+)(s|ms|us))\s*(?:/[^/]*/\s*)?\{[^{}]*\bexit\s*\(")
UNIT_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def own_exit_due(case, workdir):
    """Seconds after attaching at which the case's own `interval` probe calls exit() (0 if it
    has none). `i:5s { exit(); }` under a TIMEOUT of 5 is due at the very moment the runner
    stops it: bpftrace's runner then passes it as a stopped case whose output matched; this
    one gives such a case a second more, so that it can show it exits by itself."""
    due = 0.0
    for m in RE_INTERVAL_EXIT.finditer(strip_strings(program_text(case, workdir))):
        unit, n = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        due = max(due, int(n) * UNIT_SECONDS[unit])
    return due


def run_case(case, rbt, workdir):
    res = Result()
    start = time.monotonic()
    timeout = case.timeout if case.timeout is not None else DEFAULT_TIMEOUT
    befores, after, proc, ns_holder = [], None, None, None
    nsenter = []
    try:
        if case.setup:
            r = subprocess.run(case.setup, shell=True, cwd=workdir, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                res.note = "SETUP failed: " + r.stdout.strip()[-300:]
                return res
        if case.befores and case.new_pidns:
            ns_holder = subprocess.Popen(
                ["unshare", "--fork", "--pid", "--mount-proc", "-r", "--kill-child", "--"] +
                case.befores[0].split(), cwd=workdir, start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            child = wait_until(lambda: children_of(ns_holder.pid), timeout)
            if not child:
                res.note = "could not start the BEFORE program in a new PID namespace"
                return res
            nsenter = ["nsenter", "-p", "-m", "-t", str(child[0])]
            rest = case.befores[1:]
        else:
            rest = case.befores
        for b in rest:
            argv = b.split()
            if nsenter:
                argv = nsenter + [os.path.join(workdir, a) if a.startswith("./") else a
                                  for a in argv]
            p = subprocess.Popen(argv, cwd=workdir, start_new_session=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            befores.append(p)
            want = os.path.basename(b.split()[-1])[:15]

            def started(p=p, want=want):
                if nsenter:
                    return any(comm_of(c) == want for c in children_of(p.pid)) or \
                        comm_of(p.pid) == want
                return comm_of(p.pid) == want or \
                    any(comm_of(c) == want for c in children_of(p.pid))
            if not wait_until(started, timeout):
                res.note = f"BEFORE program {b} did not start"
                return res

        prefix = " ".join(nsenter) + " " if nsenter else ""
        if case.run:
            cmd = prefix + case.run.replace("{{BPFTRACE}}", shlex.quote(rbt))
            cmd = cmd.replace("pidof bpftrace", "pidof " + os.path.basename(rbt))
        else:
            json_mode = "-q -f json " if case.expects and case.expects[0][0] == "json" else ""
            cmd = f"{prefix}{shlex.quote(rbt)} {json_mode}-e {shlex.quote(case.prog)}"
        if "{{BEFORE_PID}}" in cmd:
            name = os.path.basename(case.befores[0].split()[-1])
            pids = subprocess.run(["pidof", name], stdout=subprocess.PIPE,
                                  text=True).stdout.split()
            pid = pids[0] if pids else (str(befores[0].pid) if befores else "0")
            cmd = cmd.replace("{{BEFORE_PID}}", pid)
        res.command = cmd

        env = {"test": case.name, "PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
               "__BPFTRACE_NOTIFY_PROBES_ATTACHED": "1", "RBT_ATTACH_MARKER": "1"}
        env.update(case.env)
        proc = subprocess.Popen(cmd, shell=True, cwd=workdir, env=env, start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        lines = queue.Queue()
        glue = []  # a line cut by the marker: the next line continues it

        def split_marker(line, out):
            """rbt's marker goes to stderr and joins stdout's unterminated text on one line
            ("BEGIN__rbt_attached__"): keep the text, continued by the next line, and return
            the marker alone."""
            if glue:
                glue.clear()
                if out:
                    out[-1] += line
                    return ""
            text = line.rstrip("\n")
            if text != MARKER and text.endswith(MARKER):
                out.append(text[:-len(MARKER)])
                glue.append(True)
                return MARKER + "\n"
            return line

        def reader():
            for raw in iter(proc.stdout.readline, b""):
                if raw.rstrip(b"\n") == BPFTRACE_NOTICE.encode():
                    continue     # rbt prints bpftrace's notice too; the runner's cue is rbt's
                lines.put(raw.decode("utf-8", "backslashreplace"))
            lines.put(None)
        t = threading.Thread(target=reader, daemon=True)
        t.start()

        out = []
        deadline = time.monotonic() + ATTACH_TIMEOUT
        eof = False
        while not eof:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                line = lines.get(timeout=min(left, 0.2))
            except queue.Empty:
                continue
            if line is None:
                eof = True
                break
            line = split_marker(line, out)
            if line.rstrip("\n") == MARKER and not res.attached:
                res.attached = True
                deadline = time.monotonic() + max(timeout, own_exit_due(case, workdir) + 1)
                if case.exact:
                    # bpftrace's runner drops what came before the attach notice; rbt prints
                    # its notice after BEGIN's output, so drop up to its "Attached" line only.
                    cut = 0
                    for i, l in enumerate(out):
                        if re.match(r"^(Attach(ed|ing) \d+ probes?|\{\"type\": "
                                    r"\"attached_probes\")", l):
                            cut = i + 1
                    out = out[cut:]
                if case.after:
                    # the program's name is rbt's (a deliberate difference). `pidof` would name
                    # every rbt on the machine (AFTER sends them SIGUSR1: it killed other
                    # sessions' tests), so outside a PID namespace only this case's session's.
                    name = os.path.basename(rbt)
                    if nsenter:
                        acmd = " ".join(nsenter) + " " + case.after.replace(
                            "pidof bpftrace", "pidof " + name)
                    else:
                        acmd = case.after.replace(
                            "pidof bpftrace", f"pgrep -s {proc.pid} -x {shlex.quote(name[:15])}")
                    # The shell's own execve is the first a sys_enter_execve probe sees. Cases
                    # that print it cut to max_strlen expect a path of 9 characters or more
                    # (`/.......\.\.` at max_strlen 8), as the shells of bpftrace's CI have
                    # (Nix store paths); Debian's /bin/sh has 7. /usr/bin/sh is the same shell.
                    after = subprocess.Popen(acmd, shell=True, cwd=workdir,
                                             executable=AFTER_SHELL,
                                             start_new_session=True, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL)
                continue
            out.append(line)
        if not eof:
            res.killed = True
            kill_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                kill_group(proc)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            proc.wait()
        t.join(timeout=2)
        while True:
            try:
                line = lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                line = split_marker(line, out)
                if line.rstrip("\n") != MARKER:
                    out.append(line)
        res.output = "".join(out)
        res.rc = proc.returncode
    finally:
        for p in befores + ([after] if after else []) + ([ns_holder] if ns_holder else []):
            kill_group(p)
            try:
                p.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        if proc and proc.poll() is None:
            kill_group(proc)
        if case.cleanup:
            subprocess.run(case.cleanup, shell=True, cwd=workdir, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        res.elapsed = time.monotonic() - start

    if res.note:
        return res
    res.failed_expects = [(k, t) for k, t in case.expects
                          if not check_expect(k, t, res.output, workdir, case)]
    want_rc = case.return_code if case.return_code is not None else 0
    if res.killed:
        if res.failed_expects:
            return res
        res.status = "pass_stopped" if expects_to_be_stopped(case, workdir) else "fail"
        return res
    if case.will_fail and res.rc == 0:
        return res
    if not case.will_fail and res.rc != want_rc:
        return res
    if not res.failed_expects:
        res.status = "pass"
    return res


# --- why a case failed ---------------------------------------------------------------------

RE_ERR = re.compile(r"^(?:(?:stdin|[\w./-]+\.(?:bt|rbt)):\d+:\d+: |rbt: )?error: (.*)$", re.M)


def normalize(msg):
    msg = re.sub(r"'[^']*'", lambda m: m.group(0) if len(m.group(0)) <= 24 else "'...'", msg)
    msg = re.sub(r"\b0x[0-9a-f]+\b", "N", msg)
    msg = re.sub(r"\b\d+\b", "N", msg)
    msg = re.sub(r"/tmp/[\w./-]+", "PATH", msg)
    return msg[:110]


ERROR_GROUPS = {"rejected as expected, but with other words", "parse error (syntax)",
                "unknown builtin/function", "verifier rejection", "attach error",
                "semantic/other error"}


def cause_of(case, res):
    """(group, detail) for a failed case, inferred from rbt's output."""
    if res.note:
        return "harness: " + res.note.split(":")[0], res.note
    out = res.output
    m = RE_ERR.search(out)
    err = m.group(1).strip() if m else ""
    if res.killed and not res.failed_expects:
        return "did not exit by itself (output as expected)", "killed at its TIMEOUT"
    if res.killed:
        if not res.attached:
            return "did not attach within 10 s", out.strip()[-200:]
        return "did not exit by itself (expected output missing)", out.strip()[-200:]
    if case.will_fail:
        if res.rc == 0:
            return "accepted what bpftrace rejects (WILL_FAIL)", out.strip()[-200:]
        return "rejected as expected, but with other words", (
            err or out.strip()[-200:]) + "  | expected: " + \
            "; ".join(t for _, t in res.failed_expects)[:200]
    if err:
        low = err.lower()
        if "option" in low and ("not known" in low or "unrecognized" in low):
            m2 = re.search(r"'(-[^']*)'", err)
            return "unknown command-line option " + (m2.group(1) if m2 else ""), err
        text = program_text(case, ".")
        if re.match(r"\s*(enum|union)\b", text) or " in struct " in err or \
                re.search(r"^\s*(struct|union|enum)\b[^;]*;\s*(union|enum|struct)", text):
            return "C definitions at the top (enum, union, bitfields)", err
        if "syntax error" in low:
            return "parse error (syntax)", err
        if "unknown config key" in low:
            return "unknown config key", err
        if "unknown probe type" in low:
            return "unknown probe type", err
        if re.search(r"unknown (function|builtin|variable|identifier)", low):
            return "unknown builtin/function", err
        if "verifier" in low:
            return "verifier rejection", err
        if low.startswith("attaching") or "attach" in low:
            return "attach error", err
        return "semantic/other error", err
    if re.search(r"(^|\s)(-l|--list|-lv)\b", res.command) and not out.strip():
        return "listing (-l) printed nothing", res.command[-120:]
    if res.rc not in (0, None) and (case.return_code or 0) != res.rc:
        return f"exit code {res.rc} without an error message", out.strip()[-200:]
    if res.rc != (case.return_code or 0):
        return f"exit code {res.rc}, expected {case.return_code}", out.strip()[-200:]
    kinds = sorted({k for k, _ in res.failed_expects})
    return "output differs (" + ",".join(kinds) + ")", \
        "expected " + repr(res.failed_expects[0][1][:120]) + "; got " + repr(out.strip()[-160:])


# --- main ----------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rbt", default=os.path.join(REPO_ROOT, "build", "rbt"))
    ap.add_argument("--bpftrace-repo", default=DEFAULT_MIRROR,
                    help="git directory of bpftrace's repository (default: %(default)s)")
    ap.add_argument("--rev", default="HEAD", help="revision of bpftrace's tests (HEAD)")
    ap.add_argument("--filter", help="regex on SUITE.NAME: run only matching cases")
    ap.add_argument("--cases", metavar="FILE",
                    help="run only the cases named in FILE, one SUITE.NAME a line "
                         "(bench/filters/ keeps helpers' groups)")
    ap.add_argument("--json", action="store_true", help="machine-readable result on stdout")
    ap.add_argument("--list", action="store_true", help="classify only; run nothing")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("-v", "--verbose", action="store_true", help="each case's output")
    args = ap.parse_args()

    rbt = os.path.abspath(args.rbt)
    if not os.access(rbt, os.X_OK):
        sys.exit(f"upstream_conformance: no rbt at {rbt}")
    if not os.path.isdir(args.bpftrace_repo):
        sys.exit(f"upstream_conformance: no bpftrace git directory at {args.bpftrace_repo}")

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    workdir = tempfile.mkdtemp(prefix="rbt-upstream-")
    try:
        commit = extract(args.bpftrace_repo, args.rev, workdir)
        cases, errors = [], []
        rt = os.path.join(workdir, "runtime")
        for fn in sorted(os.listdir(rt)):
            path = os.path.join(rt, fn)
            if fn.startswith(".") or not os.path.isfile(path):
                continue
            c, e = parse_suite(path)
            cases += c
            errors += e
        for e in errors:
            log("parse: " + e)
        if args.filter:
            cases = [c for c in cases if re.search(args.filter, c.id)]
        if args.cases:
            with open(args.cases) as f:
                wanted = {line.strip() for line in f if line.strip()}
            cases = [c for c in cases if c.id in wanted]

        builder = Builder(workdir, log if args.verbose else (lambda m: None))
        built = set()
        for c in cases:
            for p in referenced_programs(c, workdir):
                if builder.build(p):
                    built.add(p)
            for p in wildcard_programs(c, workdir):
                builder.build(p)
        if "testlibs/libsimple.so" not in built:       # some cases use it by library name
            if builder.build("testlibs/libsimple.so"):
                built.add("testlibs/libsimple.so")

        reasons = {}
        for c in cases:
            reasons[c.id] = classify(c, workdir, built)
        applicable = [c for c in cases if reasons[c.id] is None]
        na = collections.Counter(reasons[c.id].split(":")[0] for c in cases if reasons[c.id])
        na_detail = collections.Counter(reasons[c.id] for c in cases if reasons[c.id])

        results = {}
        if not args.list:
            for i, c in enumerate(applicable, 1):
                r = run_case(c, rbt, workdir)
                results[c.id] = r
                mark = {"pass": "ok", "pass_stopped": "ok (stopped at TIMEOUT)"}.get(
                    r.status, "FAIL")
                log(f"[{i}/{len(applicable)}] {c.id}: {mark} ({r.elapsed:.1f} s)")
                if args.verbose and r.status == "fail":
                    log("  $ " + r.command + "\n  " + r.output.strip().replace("\n", "\n  "))

        passed = [c for c in applicable if results.get(c.id) and results[c.id].status != "fail"]
        stopped = [c for c in passed if results[c.id].status == "pass_stopped"]
        failed = [c for c in applicable if results.get(c.id) and results[c.id].status == "fail"]
        groups = collections.defaultdict(list)
        for c in failed:
            g, d = cause_of(c, results[c.id])
            groups[g].append((c.id, d))
        lenient = len(passed) + len(groups.get("did not exit by itself (output as expected)", []))
        n = len(applicable)
        summary = {
            "rbt": rbt, "bpftrace_commit": commit, "kernel": os.uname().release,
            "cases": len(cases), "applicable": n, "passed": len(passed),
            "pass_rate": round(100.0 * len(passed) / n, 1) if n and results else None,
            "passed_stopped_at_timeout": len(stopped),
            "passed_if_stopping_counted": lenient,
            "not_applicable": dict(na.most_common()),
            "not_applicable_detail": dict(na_detail.most_common()),
            "failure_groups": {g: [{"case": cid, "detail": d,
                                    "cause": normalize(d.split("  | ")[0])} for cid, d in v]
                               for g, v in sorted(groups.items(), key=lambda kv: -len(kv[1]))},
            "results": {cid: {"status": r.status, "rc": r.rc, "killed": r.killed,
                              "elapsed": round(r.elapsed, 2)} for cid, r in results.items()},
        }
        if args.list:
            summary["applicable_cases"] = [c.id for c in applicable]
            summary["not_applicable_cases"] = {c.id: reasons[c.id] for c in cases
                                               if reasons[c.id]}
        if args.json:
            json.dump(summary, sys.stdout, indent=1)
            print()
        else:
            print(f"bpftrace tests at {commit[:12]}, kernel {os.uname().release}, rbt {rbt}")
            print(f"cases: {len(cases)}; applicable: {n}; not applicable: {len(cases) - n}")
            for k, v in na.most_common():
                print(f"  {v:4d}  {k}")
            if args.list:
                for c in cases:
                    print(f"{c.id}: {reasons[c.id] or 'applicable'}")
            else:
                rate = 100.0 * len(passed) / n if n else 0.0
                print(f"passed: {len(passed)} of {n} = {rate:.1f}%"
                      f" ({len(stopped)} of them stopped at their TIMEOUT, as bpftrace would be)")
                print(f"counting cases that matched but had to be stopped: {lenient} = "
                      f"{100.0 * lenient / n if n else 0:.1f}%")
                print("failures by cause:")
                for g, v in sorted(groups.items(), key=lambda kv: -len(kv[1])):
                    print(f"  {len(v):4d}  {g}")
                    for cid, d in v[:3 if args.verbose else 1]:
                        print(f"          e.g. {cid}: {d[:200]}")
                    if g in ERROR_GROUPS:
                        sub = collections.Counter(normalize(d.split("  | ")[0]) for _, d in v)
                        for msg, k in sub.most_common(8 if args.verbose else 4):
                            print(f"          {k:3d} x {msg}")
    finally:
        if args.keep:
            print(f"work directory kept: {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
