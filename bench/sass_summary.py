"""Summary of an Nsight Compute SASS page (`ncu --page source --print-source sass --csv`, as
bench/gpu_session17.sh writes it; .csv or .csv.gz): thread instructions executed per key, by
opcode with their share of the stall samples, and the stall reasons. Writes the listing with
per-key counts and samples beside the file (`<file>.txt`).

usage: python3 bench/sass_summary.py FILE KEYS   (KEYS: keys the profiled launch handled)
"""
import collections
import csv
import gzip
import io
import sys


def num(x):
    try:
        return float(x)
    except ValueError:
        return 0.0


def main():
    path, keys = sys.argv[1], float(sys.argv[2])
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = f.read().splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith('"Address"'))
    table = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    head, rows = table[0], table[1:]
    col = {h: j for j, h in enumerate(head)}
    executed, sampled = col["Instructions Executed"], col["Warp Stall Sampling (All Samples)"]
    per_key = lambda row: num(row[executed]) * 32 / keys
    total = sum(per_key(r) for r in rows)
    samples = sum(num(r[sampled]) for r in rows) or 1.0
    with open(path.removesuffix(".gz") + ".txt", "w") as out:
        for n, r in enumerate(rows):
            out.write(f"{n:5d} {per_key(r):7.3f} {int(num(r[sampled])):6d} {r[1].strip()[:90]}\n")
    print(f"thread instructions a key {total:.1f}, stall samples {samples:.0f}")
    by_op, by_op_samples = collections.Counter(), collections.Counter()
    for r in rows:
        words = r[1].strip().split()
        op = (words[1] if words[0].startswith("@") else words[0]).split(".")[0]
        by_op[op] += per_key(r)
        by_op_samples[op] += num(r[sampled])
    for op, count in by_op.most_common(20):
        print(f"{op:8s} {count:7.1f}  samples {by_op_samples[op] / samples:5.1%}")
    stalls = {h: sum(num(r[col[h]]) for r in rows)
              for h in head if h.startswith("stall_") and "Not" not in h}
    print(sorted(stalls.items(), key=lambda t: -t[1])[:8])


if __name__ == "__main__":
    main()
