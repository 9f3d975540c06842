#!/usr/bin/env python3
"""Compare a new bench run against the latest earlier figure of each row.

usage: python3 bench/compare.py NEW.json OLD.json [OLDER.json ...]

A row is (op, shape, dtype, params, impl). Each row of NEW is matched with the first OLD file
(in the order given: newest first) that has it; the table shows both medians and their
ratio, and flags rows more than 5% slower. (The runs' copy rows are printed for context:
their sizes follow each run's largest case, so they are not a normaliser.)
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def key(r):
    return (r["op"], tuple(r["shape"]), r["dtype"], json.dumps(r["params"], sort_keys=True), r["impl"])


def main():
    new = load(sys.argv[1])
    olds = [(p, load(p)) for p in sys.argv[2:]]
    print("| op | shape | params | impl | new ms | old ms | old file | new/old |")
    print("|---|---|---|---|---|---|---|---|")
    worse = 0
    for r in new["rows"]:
        if r["impl"] == "copy" or r.get("status") != "ok":
            continue
        match = next(((p, o) for p, o in olds for q in o["rows"] if key(q) == key(r) and q.get("status") == "ok"), None)
        if match is None:
            continue
        path, old = match
        q = next(q for q in old["rows"] if key(q) == key(r))
        ratio = r["median_ms"] / q["median_ms"]
        flag = " **>5%**" if ratio > 1.05 else ""
        worse += bool(flag)
        print(f"| {r['op']} | {'x'.join(map(str, r['shape']))} | {json.dumps(r['params'])} | {r['impl']} "
              f"| {r['median_ms']:.4f} | {q['median_ms']:.4f} | {path.split('results/')[-1]} | {ratio:.3f}{flag} |")
    print(f"\nrows more than 5% slower: {worse}")


main()
