#!/usr/bin/env python3
"""Summarises an `nsys stats --report cuda_gpu_trace --format csv` file (optionally .gz): per
kernel name its count, median duration and median idle gap before it (the device idle
between the previous kernel's end and its start), then the phases of the trace cut at gaps
of more than 1 ms (one bench row's warm-up, batches, ...), each with its kernels, busy time
and idle time. usage: nsys_gaps.py FILE [MAX_PHASES]"""
import csv
import gzip
import io
import statistics
import sys
from collections import defaultdict


def rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"Start') or l.startswith("Start"))
    for r in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        name = r.get("Name", "")
        if "memcpy" in name.lower() or "memset" in name.lower():
            kind = name
        else:
            kind = name.split("_k_")[0].split("(")[0][:48]
        yield int(r["Start (ns)"]), int(r["Duration (ns)"]), kind


def main():
    path = sys.argv[1]
    max_phases = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    trace = sorted(rows(path))
    by_name = defaultdict(lambda: ([], []))
    phases, phase = [], []
    end = None
    for start, dur, name in trace:
        gap = None if end is None else start - end
        if gap is not None and gap > 1_000_000 and phase:
            phases.append(phase)
            phase = []
        phase.append((start, dur, name, gap))
        by_name[name][0].append(dur)
        if gap is not None:
            by_name[name][1].append(gap)
        end = max(end or 0, start + dur)
    if phase:
        phases.append(phase)
    print(f"{'kernel':<50} {'count':>6} {'median us':>10} {'gap before us':>14}")
    for name, (durs, gaps) in sorted(by_name.items(), key=lambda x: -sum(x[1][0])):
        gap = statistics.median(gaps) / 1e3 if gaps else float("nan")
        print(f"{name:<50} {len(durs):>6} {statistics.median(durs) / 1e3:>10.2f} {gap:>14.2f}")
    print(f"\nphases (cut at idle > 1 ms): {len(phases)}")
    print(f"{'#':>3} {'kernels':>8} {'span us':>10} {'busy us':>10} {'idle us':>10}  first kernels")
    for i, p in enumerate(phases[:max_phases]):
        span = p[-1][0] + p[-1][1] - p[0][0]
        busy = sum(d for _, d, _, _ in p)
        names = ", ".join(dict.fromkeys(n for _, _, n, _ in p[:8]))
        print(f"{i:>3} {len(p):>8} {span / 1e3:>10.1f} {busy / 1e3:>10.1f} "
              f"{(span - busy) / 1e3:>10.1f}  {names[:90]}")


if __name__ == "__main__":
    main()
