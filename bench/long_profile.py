#!/usr/bin/env python3
"""A long profile's exit: how soon the profile files are written after Ctrl-C, and memory.

    sudo bench/long_profile.py [--rbt build/rbt] [--seconds 600] [--threads 4]

Issue 12's targets: a 10-minute 99 Hz profile of a busy multi-threaded Ruby program writes
its SVG, pprof and folded files within 2 s of Ctrl-C, and `rbt record`'s memory stays flat.

A Ruby program runs --threads busy threads, each recursing through ten methods chosen at
random to a random depth of 5 to 25, so the stacks keep changing: many distinct stacks (the
table says how many the folded file has). Four tracers run side by side on it, for
--seconds: `rbt -p PID` with `profile:hz:99 /pid == PID/ { @[tid, rstack] = count(); }` and
`-o` a .svg, a .pb.gz and a .folded file, and `rbt record -p PID` (99 Hz, its Firefox file).
Every 10 s the bench reads each tracer's VmRSS. Then it sends each SIGINT in turn and times
SIGINT to exit (the file is complete when the process has exited); the others keep sampling
meanwhile. Peak RSS is ru_maxrss (os.wait4), writing included.

No peer: bpftrace writes no profile files. Needs root and ruby. Exits 0.
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record_cost import vm_rss_kb  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

RUBY_BUSY = """\
METHODS = (0...10).map { |i| :"m#{i}" }
METHODS.each_with_index do |name, i|
  define_method(name) do |rng, left|
    if left.zero?
      x = 0
      2000.times { |k| x += k * i }
      x
    else
      send(METHODS[rng.rand(10)], rng, left - 1)
    end
  end
end
threads = (0...Integer(ARGV[0])).map do |t|
  Thread.new do
    rng = Random.new(t)
    loop { m0(rng, 5 + rng.rand(21)) }
  end
end
threads.each(&:join)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rbt", default=os.path.join(REPO, "build", "rbt"))
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--threads", type=int, default=4)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("long_profile: needs root", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as wd:
        script = os.path.join(wd, "busy.rb")
        with open(script, "w") as f:
            f.write(RUBY_BUSY)
        ruby = subprocess.Popen(["ruby", script, str(args.threads)], start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        prog = f"profile:hz:99 /pid == {ruby.pid}/ {{ @[tid, rstack] = count(); }}"
        tracers = {}
        for ext in ("svg", "pb.gz", "folded"):
            out = os.path.join(wd, "profile." + ext)
            tracers[ext] = (out, subprocess.Popen(
                [args.rbt, "-q", "-p", str(ruby.pid), "-e", prog, "-o", out],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        out = os.path.join(wd, "record.json.gz")
        tracers["record"] = (out, subprocess.Popen(
            [args.rbt, "record", "-q", "-p", str(ruby.pid), "-o", out],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        rss = {k: [] for k in tracers}
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            time.sleep(min(10, max(0, end - time.monotonic())))
            for k, (_, p) in tracers.items():
                rss[k].append(vm_rss_kb(p.pid))
        rows = []
        for k, (path, p) in tracers.items():
            t0 = time.monotonic()
            p.send_signal(signal.SIGINT)
            _, status, usage = os.wait4(p.pid, 0)
            took = time.monotonic() - t0
            err = p.stderr.read().decode(errors="replace").strip()
            size = os.path.getsize(path) if os.path.exists(path) else 0
            extra = ""
            if k == "folded" and size:
                with open(path) as f:
                    extra = f"{sum(1 for _ in f)} distinct stacks"
            if k == "record" and err:
                extra = err.splitlines()[-1]
            rows.append((k, took, size, usage.ru_maxrss, rss[k], status, extra))
        os.killpg(ruby.pid, signal.SIGKILL)
        ruby.wait()
    print(f"{args.seconds:.0f} s at 99 Hz, {args.threads} busy Ruby threads")
    print(f"{'output':<8} {'SIGINT->exit':>13} {'file':>10} {'peak RSS':>9}  RSS every 10 s "
          "(first, middle, last; MiB)  target")
    for k, took, size, peak, samples, status, extra in rows:
        mid = samples[len(samples) // 2] if samples else 0
        first, last = (samples[0], samples[-1]) if samples else (0, 0)
        target = "<= 2 s " + ("PASS" if took <= 2 else "MISS") if k != "record" else "flat RSS"
        print(f"{k:<8} {took:>11.2f} s {size / 1e6:>8.2f}MB {peak / 1024:>7.1f}M  "
              f"{first / 1024:.1f}, {mid / 1024:.1f}, {last / 1024:.1f}  {target}"
              f"{'' if status == 0 else f'  (exit status {status})'}  {extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
