#!/usr/bin/env python3
"""Per-kernel durations from a CubeCL profiling log (`cubecl.toml`: `[profiling.logger]
level = "basic"`, `file = ...`): each line `| <duration> | <kernel>` is one launch, timed by
the runtime (CUDA events; wgpu's timestamp queries where the device has them). Prints, for
each kernel name, the launches, the median and the total, largest total first.

usage: profile_summary.py LOG [LOG ...]"""
import re
import statistics
import sys

UNITS = {"ns": 1e-3, "µs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}
LINE = re.compile(r"^\|\s*([0-9.]+)(ns|µs|us|ms|s)\s*\|\s*(\S+)")

for path in sys.argv[1:]:
    times = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m:
                times.setdefault(m.group(3), []).append(float(m.group(1)) * UNITS[m.group(2)])
    print(f"## {path}\n\n| kernel | launches | median µs | total ms |\n|---|---|---|---|")
    for name, t in sorted(times.items(), key=lambda kv: -sum(kv[1])):
        print(f"| {name} | {len(t)} | {statistics.median(t):.1f} | {sum(t) / 1e3:.2f} |")
    print()
