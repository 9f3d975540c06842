//! Sort and split rows: `sort_with_indices`, `argsort`, `sort` (keys only), `stable_partition`
//! and `split_by_bit` through sieve's Burn ops, the raw sort with each strategy forced (sort
//! ops, rows along the last dim), and stock Burn's op where it has one (a host round trip in
//! Burn 0.22; skipped above 2^24 elements).
//!
//! Data: f32 uniform in [-1, 1) (never zero) or i32 uniform, both with heavy duplicates when
//! the case says `dist=all_equal` (every key 0.5 / 7) or `distinct=N` (integers from 0..N, as
//! the `unique` rows draw them). Every output is checked in O(n) before
//! it is timed: a stable sort is the unique permutation that is a permutation, orders the
//! keys, and keeps equal keys in increasing source order; the values must be the keys moved.
//!
//! Case params besides the tuning's (`sort_tunings`): `raw=` (one raw strategy, or
//! `none`), `wide=1` (the raw rows with 64-bit addresses, however small the buffers) and
//! `burn_op=0` (no Burn-op row, so a profiler's first launches are the raw rows').

use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use cubecl::prelude::*;
use rand::{Rng, SeedableRng, rngs::StdRng};
use sieve::common::address::with_wide_addressing;
use sieve::sort::{self, SortIo, SortOptions, SortOrder, SortProblem, SortStrategy, SortTuning};
use sieve::{DeviceCaps, Dtype};

use crate::case::{Case, Op, Swept};
use crate::report::Row;
use crate::timing::Bench;

/// Stock Burn sorts on the host; larger cases are reported as skipped.
const BURN_MAX: usize = 1 << 24;

pub fn run(case: &Case, bench: &Bench<'_>) -> Vec<Row> {
    case.require_dtype(&["f32", "i32"]);
    match case.shape.len() {
        1 => run_rank::<1>(case, bench),
        2 => run_rank::<2>(case, bench),
        r => panic!("{} bench: rank {r} is not supported (1 or 2)", case.op),
    }
}

fn descending(case: &Case) -> bool {
    case.params
        .get("descending")
        .is_some_and(|d| d == "true" || d == "1")
}

fn run_rank<const D: usize>(case: &Case, bench: &Bench<'_>) -> Vec<Row> {
    let n = case.numel();
    let len = *case.shape.last().unwrap();
    let all_equal = case.params.get("dist").is_some_and(|d| d == "all_equal");
    // `distinct=N`: integers drawn from 0..N (as f32 or i32), the keys `unique` rows sort.
    let distinct = case
        .params
        .contains_key("distinct")
        .then(|| case.param_or("distinct", 1u32).max(1));
    let desc = descending(case);
    let mut rng = StdRng::seed_from_u64(0x5047);
    let keys: Vec<f64> = (0..n)
        .map(|_| {
            if all_equal {
                0.5
            } else if let Some(d) = distinct {
                rng.random_range(0..d) as f64
            } else if case.dtype == "i32" {
                rng.random_range(-1_000_000i32..1_000_000) as f64
            } else {
                rng.random_range(-1.0f32..1.0) as f64
            }
        })
        .collect();
    let shape = case.shape.clone();
    let mut rows = Vec::new();
    let index_bytes = Tensor::<1, Int>::empty([1], bench.device).dtype().size() as u64;
    let key_bytes = 4u64;
    let op = case.op;
    // Floor: keys read once; keys and/or indices written once.
    let floor = match op {
        Op::Sort => 2 * key_bytes * n as u64,
        Op::Argsort => (key_bytes + index_bytes) * n as u64,
        _ => (2 * key_bytes + index_bytes) * n as u64,
    };
    let float = case.dtype == "f32";
    let x_float = float.then(|| {
        let data: Vec<f32> = keys.iter().map(|&k| k as f32).collect();
        bench.burn_input(
            case,
            Tensor::<D>::from_data(TensorData::new(data, shape.clone()), bench.device),
        )
    });
    let x_int = (!float).then(|| {
        let data: Vec<i32> = keys.iter().map(|&k| k as i32).collect();
        bench.burn_input(
            case,
            Tensor::<D, Int>::from_data(TensorData::new(data, shape.clone()), bench.device),
        )
    });
    let dim = D - 1;

    // The split's mask, uploaded once (unused by split_by_bit).
    let split_mask = Tensor::<D, Bool>::from_data(
        TensorData::new(split_flags(case, &keys), shape.clone()),
        bench.device,
    );

    let check = |values: Option<Vec<f64>>, indices: Option<Vec<i64>>| {
        check_sorted(&keys, len, desc, values.as_deref(), indices.as_deref())
    };
    // sieve through Burn (`burn_op=0`: not, so Nsight's first launches are the raw row's).
    if case.param_u32("burn_op") != Some(0) {
        let row = bench.row(case, "sieve", floor, &[("strategy", "auto")]);
        let wrong = match op {
            Op::SortWithIndices | Op::Sort | Op::Argsort => {
                let (values, indices) = if let Some(x) = &x_float {
                    sieve_sort_float(x.clone(), dim, desc, op)
                } else {
                    sieve_sort_int(x_int.clone().unwrap(), dim, desc, op)
                };
                check(values, indices)
            }
            Op::StablePartition | Op::SplitByBit => {
                let (values, indices, flags) =
                    run_split(case, x_float.clone(), x_int.clone(), &keys, bench.device);
                check_split(&keys, &flags, len, &values, &indices)
            }
            other => panic!("sort bench: {other} is not a sort op"),
        };
        rows.push(row.checked(wrong, || {
            bench.time_sieve_burn(case, || match op {
                Op::StablePartition | Op::SplitByBit => {
                    run_split_lazy(case, x_float.clone(), x_int.clone(), &split_mask);
                }
                _ => {
                    if let Some(x) = &x_float {
                        lazy_sort_float(x.clone(), dim, desc, op);
                    } else {
                        lazy_sort_int(x_int.clone().unwrap(), dim, desc, op);
                    }
                }
            })
        }));
    }

    // Raw sort strategies.
    if matches!(op, Op::SortWithIndices | Op::Sort | Op::Argsort) {
        let bits: Vec<u32> = keys
            .iter()
            .map(|&k| {
                if float {
                    (k as f32).to_bits()
                } else {
                    k as i32 as u32
                }
            })
            .collect();
        let input = bench.client.create_from_slice(bytemuck::cast_slice(&bits));
        let keys_out = bench.client.empty(4 * n.max(1));
        let indices_out = bench.client.empty(4 * n.max(1));
        // `raw=lsd` (or `onesweep`, `in_cube`, `none`): only that raw row (2^28 rows take
        // most of a minute each, mostly the data and the checks). The case's tunings, read
        // once (not inside the timed calls); `wide=1`: 64-bit addresses, however small the
        // buffers.
        let tunings = sort_tunings(case, bench.client);
        let wide = case.param_u32("wide") == Some(1);
        let strategies = [
            SortStrategy::InCube,
            SortStrategy::Lsd,
            SortStrategy::Onesweep,
        ];
        for run in case.raw_runs(strategies, SortStrategy::name, &tunings) {
            let (strategy, tuning) = (run.strategy, run.tuning);
            let row = bench.row(case, "sieve", floor, &run.params);
            let launch = || {
                let call = || {
                    sort::sort(
                        bench.client,
                        SortIo {
                            keys: &input,
                            key_dtype: if float { Dtype::F32 } else { Dtype::I32 },
                            keys_out: (op != Op::Argsort).then_some(&keys_out),
                            indices_out: (op != Op::Sort).then_some(&indices_out),
                            index_dtype: Dtype::I32,
                        },
                        SortProblem {
                            rows: n / len.max(1),
                            len,
                        },
                        if desc {
                            SortOrder::Descending
                        } else {
                            SortOrder::Ascending
                        },
                        SortOptions { strategy, tuning },
                    )
                };
                if wide {
                    with_wide_addressing(call)
                } else {
                    call()
                }
            };
            if let Err(e) = launch() {
                rows.push(row.untimed("skipped", e.to_string()));
                continue;
            }
            let read =
                |h: &cubecl::server::Handle| bench.client.read_one(h.clone()).expect("read back");
            let values = (op != Op::Argsort).then(|| {
                let raw = read(&keys_out);
                let raw: &[u32] = bytemuck::cast_slice(&raw[..4 * n]);
                raw.iter()
                    .map(|&b| {
                        if float {
                            f32::from_bits(b) as f64
                        } else {
                            b as i32 as f64
                        }
                    })
                    .collect::<Vec<f64>>()
            });
            let indices = (op != Op::Sort).then(|| {
                let raw = read(&indices_out);
                let raw: &[i32] = bytemuck::cast_slice(&raw[..4 * n]);
                raw.iter().map(|&i| i as i64).collect::<Vec<i64>>()
            });
            rows.push(row.checked(check(values, indices), || {
                bench.time_raw(|| {
                    launch().expect("sort");
                })
            }));
        }
    }

    // Stock Burn.
    let row = bench.row(case, "burn", floor, &[]);
    let not_run = if matches!(op, Op::StablePartition | Op::SplitByBit) {
        Some(("skipped", "stock Burn has no stable partition".into()))
    } else {
        (n > BURN_MAX).then(|| {
            (
                "skipped",
                format!("stock Burn sorts on the host; not run above {BURN_MAX} elements"),
            )
        })
    };
    rows.push(row.stock(bench.with_burn, not_run, |row| {
        let stock = |x_float: &Option<Tensor<D>>, x_int: &Option<Tensor<D, Int>>| {
            if let Some(x) = x_float {
                let (v, i) = if desc {
                    x.clone().sort_descending_with_indices(dim)
                } else {
                    x.clone().sort_with_indices(dim)
                };
                (floats(v), ints(i))
            } else {
                let x = x_int.clone().unwrap();
                let (v, i) = if desc {
                    x.sort_descending_with_indices(dim)
                } else {
                    x.sort_with_indices(dim)
                };
                (ints(v).into_iter().map(|v| v as f64).collect(), ints(i))
            }
        };
        let (values, _) = stock(&x_float, &x_int);
        // Stock Burn's sort is not stable: check only that the keys come out ordered.
        row.checked(check_sorted(&keys, len, desc, Some(&values), None), || {
            bench.time_burn(|| {
                let _ = stock(&x_float, &x_int);
            })
        })
    }));
    rows
}

fn floats<const D: usize>(t: Tensor<D>) -> Vec<f64> {
    t.into_data().iter::<f32>().map(|v| v as f64).collect()
}

fn ints<const D: usize>(t: Tensor<D, Int>) -> Vec<i64> {
    t.into_data().iter::<i64>().collect()
}

type Outputs = (Option<Vec<f64>>, Option<Vec<i64>>);

fn sieve_sort_float<const D: usize>(x: Tensor<D>, dim: usize, desc: bool, op: Op) -> Outputs {
    match op {
        Op::Sort => (
            Some(floats(if desc {
                sieve_burn::sort_descending(x, dim)
            } else {
                sieve_burn::sort(x, dim)
            })),
            None,
        ),
        Op::Argsort => (
            None,
            Some(ints(if desc {
                sieve_burn::argsort_descending(x, dim)
            } else {
                sieve_burn::argsort(x, dim)
            })),
        ),
        _ => {
            let (v, i) = if desc {
                sieve_burn::sort_descending_with_indices(x, dim)
            } else {
                sieve_burn::sort_with_indices(x, dim)
            };
            (Some(floats(v)), Some(ints(i)))
        }
    }
}

fn sieve_sort_int<const D: usize>(x: Tensor<D, Int>, dim: usize, desc: bool, op: Op) -> Outputs {
    let as_f64 = |v: Vec<i64>| v.into_iter().map(|v| v as f64).collect::<Vec<_>>();
    match op {
        Op::Sort => (
            Some(as_f64(ints(if desc {
                sieve_burn::sort_descending(x, dim)
            } else {
                sieve_burn::sort(x, dim)
            }))),
            None,
        ),
        Op::Argsort => (
            None,
            Some(ints(if desc {
                sieve_burn::argsort_descending(x, dim)
            } else {
                sieve_burn::argsort(x, dim)
            })),
        ),
        _ => {
            let (v, i) = if desc {
                sieve_burn::sort_descending_with_indices(x, dim)
            } else {
                sieve_burn::sort_with_indices(x, dim)
            };
            (Some(as_f64(ints(v))), Some(ints(i)))
        }
    }
}

/// The op without reading anything back (for timing); its outputs are dropped unread.
fn lazy_sort_float<const D: usize>(x: Tensor<D>, dim: usize, desc: bool, op: Op) {
    match (op, desc) {
        (Op::Sort, false) => drop(sieve_burn::sort(x, dim)),
        (Op::Sort, true) => drop(sieve_burn::sort_descending(x, dim)),
        (Op::Argsort, false) => drop(sieve_burn::argsort(x, dim)),
        (Op::Argsort, true) => drop(sieve_burn::argsort_descending(x, dim)),
        (_, false) => drop(sieve_burn::sort_with_indices(x, dim)),
        (_, true) => drop(sieve_burn::sort_descending_with_indices(x, dim)),
    }
}

fn lazy_sort_int<const D: usize>(x: Tensor<D, Int>, dim: usize, desc: bool, op: Op) {
    match (op, desc) {
        (Op::Sort, false) => drop(sieve_burn::sort(x, dim)),
        (Op::Sort, true) => drop(sieve_burn::sort_descending(x, dim)),
        (Op::Argsort, false) => drop(sieve_burn::argsort(x, dim)),
        (Op::Argsort, true) => drop(sieve_burn::argsort_descending(x, dim)),
        (_, false) => drop(sieve_burn::sort_with_indices(x, dim)),
        (_, true) => drop(sieve_burn::sort_descending_with_indices(x, dim)),
    }
}

/// The split's flags: the mask (density `density`, from a fixed seed) or bit 0 clear.
fn split_flags(case: &Case, keys: &[f64]) -> Vec<bool> {
    if case.op == Op::SplitByBit {
        keys.iter().map(|&k| (k as i64) & 1 == 0).collect()
    } else {
        let density: f64 = case
            .params
            .get("density")
            .map(|d| d.parse().unwrap())
            .unwrap_or(0.5);
        let mut rng = StdRng::seed_from_u64(0x5917);
        keys.iter().map(|_| rng.random_bool(density)).collect()
    }
}

fn run_split_lazy<const D: usize>(
    case: &Case,
    x_float: Option<Tensor<D>>,
    x_int: Option<Tensor<D, Int>>,
    mask: &Tensor<D, Bool>,
) {
    let dim = D - 1;
    if case.op == Op::SplitByBit {
        drop(sieve_burn::split_by_bit(
            x_int.expect("split_by_bit takes i32 keys"),
            0,
            dim,
        ));
    } else {
        match x_float {
            Some(x) => drop(sieve_burn::stable_partition(x, mask.clone(), dim)),
            None => drop(sieve_burn::stable_partition(
                x_int.unwrap(),
                mask.clone(),
                dim,
            )),
        }
    }
}

fn run_split<const D: usize>(
    case: &Case,
    x_float: Option<Tensor<D>>,
    x_int: Option<Tensor<D, Int>>,
    keys: &[f64],
    device: &Device,
) -> (Vec<f64>, Vec<i64>, Vec<bool>) {
    let dim = D - 1;
    let flags = split_flags(case, keys);
    let (values, indices) = if case.op == Op::SplitByBit {
        let (v, i, _) =
            sieve_burn::split_by_bit(x_int.expect("split_by_bit takes i32 keys"), 0, dim);
        (ints(v).into_iter().map(|v| v as f64).collect(), ints(i))
    } else {
        let mask = Tensor::<D, Bool>::from_data(
            TensorData::new(flags.clone(), case.shape.clone()),
            device,
        );
        match x_float {
            Some(x) => {
                let (v, i, _) = sieve_burn::stable_partition(x, mask, dim);
                (floats(v), ints(i))
            }
            None => {
                let (v, i, _) = sieve_burn::stable_partition(x_int.unwrap(), mask, dim);
                (ints(v).into_iter().map(|v| v as f64).collect(), ints(i))
            }
        }
    };
    (values, indices, flags)
}

/// `None` when each row is the stable split of its flags: selected first, both halves in
/// increasing source order, values moved.
fn check_split(
    keys: &[f64],
    flags: &[bool],
    len: usize,
    values: &[f64],
    indices: &[i64],
) -> Option<String> {
    for (r, chunk) in indices.chunks(len.max(1)).enumerate() {
        let base = r * len;
        let want: Vec<i64> = (0..len as i64)
            .filter(|&i| flags[base + i as usize])
            .chain((0..len as i64).filter(|&i| !flags[base + i as usize]))
            .collect();
        if chunk != want.as_slice() {
            return Some(format!("row {r}: indices differ from the stable split"));
        }
        for (slot, &i) in chunk.iter().enumerate() {
            if values[base + slot] != keys[base + i as usize] {
                return Some(format!("row {r} slot {slot}: value is not the source key"));
            }
        }
    }
    None
}

/// `None` when every row is sorted (PyTorch order; these keys have no NaN), the indices are a
/// permutation whose equal keys keep increasing source order, and the values are the keys
/// they point at.
fn check_sorted(
    keys: &[f64],
    len: usize,
    desc: bool,
    values: Option<&[f64]>,
    indices: Option<&[i64]>,
) -> Option<String> {
    let rows = keys.len() / len.max(1);
    for r in 0..rows {
        let base = r * len;
        let key_at = |slot: usize| -> f64 {
            match (values, indices) {
                (Some(v), _) => v[base + slot],
                (None, Some(i)) => keys[base + i[base + slot] as usize],
                _ => unreachable!(),
            }
        };
        if let Some(idx) = indices {
            let mut seen = vec![false; len];
            for slot in 0..len {
                let i = idx[base + slot];
                if i < 0 || i as usize >= len || seen[i as usize] {
                    return Some(format!(
                        "row {r}: indices are not a permutation (slot {slot})"
                    ));
                }
                seen[i as usize] = true;
                if let Some(v) = values
                    && v[base + slot] != keys[base + i as usize]
                {
                    return Some(format!("row {r} slot {slot}: value is not the indexed key"));
                }
            }
        }
        for slot in 1..len {
            let (a, b) = (key_at(slot - 1), key_at(slot));
            let ordered = if desc { a >= b } else { a <= b };
            if !ordered {
                return Some(format!(
                    "row {r}: slots {} and {slot} out of order ({a} then {b})",
                    slot - 1
                ));
            }
            if let Some(idx) = indices
                && a == b
                && idx[base + slot - 1] > idx[base + slot]
            {
                return Some(format!(
                    "row {r}: equal keys at slots {} and {slot} not in source order",
                    slot - 1
                ));
            }
        }
    }
    None
}

/// The case's sort tunings ([`Case::tunings`]): each of `units=`, `epu=` (keys per unit),
/// `bits=` (LSD digit), `in_cube_bits=` and `in_cube_epu=` (the in-cube sort's digit and keys
/// per unit), `window=` (the onesweep look-back's predecessors read at once), `parts=` and
/// `lsd_parts=` (the onesweep counting pass's and Lsd's per-tile copies of each bin),
/// `reread=` (0/1: every device-wide pass reads its keys again at staging), `planes=` (0: the
/// ranker without plane operations), `plain=` (0/1: `SortTuning::plain_float_keys`) and
/// `summed=` (`SortTuning::lsd_summed_max_tiles`; 0: every Lsd pass scans its counts),
/// `loads=` (`SortTuning::count_loads`) over
/// the device's defaults, a value or several split by `/`. Each with the values it took; one
/// `([], None)` when the case names none.
fn sort_tunings(case: &Case, client: &Client) -> Vec<Swept<SortTuning>> {
    const KEYS: [&str; 13] = [
        "units",
        "epu",
        "bits",
        "in_cube_bits",
        "in_cube_epu",
        "window",
        "parts",
        "lsd_parts",
        "reread",
        "planes",
        "plain",
        "summed",
        "loads",
    ];
    let base = SortTuning::for_device(&DeviceCaps::of(client));
    case.tunings(&KEYS, |s| SortTuning {
        units_per_cube: s.get("units").unwrap_or(base.units_per_cube),
        elements_per_unit: s.get("epu").unwrap_or(base.elements_per_unit),
        onesweep_elements_per_unit: s.get("epu").unwrap_or(base.onesweep_elements_per_unit),
        keys_only_elements_per_unit: s.get("epu").unwrap_or(base.keys_only_elements_per_unit),
        onesweep_keys_only_elements_per_unit: s
            .get("epu")
            .unwrap_or(base.onesweep_keys_only_elements_per_unit),
        radix_bits: s.get("bits").unwrap_or(base.radix_bits),
        in_cube_radix_bits: s.get("in_cube_bits").unwrap_or(base.in_cube_radix_bits),
        short_row_radix_bits: s.get("in_cube_bits").unwrap_or(base.short_row_radix_bits),
        in_cube_keys_per_unit: s.get("in_cube_epu").unwrap_or(base.in_cube_keys_per_unit),
        walk_window: s.get("window").unwrap_or(base.walk_window),
        count_parts: s.get("parts").unwrap_or(base.count_parts),
        count_loads: s.get("loads").unwrap_or(base.count_loads),
        lsd_count_parts: s.get("lsd_parts").unwrap_or(base.lsd_count_parts),
        lsd_rereads: s.get("reread").map_or(base.lsd_rereads, |r| r != 0),
        onesweep_rereads: s.get("reread").map_or(base.onesweep_rereads, |r| r != 0),
        keys_only_rereads: s.get("reread").map_or(base.keys_only_rereads, |r| r != 0),
        // `planes=0`: the one-bit-split ranker a device without plane operations runs (issue
        // 16: is the plane ranker what Vulkan loses on?).
        use_planes: s.get("planes").map_or(base.use_planes, |p| p != 0),
        plain_float_keys: s.get("plain").map_or(base.plain_float_keys, |p| p != 0),
        lsd_summed_max_tiles: s.get("summed").unwrap_or(base.lsd_summed_max_tiles),
    })
}
