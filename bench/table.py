#!/usr/bin/env python3
"""Markdown table of one measurement: bench/results/<card>/{cuda,vulkan,torch}.json (and
{cuda,vulkan}-big.json where a call split a backend's rows over two processes).

usage: python3 bench/table.py bench/results/h200

Per case (op, shape, dtype, params without `strategy`): each implementation's median time,
GB/s over the case's floor bytes, that as % of the same run's copy row, the ratio to torch
and to stock Burn on the same backend, and for Vulkan rows the ratio to the same row through
CUDA (issue 16); then that ratio per op for sieve's default strategy.
"""
import json
import os
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def key(row):
    # `raw=none` (the bench's "no raw strategy rows") says which rows ran, not what they are.
    params = {k: v for k, v in row["params"].items()
              if k != "strategy" and not (k == "raw" and v == "none")}
    return (row["op"], tuple(row["shape"]), row["dtype"], json.dumps(params, sort_keys=True))


def main():
    folder = sys.argv[1]
    runs = {name: load(os.path.join(folder, f"{name}.json"))
            for name in ("cuda", "vulkan", "torch") if os.path.exists(os.path.join(folder, f"{name}.json"))}
    # The copy row of each backend's main file (before any `<backend>-big.json` joins it).
    copy = {name: next((r for r in run["rows"] if r["impl"] == "copy"), None) for name, run in runs.items()}
    # `<backend>-big.json`: rows of the same backend from a second process of the same call
    # (the largest cases, apart so that a process cut by its limit loses only them); its own
    # copy row is left out.
    for name in ("cuda", "vulkan"):
        big = os.path.join(folder, f"{name}-big.json")
        if name in runs and os.path.exists(big):
            runs[name]["rows"] += [r for r in load(big)["rows"] if r["impl"] != "copy"]
    print("| run | copy row | GB/s |")
    print("|---|---|---|")
    for name, row in copy.items():
        if row:
            print(f"| {name} ({runs[name]['device']}) | {row['median_ms']:.3f} ms for {row['shape'][0]} f32 | {row['gbps']:.0f} |")
    print()
    torch_rows = {key(r): r for r in runs.get("torch", {"rows": []})["rows"] if r["impl"] == "torch"}
    # The same row through CUDA, for the Vulkan rows' ratio.
    cuda_ms = {(key(r), r["impl"], r["params"].get("strategy", "")): r["median_ms"]
               for r in runs.get("cuda", {"rows": []})["rows"]}
    ratios = []
    print("| op | shape | params | backend | impl | strategy | median ms | GB/s | % of copy | vs torch | vs stock Burn | Vulkan / CUDA |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in ("cuda", "vulkan"):
        if name not in runs:
            continue
        rows = [r for r in runs[name]["rows"] if r["impl"] != "copy"]
        burn = {key(r): r for r in rows if r["impl"] == "burn"}
        for r in rows:
            k = key(r)
            shape = "x".join(str(d) for d in r["shape"])
            params = ", ".join(f"{a}={b}" for a, b in json.loads(k[3]).items())
            strategy = r["params"].get("strategy", "")
            if r["median_ms"] is None:
                print(f"| {r['op']} | {shape} | {params} | {name} | {r['impl']} | {strategy} | {r['status']}: {r.get('note', '')} | | | | | |")
                continue
            pct = 100 * r["gbps"] / copy[name]["gbps"] if copy.get(name) else float("nan")
            t = torch_rows.get(k)
            vs_torch = f"{t['median_ms'] / r['median_ms']:.2f}x" if t and t["median_ms"] and r["impl"] == "sieve" else ""
            b = burn.get(k)
            vs_burn = f"{b['median_ms'] / r['median_ms']:.0f}x" if b and b["median_ms"] and r["impl"] == "sieve" else ""
            c = cuda_ms.get((k, r["impl"], strategy)) if name == "vulkan" else None
            vs_cuda = f"{r['median_ms'] / c:.2f}x" if c else ""
            if c and r["impl"] == "sieve" and strategy in ("", "auto"):
                ratios.append((r["op"], shape, params, r["median_ms"] / c))
            print(f"| {r['op']} | {shape} | {params} | {name} | {r['impl']} | {strategy} | {r['median_ms']:.4f} | {r['gbps']:.0f} | {pct:.0f}% | {vs_torch} | {vs_burn} | {vs_cuda} |")
    for k, t in torch_rows.items():
        shape = "x".join(str(d) for d in k[1])
        params = ", ".join(f"{a}={b}" for a, b in json.loads(k[3]).items())
        pct = 100 * t["gbps"] / copy["torch"]["gbps"] if copy.get("torch") and t["gbps"] else float("nan")
        ms = f"{t['median_ms']:.4f}" if t["median_ms"] else t["status"]
        gbps = f"{t['gbps']:.0f}" if t["gbps"] else ""
        print(f"| {k[0]} | {shape} | {params} | cuda | torch | | {ms} | {gbps} | {pct:.0f}% | | | |")
    print("\n'vs torch' and 'vs stock Burn': how many times faster sieve is (their median / sieve's).")
    print("'Vulkan / CUDA': the Vulkan row's median over the same row's through CUDA (lower is better).")
    if ratios:
        if copy.get("cuda") and copy.get("vulkan"):
            ratios.insert(0, ("copy", "", "", copy["vulkan"]["median_ms"] / copy["cuda"]["median_ms"]))
        print("\n| op | shape | params | Vulkan / CUDA (sieve, default strategy) |")
        print("|---|---|---|---|")
        for op, shape, params, ratio in ratios:
            print(f"| {op} | {shape} | {params} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
