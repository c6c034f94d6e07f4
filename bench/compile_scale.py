#!/usr/bin/env python3
"""Compile time against script size (issue 15): is it linear in what the limits allow?

    bench/compile_scale.py gen SHAPE N > script.rbt     # one generated script
    bench/compile_scale.py [--rbt build/rbt] [--mode emit|dry-run] [--shapes a,b] [--scale 1,2,4,8]

Each shape is generated at N, 2N, 4N, 8N (N is the shape's base size) and compiled once with
`rbt --no-cache --emit-elf /dev/null` (parse, check, codegen; mode emit) or
`rbt --no-cache --dry-run` (also libbpf load and the kernel's verifier; needs root). Prints
seconds per size and the ratio of each step to the one before: 2.0 is linear when the size
doubles, 4.0 quadratic. Not a benchmark of absolute speed: run it on a quiet machine.

Shapes (what the limits in man/rbt.8 allow; the script file is at most 1 MiB, nesting at most
1000 levels):
  straight  one probe, N statements in turn `@a = 1;`, `$x = $x + 1;`, `printf("%d\\n", $x);`
  plus      one probe, N/100 statements `$x = $x + 1 + 2 + ... + 100;` (a 100-term `+` chain)
  ifs       one probe, N `if ($x > K) { @a = K; }` in sequence
  nest      one probe, N nested `if ($x > K) { ... }` (statements nest at most 1000 deep)
  loops     one probe, N nested `while ($x < K) { ... $x++; }` (loops nest at most 100 deep)
  probes    N probes `tracepoint:syscalls:sys_enter_getpid { @a[K] = count(); }`
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBE = "tracepoint:syscalls:sys_enter_getppid"

# Base sizes: 8x the base must stay within the limits (1 MiB, 1000 nesting levels).
BASE = {"straight": 5000, "plus": 5000, "ifs": 2500, "nest": 120, "loops": 12, "probes": 100}


def gen(shape, n):
    out = []
    if shape == "straight":
        out.append(PROBE + " {\n  $x = 0;\n")
        kinds = ["  @a = 1;\n", "  $x = $x + 1;\n", '  printf("%d\\n", $x);\n']
        out += [kinds[i % 3] for i in range(n)]
        out.append("}\n")
    elif shape == "plus":
        chain = " + ".join(str(k) for k in range(1, 101))
        out.append(PROBE + " {\n  $x = 0;\n")
        out += ["  $x = $x + %s;\n" % chain for _ in range(n // 100)]
        out.append("  @a = $x;\n}\n")
    elif shape == "ifs":
        out.append(PROBE + " {\n  $x = pid;\n")
        out += ["  if ($x > %d) { @a = %d; }\n" % (i, i) for i in range(n)]
        out.append("}\n")
    elif shape == "nest":
        out.append(PROBE + " {\n  $x = pid;\n")
        out += ["if ($x > %d) {\n" % i for i in range(n)]
        out.append("@a = $x;\n")
        out += ["}\n" for _ in range(n)]
        out.append("}\n")
    elif shape == "loops":
        out.append(PROBE + " {\n  $x = 0;\n")
        out += ["while ($x < %d) {\n" % (i + 1) for i in range(n)]
        out.append("@a = $x;\n")
        out += ["$x++; }\n" for _ in range(n)]
        out.append("}\n")
    elif shape == "probes":
        out += [PROBE + " { @a[%d] = count(); }\n" % i for i in range(n)]
    else:
        sys.exit("compile_scale: unknown shape '%s' (%s)" % (shape, ", ".join(BASE)))
    return "".join(out)


def time_compile(rbt, mode, path, timeout):
    if mode == "compile":
        argv = [os.path.join(os.path.dirname(rbt), "bench", "compile_bench"), path, "1", "1"]
    else:
        argv = [rbt, "--no-cache", "-q", "--dry-run", path]
    start = time.perf_counter()
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return timeout, ["timed out after %d s" % timeout]
    took = time.perf_counter() - start
    if p.returncode != 0:
        return took, p.stderr.strip().splitlines()[:3]
    if mode == "compile":  # compile_bench's own figure: the second compile, in process
        took = float(re.search(r"total_ms=([0-9.]+)", p.stdout).group(1)) / 1000
    return took, None


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "gen":
        sys.stdout.write(gen(sys.argv[2], int(sys.argv[3])))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--rbt", default=os.path.join(REPO, "build", "rbt"))
    ap.add_argument("--mode", choices=["dry-run", "compile"], default="dry-run")
    ap.add_argument("--shapes", default=",".join(BASE))
    ap.add_argument("--scale", default="1,2,4,8")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per compile")
    args = ap.parse_args()
    scales = [int(s) for s in args.scale.split(",")]
    print("shape     N        bytes     seconds  ratio")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            prev = None
            for s in scales:
                n = BASE[shape] * s
                path = os.path.join(tmp, "%s-%d.rbt" % (shape, n))
                text = gen(shape, n)
                with open(path, "w") as f:
                    f.write(text)
                took, err = time_compile(args.rbt, args.mode, path, args.timeout)
                ratio = "%.2f" % (took / prev) if prev else "-"
                print("%-9s %-8d %-9d %-8.2f %s%s" % (shape, n, len(text), took, ratio,
                                                        "  FAILED: " + " | ".join(err) if err else ""),
                      flush=True)
                prev = took


if __name__ == "__main__":
    main()
