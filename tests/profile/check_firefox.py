#!/usr/bin/env python3
"""Checks a Firefox Profiler (Gecko format) file as `rbt record` writes it.

Usage: check_firefox.py FILE [--thread NAME]... [--marker NAME]... [--frame NAME]...
                             [--min-samples N]

Invariants (docs-developer/gecko-profile-format.md and src/types/gecko-profile.ts of the Firefox
Profiler): gzipped JSON; meta with version, interval, startTime, categories (name, color,
subcategories) and markerSchema; one thread per (pid, tid); every table's schema names its
columns and every row has them; every string, frame, stack, prefix and category index is in
range; a stack's prefix comes before it; samples sorted by time; markers with a known phase
(0 instant with no end, 1 interval with end >= start) and a data type that has a schema.
rbt's additions: meta.rbt.lost (an integer) and a frame list parallel to each frameTable.

Prints one summary line and exits 0, or prints every violation and exits 1.
"""

import argparse
import gzip
import json
import sys

SAMPLE_COLUMNS = ["stack", "time", "eventDelay"]
MARKER_COLUMNS = ["name", "startTime", "endTime", "phase", "category", "data"]
FRAME_COLUMNS = ["location", "relevantForJS", "innerWindowID", "implementation", "line",
                 "column", "category", "subcategory"]
STACK_COLUMNS = ["prefix", "frame"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--thread", action="append", default=[])
    ap.add_argument("--marker", action="append", default=[])
    ap.add_argument("--frame", action="append", default=[])
    ap.add_argument("--marker-stack", action="append", default=[],
                    help="NAME:FRAME: some marker NAME has FRAME on its stack")
    ap.add_argument("--min-samples", type=int, default=0)
    args = ap.parse_args()
    errors = []

    def check(cond, what):
        if not cond:
            errors.append(what)
        return cond

    with open(args.file, "rb") as f:
        raw = f.read()
    if not check(raw[:2] == b"\x1f\x8b", "the file is not gzipped"):
        return report(errors)
    doc = json.loads(gzip.decompress(raw))
    meta = doc.get("meta", {})
    for key in ["version", "interval", "startTime", "categories", "markerSchema", "product"]:
        check(key in meta, f"meta.{key} is missing")
    check(meta.get("product") == "rbt", "meta.product is not rbt")
    categories = meta.get("categories", [])
    for i, c in enumerate(categories):
        check(isinstance(c.get("name"), str) and isinstance(c.get("color"), str)
              and isinstance(c.get("subcategories"), list) and c["subcategories"],
              f"category {i} lacks name, color or subcategories")
    schemas = {s["name"]: s for s in meta.get("markerSchema", [])}
    for name, s in schemas.items():
        check(isinstance(s.get("display"), list) and isinstance(s.get("data"), list),
              f"marker schema {name} lacks display or data")
    rbt = meta.get("rbt", {})
    check(isinstance(rbt.get("lost"), int), "meta.rbt.lost (lost samples) is missing")
    for key in ["libs", "threads", "processes", "pausedRanges"]:
        check(isinstance(doc.get(key), list), f"{key} is not a list")

    seen_threads = set()
    names, marker_names, frame_names = set(), set(), set()
    marker_stack_frames = {}  # marker name -> frame names on its stacks
    total_samples = total_markers = 0
    for t in doc.get("threads", []):
        where = f"thread {t.get('name')} ({t.get('pid')}/{t.get('tid')})"
        for key in ["name", "pid", "tid", "processName", "processType", "registerTime",
                    "samples", "markers", "stackTable", "frameTable", "stringTable"]:
            check(key in t, f"{where}: {key} is missing")
        ident = (t.get("pid"), t.get("tid"))
        check(ident not in seen_threads, f"{where}: a second thread with this pid and tid")
        seen_threads.add(ident)
        names.add(t.get("name"))
        strings = t.get("stringTable", [])
        check(all(isinstance(s, str) for s in strings), f"{where}: a string is not a string")

        def table(name, columns):
            tab = t.get(name, {})
            schema = tab.get("schema", {})
            check(sorted(schema.values()) == list(range(len(schema))),
                  f"{where}: {name}'s schema columns are not 0..n-1")
            for c in columns:
                check(c in schema, f"{where}: {name}'s schema lacks {c}")
            rows = tab.get("data", [])
            for i, row in enumerate(rows):
                if not check(len(row) == len(schema), f"{where}: {name} row {i} has "
                             f"{len(row)} columns, its schema {len(schema)}"):
                    break
            return schema, rows

        fs, frames = table("frameTable", FRAME_COLUMNS)
        for i, row in enumerate(frames):
            loc = row[fs["location"]]
            check(isinstance(loc, int) and 0 <= loc < len(strings),
                  f"{where}: frame {i}'s location is not a string index")
            cat = row[fs["category"]]
            check(cat is None or 0 <= cat < len(categories),
                  f"{where}: frame {i}'s category {cat} is out of range")
            if cat is not None:
                sub = row[fs["subcategory"]]
                check(sub is not None and 0 <= sub < len(categories[cat]["subcategories"]),
                      f"{where}: frame {i}'s subcategory is out of range")
            if isinstance(loc, int) and loc < len(strings):
                frame_names.add(strings[loc])
        exact = t.get("rbtFrames")
        check(exact is None or len(exact) == len(frames),
              f"{where}: rbtFrames is not parallel to the frameTable")
        ss, stacks = table("stackTable", STACK_COLUMNS)
        for i, row in enumerate(stacks):
            p, fr = row[ss["prefix"]], row[ss["frame"]]
            check(p is None or (isinstance(p, int) and 0 <= p < i),
                  f"{where}: stack {i}'s prefix {p} is not an earlier stack")
            check(isinstance(fr, int) and 0 <= fr < len(frames),
                  f"{where}: stack {i}'s frame {fr} is out of range")
        sms, samples = table("samples", SAMPLE_COLUMNS)
        last = None
        for i, row in enumerate(samples):
            st, time = row[sms["stack"]], row[sms["time"]]
            check(st is None or (isinstance(st, int) and 0 <= st < len(stacks)),
                  f"{where}: sample {i}'s stack {st} is out of range")
            check(isinstance(time, (int, float)) and time >= 0,
                  f"{where}: sample {i}'s time is not a number of ms")
            check(last is None or time >= last, f"{where}: samples are not sorted by time")
            last = time
        cpus = t.get("rbtSampleCpus")
        check(cpus is None or len(cpus) == len(samples),
              f"{where}: rbtSampleCpus is not parallel to the samples")
        total_samples += len(samples)
        ms, markers = table("markers", MARKER_COLUMNS)
        for i, row in enumerate(markers):
            name, start, end = row[ms["name"]], row[ms["startTime"]], row[ms["endTime"]]
            phase, cat, data = row[ms["phase"]], row[ms["category"]], row[ms["data"]]
            check(isinstance(name, int) and 0 <= name < len(strings),
                  f"{where}: marker {i}'s name is not a string index")
            check(0 <= cat < len(categories), f"{where}: marker {i}'s category is out of range")
            if phase == 0:
                check(end is None, f"{where}: instant marker {i} has an end")
            elif check(phase == 1, f"{where}: marker {i}'s phase {phase} is not 0 or 1"):
                check(end is not None and end >= start, f"{where}: marker {i} ends before it "
                      "starts")
            if check(isinstance(data, dict) and data.get("type") in schemas,
                     f"{where}: marker {i}'s data type has no schema"):
                for field in schemas[data["type"]]["data"]:
                    if "key" in field and field["key"] in data and field["format"] in (
                            "integer", "bytes"):
                        check(isinstance(data[field["key"]], int),
                              f"{where}: marker {i}'s {field['key']} is not an integer")
                sync = data.get("stack")
                if sync is not None and check(
                        isinstance(sync, dict) and sync.get("name") == "SyncProfile"
                        and len(sync.get("samples", {}).get("data", [])) == 1,
                        f"{where}: marker {i}'s stack is not a one-sample SyncProfile"):
                    ssc = sync["samples"]["schema"]
                    row = sync["samples"]["data"][0]
                    s = row[ssc["stack"]]
                    in_range = check(isinstance(s, int) and 0 <= s < len(stacks),
                                     f"{where}: marker {i}'s stack is out of range")
                    check(sync.get("tid") == t.get("tid"),
                          f"{where}: marker {i}'s stack belongs to another thread")
                    on = marker_stack_frames.setdefault(strings[name], set())
                    while in_range and s is not None:
                        on.add(strings[frames[stacks[s][ss["frame"]]][fs["location"]]])
                        s = stacks[s][ss["prefix"]]
            if isinstance(name, int) and name < len(strings):
                marker_names.add(strings[name])
        total_markers += len(markers)

    for n in args.thread:
        check(n in names, f"no thread named {n} (threads: {sorted(map(str, names))})")
    for n in args.marker:
        check(n in marker_names, f"no marker named {n} (markers: {sorted(marker_names)})")
    for spec in args.marker_stack:
        name, frame = spec.split(":", 1)
        check(any(f == frame or f.startswith(frame + " (in ")
                  for f in marker_stack_frames.get(name, ())),
              f"no {name} marker with {frame} on its stack")
    for n in args.frame:
        check(any(f == n or f.startswith(n + " (in ") for f in frame_names), f"no frame {n}")
    check(total_samples >= args.min_samples,
          f"{total_samples} samples, fewer than {args.min_samples}")
    if errors:
        return report(errors)
    print(f"firefox profile OK: {len(seen_threads)} threads, {total_samples} samples, "
          f"{total_markers} markers, {rbt.get('lost')} lost")
    return 0


def report(errors):
    for e in errors[:50]:
        print("check_firefox: " + e)
    return 1


if __name__ == "__main__":
    sys.exit(main())
