"""`--thread-lookup=list` for compare.py and check_sampling.py: runs rbt with the hidden
RBT_RUBY_THREAD_LOOKUP=list, which finds each thread in the VM's threads list (the lookup Ruby
2.7 needs, having no thread-local ec) instead of through the TLS ec, and checks from rbt's -v
lines that every Ruby process was really looked up that way."""
import os
import re

OPTION = "--thread-lookup="


def parse(argv):
    """(positional args, mode or None) from argv[1:]."""
    mode = None
    rest = []
    for a in argv[1:]:
        if a.startswith(OPTION):
            mode = a[len(OPTION):]
        else:
            rest.append(a)
    return rest, mode


def rbt_env(mode):
    env = dict(os.environ)
    env.pop("RBT_RUBY_THREAD_LOOKUP", None)
    if mode:
        env["RBT_RUBY_THREAD_LOOKUP"] = mode
    return env


def rbt_flags(mode):
    return ["-v"] if mode else []


def check(mode, stderr):
    """None when every Ruby process rbt met used `mode`, else what went wrong."""
    if not mode:
        return None
    procs = re.findall(r"^rbt: rstack: pid \d+ runs Ruby .*$", stderr, re.M)
    want = "threads list" if mode == "list" else "TLS"
    if not procs:
        return "rbt met no Ruby process (no 'rbt: rstack: pid N runs Ruby' line)"
    wrong = [p for p in procs if want not in p]
    return f"not looked up by {want}: {wrong}" if wrong else None
