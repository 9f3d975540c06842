//! Top-k rows (`topk_with_indices`, f32, along the last dim; params `k=` and
//! `dist=all_equal` or `dist=tied`): sieve's Burn op (`strategy: auto`), the raw
//! `sieve::topk` with each strategy forced (`raw=` one of them, or `none`) at every tuning of
//! the case's sweep ([`topk_tunings`]), and stock Burn's `topk_with_indices` where it is
//! known to finish. Every output is checked in O(n) before it is timed (see [`check_topk`]).

use burn::tensor::{Int, Tensor, TensorData};
use cubecl::prelude::*;
use rand::{Rng, SeedableRng, rngs::StdRng};
use sieve::topk::{self, TopkIo, TopkOptions, TopkProblem, TopkStrategy};
use sieve::{DeviceCaps, Dtype};

use crate::case::{Case, Swept};
use crate::report::Row;
use crate::timing::Bench;

/// Stock Burn's top-k keeps a sorted list per thread, O(n k): on the H200 it took 1.07 s at
/// [2^24] k=10, did not finish within 280 s at [2^20] k=1000, and at k=1000 poisoned the
/// Vulkan device. So it runs only where `n * k` is at most a [2^24] k=10 call; every other
/// stock row is reported as not run, never timed.
const STOCK_MAX_WORK: usize = (1 << 24) * 10;

pub fn run(case: &Case, bench: &Bench<'_>) -> Vec<Row> {
    case.require_dtype(&["f32"]);
    match case.shape.len() {
        1 => run_rank::<1>(case, bench),
        2 => run_rank::<2>(case, bench),
        r => panic!("topk bench: rank {r} is not supported (1 or 2)"),
    }
}

/// Distinct values of `dist=tied` rows.
const TIED_LEVELS: u32 = 16;

fn run_rank<const D: usize>(case: &Case, bench: &Bench<'_>) -> Vec<Row> {
    let n = case.numel();
    let len = *case.shape.last().unwrap();
    let k: usize = case
        .params
        .get("k")
        .map(|v| v.parse().expect("k= takes an integer"))
        .unwrap_or(10)
        .min(len);
    // `dist=all_equal`: every value 0.5; `dist=tied`: 16 distinct values (quantized or masked
    // logits: every k-th value has thousands of ties); else uniform in [-1, 1).
    let dist = case.params.get("dist").map(String::as_str);
    let mut rng = StdRng::seed_from_u64(0x70_4b);
    let data: Vec<f32> = (0..n)
        .map(|_| match dist {
            Some("all_equal") => 0.5,
            Some("tied") => rng.random_range(0..TIED_LEVELS) as f32 / TIED_LEVELS as f32 - 0.5,
            _ => rng.random_range(-1.0f32..1.0),
        })
        .collect();
    let index_bytes = Tensor::<1, Int>::empty([1], bench.device).dtype().size() as u64;
    let out = (n / len.max(1) * k) as u64;
    let floor = 4 * n as u64 + (4 + index_bytes) * out;
    let x = bench.burn_input(
        case,
        Tensor::<D>::from_data(
            TensorData::new(data.clone(), case.shape.clone()),
            bench.device,
        ),
    );
    let dim = D - 1;
    let mut rows = Vec::new();

    // sieve through Burn.
    let row = bench.row(case, "sieve", floor, &[("strategy", "auto")]);
    let (values, indices) = sieve_burn::topk_with_indices(x.clone(), k, dim);
    let wrong = check_topk(&data, len, k, &floats(values), &ints(indices));
    rows.push(row.checked(wrong, || {
        bench.time_sieve_burn(case, || {
            drop(sieve_burn::topk_with_indices(x.clone(), k, dim))
        })
    }));

    // The input on the device once, for the `cube` row and the raw rows.
    let input = bench.client.create_from_slice(bytemuck::cast_slice(&data));

    // The same op through sieve-burn's CubeCL impl with no Dispatch and no Fusion: the Burn
    // op's time less Fusion's.
    if let Some(x) = bench.cube_tensor(input.clone(), &case.shape, burn::backend::DType::F32) {
        use sieve_burn::{SortOps, Values};
        let index_dtype = bench.device.settings().int_dtype;
        let call = || {
            let x = Values::Float(x.clone());
            let (values, indices) =
                burn_cubecl::CubeBackend::sieve_topk(x, k, dim, true, true, 0, index_dtype);
            (values.float(), indices)
        };
        let (values, indices) = call();
        let read = |h: &cubecl::server::Handle| bench.client.read_one(h.clone()).expect("read");
        let got_values: Vec<f32> =
            bytemuck::cast_slice::<u8, f32>(&read(&values.handle))[..out as usize].to_vec();
        let raw_indices = read(&indices.handle);
        let got_indices: Vec<i64> = match indices.dtype.size() {
            8 => bytemuck::pod_collect_to_vec::<u8, i64>(&raw_indices)[..out as usize].to_vec(),
            _ => bytemuck::pod_collect_to_vec::<u8, i32>(&raw_indices)[..out as usize]
                .iter()
                .map(|&i| i as i64)
                .collect(),
        };
        let wrong = check_topk(&data, len, k, &got_values, &got_indices);
        let row = bench.row(case, "cube", floor, &[]);
        rows.push(row.checked(wrong, || bench.time_raw(|| drop(call()))));
    }

    // Raw strategies, each with every tuning of the case's sweep (`topk_tunings`); `raw=`
    // names one strategy (`none`: no raw rows).
    let tunings = topk_tunings(case, bench.client);
    let values_out = bench.client.empty(4 * (out as usize).max(1));
    let indices_out = bench.client.empty(4 * (out as usize).max(1));
    let strategies = TopkStrategy::ALL.into_iter().skip(1);
    for run in case.raw_runs(strategies, TopkStrategy::name, &tunings) {
        let (strategy, tuning) = (run.strategy, run.tuning);
        let row = bench.row(case, "sieve", floor, &run.params);
        let launch = || {
            topk::topk(
                bench.client,
                TopkIo {
                    values: &input,
                    value_dtype: Dtype::F32,
                    values_out: Some(&values_out),
                    indices_out: Some(&indices_out),
                    index_dtype: Dtype::I32,
                },
                TopkProblem {
                    rows: n / len.max(1),
                    len,
                    k,
                },
                TopkOptions {
                    strategy,
                    tuning,
                    ..TopkOptions::default()
                },
            )
        };
        if let Err(e) = launch() {
            rows.push(row.untimed("skipped", e.to_string()));
            continue;
        }
        let read =
            |h: &cubecl::server::Handle| bench.client.read_one(h.clone()).expect("read back");
        let got_values: Vec<f32> =
            bytemuck::cast_slice::<u8, f32>(&read(&values_out))[..out as usize].to_vec();
        let got_indices: Vec<i64> = bytemuck::cast_slice::<u8, i32>(&read(&indices_out))
            [..out as usize]
            .iter()
            .map(|&i| i as i64)
            .collect();
        let wrong = check_topk(&data, len, k, &got_values, &got_indices);
        rows.push(row.checked(wrong, || {
            bench.time_raw(|| {
                launch().expect("top-k");
            })
        }));
    }

    // Stock Burn.
    let row = bench.row(case, "burn", floor, &[]);
    let too_much = (n * k > STOCK_MAX_WORK).then(|| {
        (
            "not run",
            format!(
                "stock Burn's top-k is O(n k) per thread: not run above n * k = {STOCK_MAX_WORK} \
                 (it did not finish within 280 s at [2^20] k=1000 on the H200)"
            ),
        )
    });
    rows.push(row.stock(bench.with_burn, too_much, |row| {
        let (values, _) = x.clone().topk_with_indices(k, dim);
        // Stock Burn's ties may go to any index: check the values only.
        let values = floats(values);
        let wrong = check_values(&data, len, k, &values);
        row.checked(wrong, || {
            bench.time_burn(|| drop(x.clone().topk_with_indices(k, dim)))
        })
    }));
    rows
}

fn floats<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().iter::<f32>().collect()
}

fn ints<const D: usize>(t: Tensor<D, Int>) -> Vec<i64> {
    t.into_data().iter::<i64>().collect()
}

/// `None` when every row's output is its exact top-k (the first `k` of a stable descending
/// sort), checked in O(len) per row: values match their indices, are in order (ties by
/// increasing index), every element above the k-th value is chosen, and the chosen ties at
/// the k-th value are the first ones in index order.
fn check_topk(
    data: &[f32],
    len: usize,
    k: usize,
    values: &[f32],
    indices: &[i64],
) -> Option<String> {
    if let Some(wrong) = check_values(data, len, k, values) {
        return Some(wrong);
    }
    for (r, row) in data.chunks(len.max(1)).enumerate() {
        if k == 0 {
            break;
        }
        let chosen = &indices[r * k..(r + 1) * k];
        let picked = &values[r * k..(r + 1) * k];
        for j in 0..k {
            let i = chosen[j];
            if i < 0 || i as usize >= len || row[i as usize].to_bits() != picked[j].to_bits() {
                return Some(format!(
                    "row {r}: slot {j} has index {i}, value {}",
                    picked[j]
                ));
            }
            if j > 0 && picked[j] == picked[j - 1] && chosen[j] <= chosen[j - 1] {
                return Some(format!("row {r}: tie at slot {j} out of index order"));
            }
        }
        let last = picked[k - 1];
        let ties = chosen.iter().filter(|&&i| row[i as usize] == last).count();
        let first_ties: Vec<i64> = (0..len)
            .filter(|&i| row[i] == last)
            .take(ties)
            .map(|i| i as i64)
            .collect();
        let chosen_ties: Vec<i64> = chosen
            .iter()
            .copied()
            .filter(|&i| row[i as usize] == last)
            .collect();
        if chosen_ties != first_ties {
            return Some(format!(
                "row {r}: ties at {last} are not the first in index order"
            ));
        }
    }
    None
}

/// `None` when every row's values are its `k` largest, in descending order (ties unchecked).
fn check_values(data: &[f32], len: usize, k: usize, values: &[f32]) -> Option<String> {
    for (r, row) in data.chunks(len.max(1)).enumerate() {
        if k == 0 {
            break;
        }
        let picked = &values[r * k..(r + 1) * k];
        if picked.windows(2).any(|w| w[0] < w[1]) {
            return Some(format!("row {r}: values not in descending order"));
        }
        let last = picked[k - 1];
        let above = row.iter().filter(|&&v| v > last).count();
        let picked_above = picked.iter().filter(|&&v| v > last).count();
        let ties_needed = k - picked_above;
        let ties_there = row.iter().filter(|&&v| v == last).count();
        if above != picked_above || ties_there < ties_needed {
            return Some(format!("row {r}: not the {k} largest values (k-th {last})"));
        }
    }
    None
}

/// The case's top-k tunings ([`Case::tunings`]): `units=`, `epu=` (keys per unit of a tile),
/// `cubes=` (cubes per pass), `min_tiles=` (fewest tiles a cube of a pass), `row_units=`
/// (units of the one-cube-per-row radix select), `row_epu=` (its keys per unit) and
/// `row_max=` (the longest row it takes), `bound=` (`bound_units_per_k`: one-row cubes try the minima bound for `k` up to their
/// units over this; 0: never), `sample=` (tiles the
/// device-wide select samples per row; 0: no sampled bound) and `sample_min=` (the shortest
/// row that tries it), `split=` (`row_split_cubes`: cut rows of the one-row select while rows
/// x chunks stay within this many cubes; 0: never), `long_split=` (`row_long_split_cubes`:
/// rows past `row_max` cut into as many chunks as fit it while rows x chunks stay within
/// this many cubes; 0: never), `unbounded=` (`row_long_unbounded`: 1 cuts rows past `row_max`
/// whose chunks have no bound to try), `chunk_min=` (the shortest chunk),
/// `merge_chunks=` (`row_merge_max_chunks`: the most chunks a cut row past `row_max` merges;
/// more select again) and `row_sample=` (0: the row cube's sampled bound off), over the
/// device's defaults, a value or several split by `/`. Each with the values it took; one
/// `([], None)` when the case names none.
fn topk_tunings(case: &Case, client: &Client) -> Vec<Swept<topk::TopkTuning>> {
    const KEYS: [&str; 16] = [
        "units",
        "epu",
        "cubes",
        "min_tiles",
        "row_units",
        "row_epu",
        "row_max",
        "bound",
        "sample",
        "sample_min",
        "split",
        "long_split",
        "unbounded",
        "chunk_min",
        "merge_chunks",
        "row_sample",
    ];
    let base = topk::TopkTuning::for_device(&DeviceCaps::of(client));
    case.tunings(&KEYS, |s| topk::TopkTuning {
        units_per_cube: s.get("units").unwrap_or(base.units_per_cube),
        elements_per_unit: s.get("epu").unwrap_or(base.elements_per_unit),
        target_cubes: s.get("cubes").unwrap_or(base.target_cubes),
        min_tiles_per_cube: s.get("min_tiles").unwrap_or(base.min_tiles_per_cube),
        row_units_per_cube: s.get("row_units").unwrap_or(base.row_units_per_cube),
        row_elements_per_unit: s.get("row_epu").unwrap_or(base.row_elements_per_unit),
        bound_units_per_k: s.get("bound").unwrap_or(base.bound_units_per_k),
        row_cube_max_len: s
            .get("row_max")
            .map_or(base.row_cube_max_len, |m| m as usize),
        sample_tiles: s.get("sample").unwrap_or(base.sample_tiles),
        sample_min_len: s
            .get("sample_min")
            .map_or(base.sample_min_len, |m| m as usize),
        row_split_cubes: s.get("split").unwrap_or(base.row_split_cubes),
        row_long_split_cubes: s.get("long_split").unwrap_or(base.row_long_split_cubes),
        row_long_unbounded: s
            .get("unbounded")
            .map_or(base.row_long_unbounded, |on| on != 0),
        row_chunk_min_len: s
            .get("chunk_min")
            .map_or(base.row_chunk_min_len, |m| m as usize),
        row_merge_max_chunks: s
            .get("merge_chunks")
            .map_or(base.row_merge_max_chunks, |m| m as usize),
        row_sample: s.get("row_sample").map_or(base.row_sample, |on| on != 0),
        ..base
    })
}
