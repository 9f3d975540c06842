#!/usr/bin/env python3
"""The torch side of sieve-bench: the same cases, the same JSON schema, on the same GPU.

Usage: python3 bench/torch_reference.py OUT.json [--quick] [--scans]
(`--scans`: the copy row and the scan family's rows only.)

Times each op with CUDA events: warm-up calls, then the median/min/max of RUNS samples, each a
batch of back-to-back calls divided by its size (see `timed`).
Inputs follow sieve-bench's rules: random, never zeros; cumsum data is random in
{-2, -1, 1, 2} so its result is exact and checked against a float64 reference first.
"""
import json
import sys

import torch

RUNS = 15


SAMPLE_MS = 3.0
MAX_BATCH = 64


def timed(fn):
    """Two warm-up calls; then each of RUNS samples is `batch` back-to-back calls between two
    CUDA events, divided by `batch` (about 3 ms per sample, at most 64 calls), as sieve-bench
    times its rows (crates/sieve-bench/src/timing.rs)."""

    def sample(batch):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / batch

    fn()
    torch.cuda.synchronize()
    single = sample(1)
    batch = max(1, min(MAX_BATCH, int(-(-SAMPLE_MS // max(single, 1e-6)))))
    times = sorted(sample(batch) for _ in range(RUNS))
    return times[len(times) // 2], times[0], times[-1], batch


def row(op, shape, dtype, params, impl, floor_bytes, stats, status="ok", note=None):
    median, lo, hi, batch = stats if stats else (None, None, None, None)
    r = {
        "op": op, "shape": list(shape), "dtype": dtype, "params": params, "impl": impl,
        "backend": "cuda", "median_ms": median, "min_ms": lo, "max_ms": hi,
        "floor_bytes": floor_bytes,
        "gbps": floor_bytes / (median * 1e-3) / 1e9 if median else None,
        "batch": batch,
        "status": status,
    }
    if note:
        r["note"] = note
    return r


def cumsum_cases(quick):
    if quick:
        return [((1 << 16,), 0), ((64, 1024), 0), ((64, 1024), 1)]
    return [((1 << 20,), 0), ((1 << 24,), 0), ((1 << 28,), 0), ((4096, 32768), 0), ((4096, 32768), 1)]


def scan_family_cases(quick):
    """(op, shape, dim) as sieve-bench's cumprod/cummin/cummax rows."""
    if quick:
        return [("cummax", (64, 1024), 1)]
    return [(op, shape, dim) for op in ("cumprod", "cummin", "cummax")
            for shape, dim in [((1 << 20,), 0), ((1 << 24,), 0), ((1 << 28,), 0),
                               ((4096, 32768), 1)]]


def scan_family_rows(quick, dev, gen):
    """torch.cumprod on {-1, 1} (every partial product exact), torch.cummin/cummax on
    integers below 2^24 (values moved), checked against float64 first, as sieve-bench's.
    torch's cummin/cummax also write int64 indices (sieve's and Burn's ops return values
    only); the floor counts what sieve moves (read and write 4 bytes an element)."""
    rows = []
    for op, shape, dim in scan_family_cases(quick):
        n = torch.Size(shape).numel()
        params = {"dim": dim}
        if op == "cumprod":
            x = torch.tensor([-1.0, 1.0], device=dev)[
                torch.randint(0, 2, shape, device=dev, generator=gen)]
            fn = lambda: torch.cumprod(x, dim)
            want = torch.cumprod(x.double(), dim).float()
        else:
            x = torch.randint(-(1 << 23), 1 << 23, shape, device=dev, generator=gen).float()
            torch_op = torch.cummin if op == "cummin" else torch.cummax
            fn = lambda: torch_op(x, dim)
            want = torch_op(x.double(), dim).values.float()
        got = fn()
        got = got if op == "cumprod" else got.values
        note = None if op == "cumprod" else "torch also writes int64 indices"
        if not torch.equal(got, want):
            rows.append(row(op, shape, "f32", params, "torch", 8 * n, None, "wrong",
                            f"torch.{op} differs from the float64 reference"))
        else:
            rows.append(row(op, shape, "f32", params, "torch", 8 * n, timed(fn), note=note))
        del x, got, want
    return rows


def filter_cases(quick):
    """(op, shape, density) as sieve-bench's standard filter rows."""
    if quick:
        return [("mask_select", (1 << 16,), 0.5), ("argwhere", (1 << 16,), 0.5),
                ("compact_rows", (8, 4096), 0.1)]
    return [("mask_select", (1 << 24,), 0.5), ("mask_select", (1 << 24,), 0.01),
            ("mask_select", (1 << 28,), 0.5), ("mask_select", (1 << 28,), 0.01),
            ("argwhere", (1 << 24,), 0.5), ("argwhere", (1 << 28,), 0.5),
            ("compact_rows", (64, 1 << 20), 0.1)]


def filter_rows(quick, dev, gen):
    """torch.masked_select, torch.argwhere, and for compact_rows (torch has no per-row
    compaction) the usual no-sync stand-in: a stable argsort of ~mask along the row, a gather,
    zeros after each row's count. Floor bytes as sieve-bench counts them (1-byte bool mask,
    i64 indices)."""
    rows = []
    for op, shape, density in filter_cases(quick):
        n = torch.Size(shape).numel()
        params = {"density": density}
        m = torch.rand(shape, device=dev, generator=gen) < density
        kept = int(m.sum())
        if op == "argwhere":
            floor = n + 8 * kept
            got = torch.argwhere(m)
            ok = got.shape == (kept, len(shape)) and bool(m[tuple(got.t())].all())
            rows.append(row(op, shape, "bool", params, "torch", floor,
                            timed(lambda: torch.argwhere(m)) if ok else None,
                            "ok" if ok else "wrong", None if ok else "torch.argwhere disagrees"))
            del got
        else:
            x = torch.rand(shape, device=dev, generator=gen) + 1.0
            if op == "mask_select":
                floor = 5 * n + 4 * kept
                got = torch.masked_select(x, m)
                ok = got.numel() == kept and torch.equal(got, x[m])
                fn = lambda: torch.masked_select(x, m)
                note = None
            else:
                floor = 5 * n + 4 * n + 4 * shape[0]

                def fn():
                    order = torch.argsort((~m).to(torch.uint8), dim=1, stable=True)
                    out = torch.gather(x, 1, order)
                    counts = m.sum(dim=1)
                    slots = torch.arange(shape[1], device=dev).unsqueeze(0)
                    return out.masked_fill(slots >= counts.unsqueeze(1), 0.0), counts

                out, counts = fn()
                ok = int(counts.sum()) == kept and torch.equal(out[out != 0], x[m])
                note = "torch has no per-row compaction: stable argsort of ~mask + gather"
                del out, counts
            rows.append(row(op, shape, "f32", params, "torch", floor,
                            timed(fn) if ok else None, "ok" if ok else "wrong",
                            note if ok else "result disagrees with x[m]"))
            del x
        del m
        torch.cuda.empty_cache()
    return rows


def sort_cases(quick):
    """(op, shape, dtype, params) as sieve-bench's standard sort and split rows."""
    if quick:
        return [("sort_with_indices", (1 << 17,), "f32", {}), ("sort", (64, 128), "i32", {}),
                ("argsort", (4096,), "f32", {"descending": "true"}),
                ("stable_partition", (1 << 12,), "f32", {"density": 0.5}),
                ("split_by_bit", (1 << 12,), "i32", {})]
    return [("sort_with_indices", (1 << 24,), "f32", {}), ("sort_with_indices", (1 << 28,), "f32", {}),
            ("argsort", (1 << 28,), "f32", {}), ("sort", (1 << 28,), "i32", {}),
            ("sort_with_indices", (4096, 32768), "f32", {}),
            ("sort_with_indices", (16384, 128), "f32", {}),
            ("sort_with_indices", (64, 128256), "f32", {"descending": "true"}),
            ("stable_partition", (1 << 28,), "f32", {"density": 0.5}),
            ("split_by_bit", (1 << 28,), "i32", {})]


def sort_rows(quick, dev, gen):
    """torch.sort / torch.argsort with stable=True (sieve's sorts are stable); for the splits
    (torch has no stable partition) the usual stand-in: a stable argsort of the inverted flags
    along the row, then a gather. Floors as sieve-bench counts them (i64 indices)."""
    rows = []
    for op, shape, dtype, params in sort_cases(quick):
        n = torch.Size(shape).numel()
        desc = params.get("descending") == "true"
        if dtype == "f32":
            x = torch.rand(shape, device=dev, generator=gen) * 2.0 - 1.0
        else:
            x = torch.randint(-1_000_000, 1_000_000, shape, device=dev, generator=gen,
                              dtype=torch.int32)
        note = None
        if op == "sort":
            floor = 8 * n
            fn = lambda: torch.sort(x, dim=-1, descending=desc, stable=True).values
        elif op == "argsort":
            floor = 12 * n
            fn = lambda: torch.argsort(x, dim=-1, descending=desc, stable=True)
        elif op == "sort_with_indices":
            floor = 16 * n
            fn = lambda: torch.sort(x, dim=-1, descending=desc, stable=True)
        else:
            floor = 16 * n
            if op == "split_by_bit":
                flags = (x & 1) == 0
            else:
                flags = torch.rand(shape, device=dev, generator=gen) < params["density"]

            def fn():
                order = torch.argsort((~flags).to(torch.uint8), dim=-1, stable=True)
                return torch.gather(x, -1, order), order
            note = "torch has no stable partition: stable argsort of the flags + gather"
        out = fn()
        values = out[0] if isinstance(out, tuple) else out
        ok = values.shape == x.shape
        if op in ("sort", "sort_with_indices"):
            s = values if not desc else values.flip(-1)
            ok = ok and bool((s[..., 1:] >= s[..., :-1]).all())
        rows.append(row(op, shape, dtype, params, "torch", floor, timed(fn) if ok else None,
                        "ok" if ok else "wrong", note if ok else "torch output is not sorted"))
        del x, out, values
        torch.cuda.empty_cache()
    return rows


def topk_cases(quick):
    """(shape, params) as sieve-bench's standard topk_with_indices rows (f32, last dim)."""
    if quick:
        return [((1 << 14,), {"k": 10}), ((64, 128), {"k": 8})]
    return ([((1 << 24,), {"k": k}) for k in (10, 1000, 100000)]
            + [((1 << 28,), {"k": k}) for k in (10, 1000, 100000)]
            + [((1 << 28,), {"k": 1000, "dist": "all_equal"}),
               ((4096, 32768), {"k": 64}), ((16384, 128), {"k": 8}), ((64, 128256), {"k": 50}),
               ((64, 128256), {"k": 1000}), ((64, 128256), {"k": 50, "dist": "tied"}),
               ((64, 128256), {"k": 1000, "dist": "tied"})])


def topk_rows(quick, dev, gen):
    """torch.topk (largest, sorted) along the last dim; floor as sieve-bench counts it (the
    input read once, values and i64 indices written once)."""
    rows = []
    for shape, params in topk_cases(quick):
        n = torch.Size(shape).numel()
        k = params["k"]
        if params.get("dist") == "all_equal":
            x = torch.full(shape, 0.5, device=dev)
        elif params.get("dist") == "tied":
            # 16 distinct values, as sieve-bench's `dist=tied`.
            x = torch.randint(0, 16, shape, device=dev, generator=gen).float() / 16.0 - 0.5
        else:
            x = torch.rand(shape, device=dev, generator=gen) * 2.0 - 1.0
        out_elems = n // shape[-1] * k
        floor = 4 * n + 12 * out_elems
        fn = lambda: torch.topk(x, k, dim=-1, largest=True, sorted=True)
        values = fn().values
        ok = bool((values[..., 1:] <= values[..., :-1]).all()) if k > 1 else True
        rows.append(row("topk_with_indices", shape, "f32", params, "torch", floor,
                        timed(fn) if ok else None, "ok" if ok else "wrong",
                        None if ok else "torch output is not in descending order"))
        del x, values
        torch.cuda.empty_cache()
    return rows


def sample_cases(quick):
    """(shape, dtype) as sieve-bench's top_k_top_p_sample rows (k=50, p=0.9, t=0.8)."""
    if quick:
        return [((8, 4096), "f32")]
    return [((b, 128256), d) for b in (64, 256) for d in ("f32", "bf16")]


def sample_rows(quick, dev, gen):
    """The usual torch top-k/top-p sampler: temperature, topk, softmax, cumsum, mask,
    renormalise, multinomial (the draw in topk's sorted order, mapped back to token ids).
    Floor as sieve-bench counts it: the logits read once, one i64 token a row written."""
    rows = []
    k, p, t = 50, 0.9, 0.8
    for shape, dtype in sample_cases(quick):
        x = (torch.rand(shape, device=dev, generator=gen) * 8.0 - 4.0).to(
            torch.float32 if dtype == "f32" else torch.bfloat16)
        floor = x.numel() * x.element_size() + shape[0] * 8

        def fn():
            vals, ids = torch.topk(x.float() / t, k, dim=-1)
            probs = torch.softmax(vals, dim=-1)
            before = torch.cumsum(probs, dim=-1) - probs
            probs = probs.masked_fill(before >= p, 0.0)
            probs = probs / probs.sum(dim=-1, keepdim=True)
            pick = torch.multinomial(probs, 1, generator=gen)
            return ids.gather(-1, pick).squeeze(-1)

        tokens = fn()
        ok = bool(((tokens >= 0) & (tokens < shape[1])).all())
        rows.append(row("top_k_top_p_sample", shape, dtype, {"k": k, "p": p, "t": t}, "torch",
                        floor, timed(fn) if ok else None, "ok" if ok else "wrong",
                        None if ok else "a token outside the vocabulary"))
        del x
        torch.cuda.empty_cache()
    return rows


def set_rows(quick, dev, gen):
    """torch.unique(sorted=True) of n values drawn from `distinct` integers, and
    torch.searchsorted of n queries into `keys` sorted keys, as sieve-bench's rows (f32).
    Floors as sieve-bench counts them."""
    rows = []
    uniques = [((1 << 14,), 1000)] if quick else [((1 << 24,), 1 << 20), ((1 << 28,), 1 << 20),
                                                   ((1 << 28,), 1 << 24)]
    for shape, distinct in uniques:
        x = torch.randint(0, distinct, shape, device=dev, generator=gen).float()
        got = torch.unique(x, sorted=True)
        ok = bool((got[1:] > got[:-1]).all())
        floor = 4 * (x.numel() + got.numel())
        rows.append(row("unique", shape, "f32", {"distinct": distinct}, "torch", floor,
                        timed(lambda: torch.unique(x, sorted=True)) if ok else None,
                        "ok" if ok else "wrong", None if ok else "not strictly ascending"))
        # With the inverse and the counts (sieve-bench's `inverse=1`; int64 indices).
        full = lambda: torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
        values, inverse, counts = full()
        ok = bool((values[inverse] == x).all()) and int(counts.sum()) == x.numel()
        floor = 4 * (x.numel() + values.numel()) + 8 * (x.numel() + values.numel())
        rows.append(row("unique", shape, "f32", {"distinct": distinct, "inverse": 1}, "torch",
                        floor, timed(full) if ok else None, "ok" if ok else "wrong",
                        None if ok else "an inverse or count does not match"))
        del x, got, values, inverse, counts
        torch.cuda.empty_cache()
    searches = [((1 << 14,), 4096)] if quick else [((1 << 24,), 1 << 20)]
    for shape, m in searches:
        keys = torch.sort(torch.rand(m, device=dev, generator=gen) * 2.0 - 1.0).values
        q = torch.rand(shape, device=dev, generator=gen) * 2.2 - 1.1
        got = torch.searchsorted(keys, q)
        ok = bool(((got >= 0) & (got <= m)).all())
        floor = 4 * (m + q.numel()) + 8 * q.numel()
        rows.append(row("searchsorted", shape, "f32", {"keys": m}, "torch", floor,
                        timed(lambda: torch.searchsorted(keys, q)) if ok else None,
                        "ok" if ok else "wrong", None if ok else "an index outside 0..=keys"))
        del keys, q, got
        torch.cuda.empty_cache()
    return rows


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

    # `--only=topk,sample`: only those families after the copy and cumsum rows ("scan" for
    # cumprod/cummin/cummax).
    only = next((a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--only=")),
                None)
    if only is None or "scan" in only:
        rows.extend(scan_family_rows(quick, dev, gen))
    if "--scans" not in sys.argv:
        for name, family in [("filter", filter_rows), ("sort", sort_rows), ("topk", topk_rows),
                             ("sample", sample_rows), ("sets", set_rows)]:
            if only is None or name in only:
                rows.extend(family(quick, dev, gen))

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
        print(f"{r['op']:<12} {str(r['shape']):<16} {json.dumps(r['params']):<16} {r['impl']:<6} "
              f"{r['median_ms'] if r['median_ms'] is None else round(r['median_ms'], 4)} ms "
              f"{'' if r['gbps'] is None else round(r['gbps'])} GB/s {r['status']}")


if __name__ == "__main__":
    main()
