#!/usr/bin/env python3
"""Runner for rbt's runtime tests, written in a subset of bpftrace's runtime-test format.

Usage:
    python3 tests/runtime/runner.py --rbt build/rbt [--filter REGEX] [-v] FILE.test [...]

A test file is a list of cases separated by one or more empty lines. Every line of a case is
`KEYWORD rest-of-line`; lines whose first non-blank character is `#` are comments.

    NAME x             case name (required, unique within a file)
    PROG text          run `rbt -e text` (one argv element, no shell)
    RUN cmd            run `bash -c cmd`, `{{RBT}}` replaced by the rbt binary
                       (exactly one of PROG / RUN)
    EXPECT text        some output line, stripped, equals text (stripped)
    EXPECT_NONE text   no output line equals text
    EXPECT_REGEX re    some stripped output line fully matches re
    EXPECT_REGEX_NONE re   no stripped output line fully matches re
    EXPECT_JSON file   file (relative to the .test file) holds JSON lines; each object must
                       equal some output line parsed as JSON. Text starting with `{` or `[`
                       is taken as one inline JSON value instead.
    TIMEOUT s          seconds before SIGINT, then SIGKILL 2 s later (default 5); a failure
                       (multiplied by $RBT_TEST_TIMEOUT_SCALE when set: sanitizer builds)
    BEFORE cmd         started (own process group) before rbt, killed at the end; repeatable
    AFTER cmd          started once rbt reports its probes attached; when it finishes rbt
                       gets SIGINT
    SETUP cmd / CLEANUP cmd   run before / after the case (CLEANUP always); must succeed
    ENV K=V            added to rbt's environment; repeatable
    REQUIRES cmd       if cmd fails the case is skipped; repeatable
    WILL_FAIL          rbt must exit non-zero
    RETURN_CODE n      rbt must exit with status n (default 0)

The cases run with rbt's object cache on, in a directory of their own (RBT_CACHE_DIR, removed at
the end), so a script that two cases share is compiled once and reused, as users get it.

Expectations apply to stdout and stderr lines together. The runner sets RBT_ATTACH_MARKER=1;
rbt then prints the line `__rbt_attached__` on stderr once every probe is attached. That line
is removed from the output before the expectations are checked.

Without root every case is reported as skipped and the runner exits 0. Exit status: 0 when
nothing failed, 1 when a case failed, 2 for usage errors and malformed test files.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ATTACH_MARKER = "__rbt_attached__"
ATTACH_ENV = "RBT_ATTACH_MARKER"
DEFAULT_TIMEOUT = 5.0
KILL_GRACE = 2.0
BEFORE_SETTLE = 0.2  # seconds given to BEFORE commands to start up

SINGLE_KEYS = {"NAME", "PROG", "RUN", "TIMEOUT", "WILL_FAIL", "RETURN_CODE"}
MULTI_KEYS = {
    "EXPECT", "EXPECT_NONE", "EXPECT_REGEX", "EXPECT_REGEX_NONE", "EXPECT_JSON",
    "BEFORE", "AFTER", "SETUP", "CLEANUP", "ENV", "REQUIRES",
}
NO_VALUE_KEYS = {"WILL_FAIL"}
ALL_KEYS = SINGLE_KEYS | MULTI_KEYS


class TestFileError(Exception):
    """A malformed test file; the message names the file and line."""


class Case:
    def __init__(self, path, line):
        self.path = path
        self.line = line  # first line of the block, for error messages
        self.fields = {}  # key -> str (single) or list of (str, line) (multi)

    def get(self, key, default=None):
        return self.fields.get(key, default)

    def many(self, key):
        return [v for v, _ in self.fields.get(key, [])]

    @property
    def name(self):
        return self.fields["NAME"]

    @property
    def label(self):
        return f"{os.path.basename(self.path)}:{self.name}"


def parse_file(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise TestFileError(f"{path}: cannot read: {e.strerror}")

    blocks = []
    current = []
    for lineno, raw in enumerate(lines, 1):
        if raw.strip() == "":
            if current:
                blocks.append(current)
                current = []
            continue
        if raw.lstrip().startswith("#"):
            continue
        current.append((lineno, raw))
    if current:
        blocks.append(current)

    cases = []
    names = {}
    for block in blocks:
        case = Case(path, block[0][0])
        for lineno, raw in block:
            where = f"{path}:{lineno}"
            if raw[0].isspace():
                raise TestFileError(f"{where}: line starts with whitespace (keywords start "
                                    f"in column 1): {raw!r}")
            key, _, value = raw.partition(" ")
            value = value.strip()
            if key not in ALL_KEYS:
                raise TestFileError(f"{where}: unknown keyword {key!r} (known: "
                                    f"{', '.join(sorted(ALL_KEYS))})")
            if key in NO_VALUE_KEYS:
                if value:
                    raise TestFileError(f"{where}: {key} takes no value")
            elif not value:
                raise TestFileError(f"{where}: {key} needs a value")
            if key in SINGLE_KEYS:
                if key in case.fields:
                    raise TestFileError(f"{where}: {key} given twice in one case")
                case.fields[key] = value if key not in NO_VALUE_KEYS else True
            else:
                case.fields.setdefault(key, []).append((value, lineno))
        validate_case(case)
        if case.name in names:
            raise TestFileError(f"{path}:{case.line}: duplicate NAME {case.name!r} "
                                f"(first at line {names[case.name]})")
        names[case.name] = case.line
        cases.append(case)
    return cases


def validate_case(case):
    where = f"{case.path}:{case.line}"
    if "NAME" not in case.fields:
        raise TestFileError(f"{where}: case has no NAME")
    where += f" ({case.name})"
    if ("PROG" in case.fields) == ("RUN" in case.fields):
        raise TestFileError(f"{where}: a case needs exactly one of PROG or RUN")
    if "TIMEOUT" in case.fields:
        try:
            t = float(case.fields["TIMEOUT"])
        except ValueError:
            t = -1
        if t <= 0:
            raise TestFileError(f"{where}: TIMEOUT must be a positive number of seconds")
    if "RETURN_CODE" in case.fields:
        try:
            int(case.fields["RETURN_CODE"])
        except ValueError:
            raise TestFileError(f"{where}: RETURN_CODE must be an integer")
        if "WILL_FAIL" in case.fields:
            raise TestFileError(f"{where}: use either WILL_FAIL or RETURN_CODE, not both")
    for value, lineno in case.fields.get("ENV", []):
        k, eq, _ = value.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            raise TestFileError(f"{case.path}:{lineno}: ENV wants K=V, got {value!r}")
    for key in ("EXPECT_REGEX", "EXPECT_REGEX_NONE"):
        for value, lineno in case.fields.get(key, []):
            try:
                re.compile(value)
            except re.error as e:
                raise TestFileError(f"{case.path}:{lineno}: bad regular expression: {e}")
    for value, lineno in case.fields.get("EXPECT_JSON", []):
        load_expected_json(case.path, value, lineno)
    if len(case.fields.get("AFTER", [])) > 1:
        raise TestFileError(f"{where}: only one AFTER per case")


def load_expected_json(test_path, value, lineno):
    """Expected JSON values of one EXPECT_JSON line (a file of JSON lines, or inline)."""
    if value[0] in "{[":
        try:
            return [json.loads(value)]
        except json.JSONDecodeError as e:
            raise TestFileError(f"{test_path}:{lineno}: inline EXPECT_JSON is not JSON: {e}")
    jpath = os.path.join(os.path.dirname(os.path.abspath(test_path)), value)
    try:
        with open(jpath, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise TestFileError(f"{test_path}:{lineno}: EXPECT_JSON file {jpath}: {e.strerror}")
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise TestFileError(f"{jpath}:{n}: not JSON: {e}")
    if not out:
        raise TestFileError(f"{jpath}: no JSON lines")
    return out


# ---------------------------------------------------------------------------------------------
# Running


def kill_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def shell(cmd, env=None, timeout=30):
    """Runs a SETUP/CLEANUP/REQUIRES command; returns (ok, output)."""
    try:
        p = subprocess.run(["bash", "-c", cmd], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                           timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired as e:
        return False, f"timed out after {timeout} s\n" + (e.output or b"").decode(errors="replace")
    return p.returncode == 0, p.stdout.decode(errors="replace")


class Output:
    """Lines of a child's stdout and stderr, collected by two threads in arrival order."""

    def __init__(self, proc):
        self.lines = []  # (stream, text)
        self.lock = threading.Lock()
        self.attached = threading.Event()
        self.threads = [
            threading.Thread(target=self._read, args=(proc.stdout, "out"), daemon=True),
            threading.Thread(target=self._read, args=(proc.stderr, "err"), daemon=True),
        ]
        for t in self.threads:
            t.start()

    def _read(self, pipe, stream):
        for raw in iter(pipe.readline, b""):
            text = raw.decode(errors="replace").rstrip("\n")
            if stream == "err" and text.strip() == ATTACH_MARKER:
                self.attached.set()
                continue
            with self.lock:
                self.lines.append((stream, text))
        pipe.close()

    def join(self, timeout):
        deadline = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))

    def texts(self):
        with self.lock:
            return [t for _, t in self.lines]


def check_expectations(case, lines, rc):
    """Returns a list of failure reasons (empty when the case passed)."""
    reasons = []
    stripped = [l.strip() for l in lines]

    if "RETURN_CODE" in case.fields:
        want = int(case.get("RETURN_CODE"))
        if rc != want:
            reasons.append(f"exit status {rc}, expected {want}")
    elif case.get("WILL_FAIL"):
        if rc == 0:
            reasons.append("exit status 0, expected a failure (WILL_FAIL)")
    elif rc != 0:
        reasons.append(f"exit status {rc}, expected 0")

    for text in case.many("EXPECT"):
        if text.strip() not in stripped:
            reasons.append(f"no line equals: {text.strip()}")
    for text in case.many("EXPECT_NONE"):
        if text.strip() in stripped:
            reasons.append(f"unexpected line: {text.strip()}")
    for pattern in case.many("EXPECT_REGEX"):
        rx = re.compile(pattern)
        if not any(rx.fullmatch(l) for l in stripped):
            reasons.append(f"no line matches: {pattern}")
    for pattern in case.many("EXPECT_REGEX_NONE"):
        rx = re.compile(pattern)
        hit = next((l for l in stripped if rx.fullmatch(l)), None)
        if hit is not None:
            reasons.append(f"line matches {pattern} but should not: {hit}")
    if "EXPECT_JSON" in case.fields:
        parsed = []
        for l in stripped:
            if l.startswith("{") or l.startswith("["):
                try:
                    parsed.append(json.loads(l))
                except json.JSONDecodeError:
                    pass
        for value, lineno in case.fields["EXPECT_JSON"]:
            for obj in load_expected_json(case.path, value, lineno):
                if obj not in parsed:
                    reasons.append("no output line equals JSON: "
                                   + json.dumps(obj, separators=(",", ":")))
    return reasons


def run_case(case, rbt):
    """Runs one case; returns (status, reasons, output lines) with status OK/FAIL/SKIP."""
    env = dict(os.environ)

    for cmd in case.many("REQUIRES"):
        ok, _ = shell(cmd, env)
        if not ok:
            return "SKIP", [f"REQUIRES failed: {cmd}"], []

    for cmd in case.many("SETUP"):
        ok, out = shell(cmd, env)
        if not ok:
            cleanup_reasons = run_cleanup(case, env)
            return "FAIL", [f"SETUP failed: {cmd}"] + cleanup_reasons, out.splitlines()

    befores = []
    try:
        for cmd in case.many("BEFORE"):
            befores.append(subprocess.Popen(["bash", "-c", cmd], stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL, env=env,
                                            start_new_session=True))
        if befores:
            time.sleep(BEFORE_SETTLE)
        status, reasons, lines = run_rbt(case, rbt, env)
    finally:
        for p in befores:
            kill_group(p.pid, signal.SIGKILL)
            p.wait()
    cleanup_reasons = run_cleanup(case, env)
    if cleanup_reasons:
        status = "FAIL"
        reasons = reasons + cleanup_reasons
    return status, reasons, lines


def run_cleanup(case, env):
    reasons = []
    for cmd in case.many("CLEANUP"):
        ok, out = shell(cmd, env)
        if not ok:
            reasons.append(f"CLEANUP failed: {cmd}: {out.strip()}")
    return reasons


def run_rbt(case, rbt, env):
    # A sanitized rbt (scripts/sanitize) starts and runs a few times slower; a timeout is a
    # failure, never how a case ends, so a longer one only delays a failing case.
    scale = float(os.environ.get("RBT_TEST_TIMEOUT_SCALE", "1"))
    timeout = float(case.get("TIMEOUT", DEFAULT_TIMEOUT)) * scale
    rbt_env = dict(env)
    rbt_env[ATTACH_ENV] = "1"
    for value in case.many("ENV"):
        k, _, v = value.partition("=")
        rbt_env[k] = v
    if "PROG" in case.fields:
        argv = [rbt, "-e", case.get("PROG")]
    else:
        argv = ["bash", "-c", case.get("RUN").replace("{{RBT}}", rbt)]

    start = time.monotonic()
    deadline = start + timeout
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=rbt_env, start_new_session=True)
    pgid = proc.pid
    output = Output(proc)
    after_cmd = (case.many("AFTER") or [None])[0]
    after = None
    interrupted = False
    timed_out = False
    reasons = []
    try:
        while True:
            if proc.poll() is not None:
                break
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            if after_cmd and after is None and output.attached.is_set():
                after = subprocess.Popen(["bash", "-c", after_cmd], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, env=env,
                                         start_new_session=True)
            if after is not None and not interrupted and after.poll() is not None:
                interrupted = True
                kill_group(pgid, signal.SIGINT)
            try:
                proc.wait(timeout=0.01)
            except subprocess.TimeoutExpired:
                pass
        if timed_out:
            kill_group(pgid, signal.SIGINT)
            try:
                proc.wait(timeout=KILL_GRACE)
            except subprocess.TimeoutExpired:
                kill_group(pgid, signal.SIGKILL)
                proc.wait()
            reasons.append(f"timed out after {timeout:g} s"
                           + ("" if output.attached.is_set() or after_cmd is None
                              else f" (never saw the {ATTACH_MARKER} marker, AFTER not run)"))
    finally:
        # Nothing started by the case may outlive it.
        kill_group(pgid, signal.SIGKILL)
        if proc.poll() is None:
            proc.wait()
        if after is not None:
            kill_group(after.pid, signal.SIGKILL)
            after.wait()
        output.join(2.0)

    lines = output.texts()
    rc = proc.returncode
    if rc < 0:
        rc = 128 - rc  # shell convention for "killed by signal"
    if not timed_out:
        reasons += check_expectations(case, lines, rc)
        if after_cmd and after is None and not reasons:
            reasons.append(f"rbt exited before printing {ATTACH_MARKER}; AFTER never ran")
    else:
        reasons.append(f"exit status {rc}")
    return ("FAIL" if reasons else "OK"), reasons, lines


def main():
    ap = argparse.ArgumentParser(description="Run rbt runtime tests (bpftrace test format).")
    ap.add_argument("--rbt", required=True, help="path to the rbt binary")
    ap.add_argument("--filter", help="only cases whose FILE:NAME matches this regex (search)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print the output of passing cases too")
    ap.add_argument("files", nargs="+", metavar="FILE.test")
    args = ap.parse_args()

    try:
        flt = re.compile(args.filter) if args.filter else None
    except re.error as e:
        print(f"runner: bad --filter regex: {e}", file=sys.stderr)
        return 2

    cases = []
    try:
        for path in args.files:
            cases.extend(parse_file(path))
    except TestFileError as e:
        print(f"runner: malformed test file: {e}", file=sys.stderr)
        return 2
    if flt:
        cases = [c for c in cases if flt.search(c.label)]

    passed = failed = skipped = 0
    if os.geteuid() != 0:
        print("runner: not root; skipping every runtime test (they need root and BPF)")
        for c in cases:
            print(f"[SKIP] {c.label} (not root)")
        print(f"0 passed, 0 failed, {len(cases)} skipped")
        return 0

    rbt = os.path.abspath(args.rbt)
    if not (os.path.isfile(rbt) and os.access(rbt, os.X_OK)):
        print(f"runner: rbt binary not found or not executable: {rbt}", file=sys.stderr)
        return 2

    cache_parent = tempfile.mkdtemp(prefix="rbt-test-cache-")
    os.environ["RBT_CACHE_DIR"] = os.path.join(cache_parent, "cache")
    try:
        return run_cases(cases, rbt, args.verbose)
    finally:
        shutil.rmtree(cache_parent, ignore_errors=True)


def run_cases(cases, rbt, verbose):
    passed = failed = skipped = 0
    for case in cases:
        t0 = time.monotonic()
        status, reasons, lines = run_case(case, rbt)
        took = time.monotonic() - t0
        if status == "OK":
            passed += 1
            print(f"[ OK ] {case.label}")
            if verbose:
                for l in lines:
                    print(f"    | {l}")
        elif status == "SKIP":
            skipped += 1
            print(f"[SKIP] {case.label} ({'; '.join(reasons)})")
        else:
            failed += 1
            print(f"[FAIL] {case.label}")
            for r in reasons + [f"took {took:.2f} s"]:
                print(f"    - {r}")
            print("    output:" if lines else "    output: (none)")
            for l in lines:
                print(f"    | {l}")
        sys.stdout.flush()

    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
