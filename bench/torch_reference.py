#!/usr/bin/env python3
"""The torch side of sieve-bench: the same cases, the same JSON schema, on the same GPU.

Usage: python3 bench/torch_reference.py OUT.json [--quick]

Times each op with CUDA events: two warm-up calls, then the median/min/max of RUNS calls.
Inputs follow sieve-bench's rules: random, never zeros; cumsum data is random in
{-2, -1, 1, 2} so its result is exact and checked against a float64 reference first.
"""
import json
import sys

import torch

RUNS = 15


def timed(fn):
    fn()
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(RUNS):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2], times[0], times[-1]


def row(op, shape, dtype, params, impl, floor_bytes, stats, status="ok", note=None):
    median, lo, hi = stats if stats else (None, None, None)
    r = {
        "op": op, "shape": list(shape), "dtype": dtype, "params": params, "impl": impl,
        "backend": "cuda", "median_ms": median, "min_ms": lo, "max_ms": hi,
        "floor_bytes": floor_bytes,
        "gbps": floor_bytes / (median * 1e-3) / 1e9 if median else None,
        "status": status,
    }
    if note:
        r["note"] = note
    return r


def cumsum_cases(quick):
    if quick:
        return [((1 << 16,), 0), ((64, 1024), 0), ((64, 1024), 1)]
    return [((1 << 20,), 0), ((1 << 24,), 0), ((1 << 28,), 0), ((4096, 32768), 0), ((4096, 32768), 1)]


def main():
    out = sys.argv[1]
    quick = "--quick" in sys.argv
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(0x51E7E)
    values = torch.tensor([-2.0, -1.0, 1.0, 2.0], device=dev)
    rows = []
    cases = cumsum_cases(quick)

    n_copy = max(torch.Size(s).numel() for s, _ in cases)
    src = torch.rand(n_copy, device=dev, generator=gen) + 1.0
    dst = torch.empty_like(src)
    rows.append(row("copy", [n_copy], "f32", {}, "copy", 8 * n_copy, timed(lambda: dst.copy_(src))))
    del src, dst

    for shape, dim in cases:
        n = torch.Size(shape).numel()
        x = values[torch.randint(0, 4, shape, device=dev, generator=gen)]
        got = torch.cumsum(x, dim)
        want = torch.cumsum(x.double(), dim).float()
        params = {"dim": dim}
        if not torch.equal(got, want):
            rows.append(row("cumsum", shape, "f32", params, "torch", 8 * n, None, "wrong",
                            "torch.cumsum differs from the float64 reference"))
        else:
            rows.append(row("cumsum", shape, "f32", params, "torch", 8 * n,
                            timed(lambda: torch.cumsum(x, dim))))
        del x, got, want

    report = {
        "device": torch.cuda.get_device_name(),
        "backend": "cuda",
        "command": " ".join(["python3"] + sys.argv),
        "torch": torch.__version__,
        "rows": rows,
    }
    with open(out, "w") as f:
        json.dump(report, f, indent=2)
    for r in rows:
        print(f"{r['op']:<8} {str(r['shape']):<16} {json.dumps(r['params']):<12} {r['impl']:<6} "
              f"{r['median_ms'] if r['median_ms'] is None else round(r['median_ms'], 4)} ms "
              f"{'' if r['gbps'] is None else round(r['gbps'])} GB/s {r['status']}")


if __name__ == "__main__":
    main()
