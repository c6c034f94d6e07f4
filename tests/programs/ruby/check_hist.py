#!/usr/bin/env python3
"""Reads rbt's text output on stdin and prints one line per histogram:
`hist @name[key]: N from LOW` with N the total count of its buckets and LOW the label of its
lowest non-empty bucket; other lines pass through unchanged. Tests use it to compare a
histogram's count with what the workload did and to check where its values lie."""

import re
import sys

BUCKET = re.compile(r"^(\(\.\.\., [^)]*\)|\[[^\]]*[\])])\s+(\d+) \|")
name = None
total = 0
low = None


def flush():
    if name is not None:
        print(f"hist {name} {total} from {low}")


for line in sys.stdin:
    line = line.rstrip("\n")
    m = BUCKET.match(line)
    if m and name is not None:
        n = int(m.group(2))
        total += n
        if n and low is None:
            low = m.group(1).split(",")[0].strip("[(")
        continue
    if line.startswith("@") and line.endswith(":"):
        flush()
        name, total, low = line, 0, None
        continue
    if line.strip() == "":
        continue
    flush()
    name = None
    print(line)
flush()
