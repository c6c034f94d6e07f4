#!/usr/bin/env python3
"""Reads a folded profile (rbt ... -f folded) on stdin and says which Ruby method of one
workload is on top: `check_tool.py WORKLOAD` prints `top: LABEL` for the method (block
prefixes removed) that the heaviest share of the workload's samples ran in, the leaf-most frame
of WORKLOAD in each stack, then `share: P%` of that method and `kernel: K` for the top stack's
leaf-most kernel frame below the tracepoint's own (`__traceiter_*`), "none" if it has none. Other processes' stacks are ignored."""

import re
import sys
from collections import Counter

workload = sys.argv[1]
by_method = Counter()
leaf_stack = {}
for line in sys.stdin:
    stack, _, count = line.rstrip("\n").rpartition(" ")
    if workload not in stack or not count.isdigit():
        continue
    frames = stack.split(";")
    mine = [f for f in frames if workload in f]
    label = re.sub(r"^block (\(\d+ levels\) )?in ", "", mine[-1].split(" (")[0])
    by_method[label] += int(count)
    ruby_or_c = [i for i, f in enumerate(frames) if "(" in f or "<cfunc>" in f]
    kernel = frames[ruby_or_c[-1] + 1:] if ruby_or_c else []
    # The tracepoint's own machinery at the leaf (__traceiter_sched_switch calls the probe on
    # this kernel) is the tracer's, not where the thread blocked.
    while kernel and re.match(r"(__traceiter_|perf_trace_|bpf_trace_run|trace_call_bpf)", kernel[-1]):
        kernel.pop()
    if label not in leaf_stack or int(count) > leaf_stack[label][0]:
        leaf_stack[label] = (int(count), kernel[-1] if kernel else "none")
if not by_method:
    print("top: none")
    sys.exit(0)
top, n = by_method.most_common(1)[0]
print(f"top: {top}")
print(f"share: {100 * n // sum(by_method.values())}%")
print(f"kernel: {leaf_stack[top][1]}")
