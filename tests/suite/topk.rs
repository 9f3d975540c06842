//! The device top-k against its CPU twin (the first k of a stable sort): every strategy,
//! largest and smallest, sorted and unsorted, f32 (NaN, +-0.0, +-inf, heavy duplicates), i32
//! and u32 values, every index dtype the device has; k = 0, 1, len - 1, len; tiny, odd,
//! prime lengths, every length across a tile boundary, many rows; all-equal rows;
//! determinism; the radix select's pass count; the errors bad calls get.

use crate::common;

use common::*;
use cubecl::prelude::Client;
use rand::{Rng, rngs::StdRng};
use sieve::sort::reference::SortKey;
use sieve::topk::{
    self, TopkIo, TopkOptions, TopkProblem, TopkReport, TopkStrategy, TopkTuning, reference,
};
use sieve::{DeviceCaps, Dtype};

const POISON: u32 = 0xDEAD_BEEF;

const STRATEGIES: [TopkStrategy; 3] = [
    TopkStrategy::RankByCounting,
    TopkStrategy::RadixSelect,
    TopkStrategy::SortAndSlice,
];

/// The shapes a strategy runs in: the radix select runs one cube per row or device-wide
/// passes, by the row length (`TopkTuning::row_cube_max_len`), and one-row cubes (rank by
/// counting, the radix select's row cube) try the minima bound first for small `k`
/// (`TopkTuning::bound_units_per_k`), the row cube its sampled bound for larger `k`
/// (`TopkTuning::row_sample`); tests force each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Default,
    /// The minima bound tried for every `k` up to the cube's units (falling back where too
    /// many keys lie under it).
    Bound,
    /// No minima bound.
    NoBound,
    /// One cube per row, with `Bound`.
    RowCube,
    /// One cube per row, with `NoBound`: the sampled bound for every `k` it can serve.
    RowCubeSampled,
    /// One cube per row, neither bound: digit passes only.
    RowCubeDigits,
    /// One cube per chunk of 7 or more keys, as many chunks as fit (`Bound`): each chunk's
    /// top-k, merged by the candidates' sort. Rows of up to [`SPLIT_ROW_CUBE_MAX_LEN`] keys
    /// are cut whatever their chunks' length; longer rows where their chunks and candidates
    /// are no longer than that (small `k`), their top-k then the row cube again over the
    /// candidates, else device-wide.
    RowCubeSplit,
    /// `RowCubeSplit` with a row-cube limit of [`TWO_LEVEL_ROW_CUBE_MAX_LEN`]: rows of a few
    /// hundred keys take the row cube again over their candidates, themselves cut and merged.
    RowCubeTwoLevel,
    /// Device-wide passes, the sampled bound tried first (where the row is long enough).
    DeviceWide,
    /// Device-wide digit passes only (no sampled bound).
    DeviceWideDigits,
}

/// Every strategy, rank by counting with and without the bound, the radix select in every
/// shape.
const VARIANTS: [(TopkStrategy, Shape); 10] = [
    (TopkStrategy::RankByCounting, Shape::Bound),
    (TopkStrategy::RankByCounting, Shape::NoBound),
    (TopkStrategy::RadixSelect, Shape::RowCube),
    (TopkStrategy::RadixSelect, Shape::RowCubeSampled),
    (TopkStrategy::RadixSelect, Shape::RowCubeDigits),
    (TopkStrategy::RadixSelect, Shape::RowCubeSplit),
    (TopkStrategy::RadixSelect, Shape::RowCubeTwoLevel),
    (TopkStrategy::RadixSelect, Shape::DeviceWide),
    (TopkStrategy::RadixSelect, Shape::DeviceWideDigits),
    (TopkStrategy::SortAndSlice, Shape::Default),
];

/// `Shape::RowCubeSplit`'s one-cube-per-row limit: the rows past it whose chunks fit it take
/// the chunked row cube, as [2^24] at small `k` does at default tunings.
const SPLIT_ROW_CUBE_MAX_LEN: usize = 1024;

/// `Shape::RowCubeTwoLevel`'s one-cube-per-row limit: short, so that rows of a few hundred
/// keys are cut, selected again over their candidates, and those cut and merged in turn.
const TWO_LEVEL_ROW_CUBE_MAX_LEN: usize = 50;

/// The tuning that forces `shape` on top of `base` (`None`: the device's default).
fn shaped(client: &Client, base: Option<TopkTuning>, shape: Shape) -> Option<TopkTuning> {
    let tuning = base.unwrap_or_else(|| default_tuning(client));
    let row_cube = usize::MAX;
    let (row_cube_max_len, bound_units_per_k) = match shape {
        Shape::Default => return base,
        Shape::Bound => (tuning.row_cube_max_len, 1),
        Shape::NoBound => (tuning.row_cube_max_len, 0),
        Shape::RowCube => (row_cube, 1),
        Shape::RowCubeSplit => (SPLIT_ROW_CUBE_MAX_LEN, 1),
        Shape::RowCubeTwoLevel => (TWO_LEVEL_ROW_CUBE_MAX_LEN, 1),
        Shape::RowCubeSampled | Shape::RowCubeDigits => (row_cube, 0),
        Shape::DeviceWide | Shape::DeviceWideDigits => (0, tuning.bound_units_per_k),
    };
    let (row_split_cubes, row_chunk_min_len) = match shape {
        Shape::RowCubeSplit | Shape::RowCubeTwoLevel => (1 << 20, 7),
        _ => (0, tuning.row_chunk_min_len),
    };
    // The sampled bound wherever a row has the tiles for it (by default only from 2^26 keys).
    let (sample_tiles, sample_min_len) = match shape {
        Shape::DeviceWideDigits => (0, 0),
        _ => (tuning.sample_tiles, 0),
    };
    Some(TopkTuning {
        row_cube_max_len,
        bound_units_per_k,
        row_sample: shape != Shape::RowCubeDigits,
        row_split_cubes,
        // Long rows are cut as the shape cuts the others (never, or as many chunks as fit),
        // whether or not their chunks have a bound to try.
        row_long_split_cubes: row_split_cubes,
        row_long_unbounded: true,
        row_chunk_min_len,
        sample_tiles,
        sample_min_len,
        ..tuning
    })
}

fn default_tuning(client: &Client) -> TopkTuning {
    TopkTuning::for_device(&DeviceCaps::of(client))
}

/// [`common::tiny_topk_tuning`] of the test device.
fn tiny_tuning(client: &Client) -> TopkTuning {
    tiny_topk_tuning(&DeviceCaps::of(client))
}

/// Whether `strategy` can run rows of `len` (rank-by-counting has a capacity).
fn runs(client: &Client, strategy: TopkStrategy, len: usize) -> bool {
    strategy != TopkStrategy::RankByCounting
        || len <= default_tuning(client).rank_capacity(&DeviceCaps::of(client))
}

struct Got {
    bits: Vec<u32>,
    indices: Vec<i64>,
    report: TopkReport,
}

/// Runs one top-k of 32-bit values given as raw bits; outputs start poisoned.
fn run(
    client: &Client,
    bits: &[u32],
    dtype: Dtype,
    problem: TopkProblem,
    options: TopkOptions,
    index_dtype: Dtype,
) -> Got {
    let out = problem.rows * problem.k;
    let values = upload(client, bits);
    let values_out = poisoned(client, out, POISON);
    let indices_out = match index_dtype {
        Dtype::I64 => poisoned(client, out, POISON as u64 | (1 << 40)),
        _ => poisoned(client, out, POISON),
    };
    let report = topk::topk(
        client,
        TopkIo {
            values: &values,
            value_dtype: dtype,
            values_out: Some(&values_out),
            indices_out: Some(&indices_out),
            index_dtype,
        },
        problem,
        options,
    )
    .unwrap_or_else(|e| panic!("topk failed: {e}"));
    let indices = match index_dtype {
        Dtype::I32 => download::<i32>(client, indices_out, out)
            .into_iter()
            .map(i64::from)
            .collect(),
        Dtype::U32 => download::<u32>(client, indices_out, out)
            .into_iter()
            .map(i64::from)
            .collect(),
        Dtype::I64 => download::<i64>(client, indices_out, out),
        other => panic!("no index dtype {other}"),
    };
    Got {
        bits: download(client, values_out, out),
        indices,
        report,
    }
}

/// Checks one top-k against the reference: sorted, the exact indices (the stable order is
/// unique); unsorted, the same set per row. Values must be the input's bits at the indices.
fn check<T: SortKey>(
    got: &Got,
    keys: &[T],
    bits: &[u32],
    problem: TopkProblem,
    options: &TopkOptions,
    case: &str,
) {
    let TopkProblem { rows, len, k } = problem;
    let want = reference::topk_rows(keys, rows, len, k, options.largest);
    let want: Vec<i64> = want.iter().map(|&i| i as i64).collect();
    let mut indices = got.indices.clone();
    let mut expected = want.clone();
    if !options.sorted {
        for r in 0..rows {
            indices[r * k..(r + 1) * k].sort_unstable();
            expected[r * k..(r + 1) * k].sort_unstable();
        }
    }
    assert_same(&indices, &expected, &format!("{case}: indices"));
    let want_bits: Vec<u32> = got
        .indices
        .iter()
        .enumerate()
        .map(|(slot, &i)| bits[(slot / k) * len + i as usize])
        .collect();
    assert_same(&got.bits, &want_bits, &format!("{case}: values (bits)"));
}

/// Every strategy (that fits), both directions, each `k`, sorted; and unsorted for the
/// middle `k`.
#[allow(clippy::too_many_arguments)]
fn check_every_strategy<T: SortKey>(
    client: &Client,
    keys: &[T],
    bits: &[u32],
    dtype: Dtype,
    rows: usize,
    len: usize,
    ks: &[usize],
    case: &str,
) {
    for (strategy, shape) in VARIANTS {
        if !runs(client, strategy, len) {
            continue;
        }
        for largest in [true, false] {
            for (i, &k) in ks.iter().enumerate() {
                for sorted in [true, false] {
                    if !sorted && i != ks.len() / 2 {
                        continue;
                    }
                    let options = TopkOptions {
                        largest,
                        sorted,
                        strategy,
                        tuning: shaped(client, None, shape),
                    };
                    let problem = TopkProblem { rows, len, k };
                    let got = run(client, bits, dtype, problem, options, Dtype::I32);
                    assert_eq!(got.report.strategy, strategy, "{case}: strategy that ran");
                    let case = format!(
                        "{case}: [{rows}, {len}] k {k} {} {shape:?} largest {largest} sorted \
                         {sorted}",
                        strategy.name()
                    );
                    check(&got, keys, bits, problem, &options, &case);
                }
            }
        }
    }
}

/// `k` = 0, 1, a middle one, len - 1, len (those that exist).
fn ks_for(len: usize) -> Vec<usize> {
    let mut ks = vec![0, 1, len / 2, len.saturating_sub(1), len];
    ks.retain(|&k| k <= len);
    ks.dedup();
    ks
}

fn special_floats(rng: &mut StdRng, n: usize) -> Vec<f32> {
    let specials = [
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7FC0_1234),
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0,
        -1.0,
        f32::MIN_POSITIVE,
        -f32::MAX,
        f32::MAX,
    ];
    (0..n)
        .map(|_| {
            if rng.random_bool(0.3) {
                specials[rng.random_range(0..specials.len())]
            } else {
                rng.random_range(-4i32..4) as f32 * 0.5
            }
        })
        .collect()
}

#[test]
fn floats_with_specials_every_strategy() {
    let _serial = serial();
    let client = client();
    let (mut rng, seed) = rng("floats_with_specials_every_strategy");
    for (rows, len) in [(1, 0), (2, 1), (3, 31), (2, 33), (1, 97), (2, 4097)] {
        let keys = special_floats(&mut rng, rows * len);
        let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
        let mut ks = ks_for(len);
        if len > 100 {
            ks.insert(1, 10);
        }
        check_every_strategy(
            &client,
            &keys,
            &bits,
            Dtype::F32,
            rows,
            len,
            &ks,
            &format!("seed {seed}: f32"),
        );
    }
}

#[test]
fn random_floats_no_ties() {
    let _serial = serial();
    let client = client();
    let (mut rng, seed) = rng("random_floats_no_ties");
    let (rows, len) = (2, 3001);
    let keys: Vec<f32> = (0..rows * len)
        .map(|_| rng.random_range(-1e6f32..1e6))
        .collect();
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    check_every_strategy(
        &client,
        &keys,
        &bits,
        Dtype::F32,
        rows,
        len,
        &[1, 10, 1500, 3000],
        &format!("seed {seed}: f32"),
    );
}

#[test]
fn integers_with_duplicates() {
    let _serial = serial();
    let client = client();
    let (mut rng, seed) = rng("integers_with_duplicates");
    let (rows, len) = (3, 1031);
    let signed: Vec<i32> = (0..rows * len)
        .map(|_| {
            if rng.random_bool(0.6) {
                rng.random_range(-3..3)
            } else {
                rng.random()
            }
        })
        .collect();
    let unsigned: Vec<u32> = signed.iter().map(|&k| k as u32).collect();
    let ks = [1, 7, 515, 1030];
    check_every_strategy(
        &client,
        &signed,
        &unsigned,
        Dtype::I32,
        rows,
        len,
        &ks,
        &format!("seed {seed}: i32"),
    );
    check_every_strategy(
        &client,
        &unsigned,
        &unsigned,
        Dtype::U32,
        rows,
        len,
        &ks,
        &format!("seed {seed}: u32"),
    );
}

#[test]
fn all_equal_sorted_reversed_and_all_nan() {
    let _serial = serial();
    let client = client();
    let len = 2003;
    let inputs: [(&str, Vec<f32>); 5] = [
        ("all equal", vec![2.5; len]),
        (
            "all -0.0 and +0.0",
            (0..len)
                .map(|i| if i % 3 == 0 { -0.0 } else { 0.0 })
                .collect(),
        ),
        (
            "all NaN",
            (0..len)
                .map(|i| if i % 2 == 0 { f32::NAN } else { -f32::NAN })
                .collect(),
        ),
        ("sorted", (0..len).map(|i| i as f32).collect()),
        ("reversed", (0..len).rev().map(|i| i as f32).collect()),
    ];
    for (name, keys) in inputs {
        let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
        check_every_strategy(
            &client,
            &keys,
            &bits,
            Dtype::F32,
            1,
            len,
            &[1, 1000, 2002],
            name,
        );
    }
}

#[test]
fn every_length_across_a_tile_boundary() {
    let _serial = serial();
    let client = client();
    let (mut rng, seed) = rng("every_length_across_a_tile_boundary");
    let tuning = tiny_tuning(&client);
    let tile = tuning.tile();
    for len in (tile - 2)..=(2 * tile + 2) {
        let rows = 2;
        let keys: Vec<i32> = (0..rows * len).map(|_| rng.random_range(-5..5)).collect();
        let bits: Vec<u32> = keys.iter().map(|&k| k as u32).collect();
        for (strategy, shape) in VARIANTS {
            if strategy != TopkStrategy::RadixSelect {
                continue;
            }
            for k in [1, len / 3 + 1, len - 1] {
                let options = TopkOptions {
                    largest: k % 2 == 0,
                    sorted: true,
                    strategy,
                    tuning: shaped(&client, Some(tuning), shape),
                };
                let problem = TopkProblem { rows, len, k };
                let got = run(&client, &bits, Dtype::I32, problem, options, Dtype::U32);
                let case = format!("seed {seed}: len {len} k {k} {} {shape:?}", strategy.name());
                check(&got, &keys, &bits, problem, &options, &case);
            }
        }
    }
}

#[test]
fn candidates_shrink_over_many_tiles() {
    let _serial = serial();
    // Long rows of tiny tiles with keys that share their high digits in different amounts,
    // so the radix select appends candidates in passes 1 and 2 from many cubes, skips the
    // passes whose digit a whole row shares (rows 1 to 3), and does both in one launch. In
    // row 4 all but one key in 97 share their first three bytes, so where `k` falls among them
    // the second pass appends nearly every key (each cube's staged candidates fill its
    // staging tile again and again and go out in many blocks) and the later passes count all
    // of them again: a candidate lost below the boundary moves it.
    let client = client();
    let (mut rng, seed) = rng("candidates_shrink_over_many_tiles");
    let tuning = tiny_tuning(&client);
    let (rows, len) = (5, 5000);
    let keys: Vec<u32> = (0..rows * len)
        .map(|i| match i / len {
            0 => rng.random(),
            1 => 0x1234_0000 | rng.random_range(0..0x1_0000),
            2 => 0xAB00_0000 | rng.random_range(0..0x300),
            3 => 0x5555_5555,
            _ if i % 97 == 0 => rng.random(),
            _ => 0x7700_0000 | rng.random_range(0..0x100),
        })
        .collect();
    let variants = [
        (TopkStrategy::RadixSelect, Shape::DeviceWide),
        (TopkStrategy::RadixSelect, Shape::DeviceWideDigits),
        (TopkStrategy::RadixSelect, Shape::RowCube),
        (TopkStrategy::RadixSelect, Shape::RowCubeDigits),
    ];
    for (strategy, shape) in variants {
        for k in [1, 37, 2500, 4999] {
            for largest in [true, false] {
                let options = TopkOptions {
                    largest,
                    sorted: true,
                    strategy,
                    tuning: shaped(&client, Some(tuning), shape),
                };
                let problem = TopkProblem { rows, len, k };
                let got = run(&client, &keys, Dtype::U32, problem, options, Dtype::I32);
                let case = format!(
                    "seed {seed}: k {k} largest {largest} {} {shape:?}",
                    strategy.name()
                );
                check(&got, &keys, &keys, problem, &options, &case);
            }
        }
    }
}

#[test]
fn sampled_bound_and_its_fallback() {
    let _serial = serial();
    // The device-wide select's sampled bound (16 evenly spaced tiles of the passes' shape a
    // row) where it answers (random keys; all equal: the ties fill the gather's capacity; few
    // distinct values) and where it must fall back to the digit passes: rows whose sampled
    // tiles hold the row's best keys (the bound is reached by fewer than `k` keys) or its
    // worst (more keys lie below it than the gather holds), each row beside the others in one
    // call; both directions, sorted and not; the same rows without the sample agree.
    let client = client();
    let (mut rng, seed) = rng("sampled_bound_and_its_fallback");
    let tiny = tiny_tuning(&client);
    let tile = tiny.units_per_cube as usize * tiny.elements_per_unit as usize;
    let len = 400 * tile + 5;
    // As `Run::sample_plan` takes them: 16 of the 400 whole tiles, every 25th.
    let sampled = |i: usize| {
        let t = i % len / tile;
        t < 400 && t.is_multiple_of(25)
    };
    let rows = 5;
    let keys: Vec<f32> = (0..rows * len)
        .map(|i| match (i / len, sampled(i)) {
            (0, _) => rng.random_range(-1.0f32..1.0),
            (1, true) => rng.random_range(10.0f32..11.0),
            (2, true) => rng.random_range(-11.0f32..-10.0),
            (1 | 2, false) => rng.random_range(-1.0f32..1.0),
            (3, _) => 0.25,
            _ => rng.random_range(0i32..4) as f32,
        })
        .collect();
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    for k in [1, 30, 100, 500] {
        for largest in [true, false] {
            for sorted in [true, false] {
                for sample_tiles in [16, 0] {
                    let options = TopkOptions {
                        largest,
                        sorted,
                        strategy: TopkStrategy::RadixSelect,
                        tuning: Some(TopkTuning {
                            row_cube_max_len: 0,
                            sample_tiles,
                            sample_min_len: 0,
                            ..tiny
                        }),
                    };
                    let problem = TopkProblem { rows, len, k };
                    let got = run(&client, &bits, Dtype::F32, problem, options, Dtype::I32);
                    let case = format!(
                        "seed {seed}: [{rows}, {len}] k {k} largest {largest} sorted {sorted} \
                         sample_tiles {sample_tiles}"
                    );
                    assert_eq!(got.report.sampled_bound, sample_tiles > 0, "{case}");
                    check(&got, &keys, &bits, problem, &options, &case);
                }
            }
        }
    }
    // At the device's default tiles (the sample's least of 16 whole tiles a row), shorter
    // rows than the default `sample_min_len` let in: random keys, all equal, heavy ties.
    let base = default_tuning(&client);
    let len = 17 * base.tile() + 3;
    let keys: Vec<f32> = (0..3 * len)
        .map(|i| match i / len {
            0 => rng.random_range(-1.0f32..1.0),
            1 => -0.0,
            _ => rng.random_range(0i32..5) as f32,
        })
        .collect();
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    for k in [1, 64, 700] {
        for sample_tiles in [base.sample_tiles, 0] {
            let options = TopkOptions {
                strategy: TopkStrategy::RadixSelect,
                tuning: Some(TopkTuning {
                    row_cube_max_len: 0,
                    sample_tiles,
                    sample_min_len: 0,
                    ..base
                }),
                ..TopkOptions::default()
            };
            let problem = TopkProblem { rows: 3, len, k };
            let got = run(&client, &bits, Dtype::F32, problem, options, Dtype::I32);
            let case = format!("seed {seed}: default tiles [3, {len}] k {k} {sample_tiles}");
            assert_eq!(got.report.sampled_bound, sample_tiles > 0, "{case}");
            check(&got, &keys, &bits, problem, &options, &case);
        }
    }
    // Only rows of `sample_min_len` keys or more try it.
    for (sample_min_len, tried) in [(len, true), (len + 1, false)] {
        let options = TopkOptions {
            strategy: TopkStrategy::RadixSelect,
            tuning: Some(TopkTuning {
                row_cube_max_len: 0,
                sample_min_len,
                ..base
            }),
            ..TopkOptions::default()
        };
        let problem = TopkProblem {
            rows: 3,
            len,
            k: 64,
        };
        let got = run(&client, &bits, Dtype::F32, problem, options, Dtype::I32);
        let case = format!("seed {seed}: [3, {len}] sample_min_len {sample_min_len}");
        assert_eq!(got.report.sampled_bound, tried, "{case}");
        check(&got, &keys, &bits, problem, &options, &case);
    }
}

#[test]
fn row_sampled_bound_and_its_fallback() {
    let _serial = serial();
    // The row cube's sampled bound (one key a unit at `floor(u * len / units)`) at the
    // device's default tiles, for `k` above the minima bound's limit: where it answers
    // (random keys with NaN and +-0.0; few distinct values: the bound is a common key whose
    // ties fit the tile; sorted and reversed rows) and where it must fall back to the digit
    // sweeps: rows whose sampled keys are the row's largest (for top-k fewer than `k` keys
    // reach the bound; for bottom-k the keys under it overflow the tile) or smallest (the
    // reverse), all-equal rows (the whole row under the bound). Each row beside the others in
    // one call; both directions, sorted and not; the same rows without the sample agree.
    let client = client();
    let (mut rng, seed) = rng("row_sampled_bound_and_its_fallback");
    let base = default_tuning(&client);
    let units = base.row_units_per_cube as usize;
    // Two row tiles and a few keys: the adversarial rows' keys under the bound overflow one.
    let len = 2 * units * base.row_elements_per_unit as usize + 5;
    let sampled = |p: usize| (0..units).any(|u| u * len / units == p);
    let rows = 8;
    let keys: Vec<f32> = (0..rows * len)
        .map(|i| {
            let p = i % len;
            match (i / len, sampled(p)) {
                (0, _) => match rng.random_range(0..8) {
                    0 => f32::NAN,
                    1 => -0.0,
                    2 => 0.0,
                    _ => rng.random_range(-1.0f32..1.0),
                },
                (1, true) => rng.random_range(10.0f32..11.0),
                (2, true) => rng.random_range(-11.0f32..-10.0),
                (1 | 2, false) => rng.random_range(-1.0f32..1.0),
                (3, _) => rng.random_range(0i32..4) as f32,
                (4, _) => 0.5,
                (5, _) => p as f32,
                (6, _) => -(p as f32),
                _ => rng.random_range(-1.0f32..1.0),
            }
        })
        .collect();
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    for k in [units / 4 + 1, units / 2, 2 * units] {
        for largest in [true, false] {
            for sorted in [true, false] {
                for row_sample in [true, false] {
                    let options = TopkOptions {
                        largest,
                        sorted,
                        strategy: TopkStrategy::RadixSelect,
                        tuning: Some(TopkTuning {
                            row_cube_max_len: usize::MAX,
                            row_split_cubes: 0,
                            row_sample,
                            ..base
                        }),
                    };
                    let problem = TopkProblem { rows, len, k };
                    let got = run(&client, &bits, Dtype::F32, problem, options, Dtype::I32);
                    let case = format!(
                        "seed {seed}: [{rows}, {len}] k {k} largest {largest} sorted {sorted} \
                         row_sample {row_sample}"
                    );
                    check(&got, &keys, &bits, problem, &options, &case);
                }
            }
        }
    }
}

#[test]
fn minima_bound_and_its_fallback() {
    let _serial = serial();
    // The minima bound of both one-row cubes (rank by counting; the radix select's row cube,
    // with tiny tiles: a plane of units, so the bound holds at most that many keys): rows of
    // random keys (few keys under the bound: it answers), rows where many keys tie with the
    // bound or lie under it (it falls back), each `k` the bound may take and more, rows
    // shorter than the units (units that read nothing), both directions, sorted and not; the
    // same rows with the bound off must agree.
    let client = client();
    let (mut rng, seed) = rng("minima_bound_and_its_fallback");
    let tiny = tiny_tuning(&client);
    let units = tiny.row_units_per_cube as usize;
    for len in [units / 2 + 1, units, 3 * units + 5, 1000] {
        let rows = 6;
        let keys: Vec<f32> = (0..rows * len)
            .map(|i| match i / len {
                // Distinct-ish random keys.
                0 | 1 => rng.random_range(-1.0f32..1.0),
                // A few values, heavy ties.
                2 => rng.random_range(0i32..3) as f32,
                // Two keys under every other: the bound is the common key above them.
                3 => {
                    if i % len == len / 3 || i % len == len - 1 {
                        -f32::INFINITY
                    } else {
                        0.5
                    }
                }
                // One common key with a few random keys on either side of it anywhere in
                // the row (the last position too): a tied row with keys that outrank the
                // bound, however many ties came before them.
                4 => {
                    if rng.random_range(0..16) == 0 || i % len == len - 1 {
                        rng.random_range(-2.0f32..2.0)
                    } else {
                        1.0
                    }
                }
                // NaN (largest) and -0.0 / +0.0 (equal) scattered over random keys.
                _ => match rng.random_range(0..6) {
                    0 => f32::NAN,
                    1 => -0.0,
                    2 => 0.0,
                    _ => rng.random_range(-1.0f32..1.0),
                },
            })
            .collect();
        let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
        let mut ks = vec![1, 2, units / 2, units.min(len), len / 8, len / 2];
        ks.sort_unstable();
        ks.dedup();
        for strategy in [TopkStrategy::RadixSelect, TopkStrategy::RankByCounting] {
            for &k in ks.iter().filter(|&&k| k >= 1) {
                for largest in [true, false] {
                    for sorted in [true, false] {
                        for bound_units_per_k in [1, 0] {
                            let options = TopkOptions {
                                largest,
                                sorted,
                                strategy,
                                tuning: Some(TopkTuning {
                                    row_cube_max_len: usize::MAX,
                                    bound_units_per_k,
                                    ..tiny
                                }),
                            };
                            let problem = TopkProblem { rows, len, k };
                            let got = run(&client, &bits, Dtype::F32, problem, options, Dtype::I32);
                            let case = format!(
                                "seed {seed}: [{rows}, {len}] k {k} {} largest {largest} \
                                 sorted {sorted} bound_units_per_k {bound_units_per_k}",
                                strategy.name()
                            );
                            check(&got, &keys, &bits, problem, &options, &case);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn many_short_rows() {
    let _serial = serial();
    let client = client();
    let (mut rng, seed) = rng("many_short_rows");
    let (rows, len, k) = (66_000, 5, 2);
    let keys: Vec<f32> = (0..rows * len)
        .map(|_| rng.random_range(-3i32..3) as f32)
        .collect();
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    // One cube per row (rank, sort) or per tile (tiny tiles: one per row): grids past 65,535
    // cubes; the per-row kernels run 66,000 units.
    for (strategy, shape) in VARIANTS {
        let options = TopkOptions {
            largest: true,
            sorted: true,
            strategy,
            tuning: shaped(&client, Some(tiny_tuning(&client)), shape),
        };
        let problem = TopkProblem { rows, len, k };
        let got = run(&client, &bits, Dtype::F32, problem, options, Dtype::I32);
        check(
            &got,
            &keys,
            &bits,
            problem,
            &options,
            &format!("seed {seed}: {} {shape:?}", strategy.name()),
        );
    }
}

#[test]
fn index_dtypes() {
    let _serial = serial();
    let client = client();
    let (mut rng, seed) = rng("index_dtypes");
    let (rows, len, k) = (2, 300, 17);
    let keys = special_floats(&mut rng, rows * len);
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    let mut dtypes = vec![Dtype::I32, Dtype::U32];
    if DeviceCaps::of(&client).supports(Dtype::I64) {
        dtypes.push(Dtype::I64);
    }
    for index_dtype in dtypes {
        for strategy in STRATEGIES {
            let options = TopkOptions {
                strategy,
                ..TopkOptions::default()
            };
            let problem = TopkProblem { rows, len, k };
            let got = run(&client, &bits, Dtype::F32, problem, options, index_dtype);
            let case = format!("seed {seed}: {index_dtype} {}", strategy.name());
            check(&got, &keys, &bits, problem, &options, &case);
        }
    }
}

#[test]
fn deterministic_and_one_output_only() {
    let _serial = serial();
    let client = client();
    let (mut rng, seed) = rng("deterministic_and_one_output_only");
    let len = 50_000;
    let k = 1000;
    let keys: Vec<f32> = (0..len).map(|_| rng.random_range(0..2000) as f32).collect();
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    let want = reference::topk_rows(&keys, 1, len, k, true);
    let input = upload(&client, &bits);
    for strategy in [TopkStrategy::RadixSelect, TopkStrategy::SortAndSlice] {
        let once = |values: bool| {
            let out = poisoned(&client, k, POISON);
            topk::topk(
                &client,
                TopkIo {
                    values: &input,
                    value_dtype: Dtype::F32,
                    values_out: values.then_some(&out),
                    indices_out: (!values).then_some(&out),
                    index_dtype: Dtype::U32,
                },
                TopkProblem { rows: 1, len, k },
                TopkOptions {
                    strategy,
                    ..TopkOptions::default()
                },
            )
            .expect("topk failed");
            download::<u32>(&client, out, k)
        };
        let indices = once(false);
        assert_eq!(indices, once(false), "{}: two runs differ", strategy.name());
        let want_indices: Vec<u32> = want.iter().map(|&i| i as u32).collect();
        assert_same(
            &indices,
            &want_indices,
            &format!("seed {seed}: indices only"),
        );
        let want_bits: Vec<u32> = want.iter().map(|&i| bits[i]).collect();
        assert_same(
            &once(true),
            &want_bits,
            &format!("seed {seed}: values only"),
        );
    }
}

#[test]
fn radix_select_reports_its_counting_passes() {
    let _serial = serial();
    let client = client();
    let (mut rng, seed) = rng("radix_select_reports_its_counting_passes");
    let len = 65_536;
    let keys: Vec<f32> = (0..len).map(|_| rng.random()).collect();
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    let options = TopkOptions {
        strategy: TopkStrategy::RadixSelect,
        ..TopkOptions::default()
    };
    let problem = TopkProblem {
        rows: 1,
        len,
        k: 10,
    };
    let got = run(&client, &bits, Dtype::F32, problem, options, Dtype::I32);
    check(
        &got,
        &keys,
        &bits,
        problem,
        &options,
        &format!("seed {seed}"),
    );
    // One per 8-bit digit of the key in the one-cube-per-row select, the most it runs (the
    // host does not learn which a row skipped); k = len needs none.
    assert_eq!(got.report.counting_passes, 4);
    // Device-wide passes take 11, 11 and 10 bits of a 32-bit key in rows of 2^16 keys or more
    // (this row), 8-bit digits in shorter ones.
    let wide = TopkOptions {
        tuning: Some(TopkTuning {
            row_cube_max_len: 1024,
            row_long_split_cubes: 0,
            ..default_tuning(&client)
        }),
        ..options
    };
    let got = run(&client, &bits, Dtype::F32, problem, wide, Dtype::I32);
    check(
        &got,
        &keys,
        &bits,
        problem,
        &wide,
        &format!("seed {seed}: device-wide"),
    );
    assert_eq!(got.report.counting_passes, 3);
    let equal = vec![7u32; 100];
    let problem = TopkProblem {
        rows: 1,
        len: 100,
        k: 3,
    };
    let got = run(&client, &equal, Dtype::U32, problem, options, Dtype::I32);
    check(&got, &equal, &equal, problem, &options, "all equal");
    assert_eq!(got.report.counting_passes, 4);
    let problem = TopkProblem {
        rows: 1,
        len: 100,
        k: 100,
    };
    let got = run(&client, &equal, Dtype::U32, problem, options, Dtype::I32);
    check(&got, &equal, &equal, problem, &options, "k = len");
    assert_eq!(got.report.counting_passes, 0);
}

/// Rows past the row cube's limit take it, cut into as many chunks as fit it, where the
/// long-row budget (`row_long_split_cubes`) has the cubes, the candidates fill at most half
/// of it and each chunk has a bound to try (or `row_long_unbounded`), past what
/// `row_split_cubes` allows; else
/// device-wide passes. Which ran shows in the counting passes (4 in the row cube, 3
/// device-wide in rows of 2^16 keys or more); the chunks are merged or selected again by
/// `row_merge_max_chunks`.
#[test]
fn long_rows_cut_within_the_long_row_budget() {
    let _serial = serial();
    let client = client();
    let (mut rng, seed) = rng("long_rows_cut_within_the_long_row_budget");
    // 18 chunks of 3,889 keys a row fit a limit of 4,096: 36 cubes for the two rows.
    let (rows, len, max_len) = (2usize, 70_000usize, 4096usize);
    let keys: Vec<f32> = (0..rows * len)
        .map(|i| match rng.random_range(0..8) {
            0 if i % 3 == 0 => f32::NAN,
            0 => -0.0,
            1 => 0.0,
            2..=4 => rng.random_range(0..40) as f32 * 0.5,
            _ => rng.random_range(-1.0f32..1.0),
        })
        .collect();
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    for (k, long_cubes, merge_max, passes) in [
        (1, 36, 16, 4),
        (7, 36, 16, 4),
        (100, 64, 16, 4),
        (100, 64, 32, 4),
        // 18 x 150 candidates fill more than half a row cube; 18 x 300 do not fit one.
        (150, 64, 16, 3),
        (300, 64, 16, 3),
        // Too few cubes for the 36 chunks.
        (7, 35, 16, 3),
        (7, 0, 16, 3),
    ] {
        for largest in [true, false] {
            let options = TopkOptions {
                largest,
                sorted: true,
                strategy: TopkStrategy::RadixSelect,
                tuning: Some(TopkTuning {
                    row_cube_max_len: max_len,
                    row_split_cubes: 4,
                    row_long_split_cubes: long_cubes,
                    row_merge_max_chunks: merge_max,
                    row_long_unbounded: true,
                    ..default_tuning(&client)
                }),
            };
            let problem = TopkProblem { rows, len, k };
            let got = run(&client, &bits, Dtype::F32, problem, options, Dtype::I32);
            let case = format!(
                "seed {seed}: k {k} long-row cubes {long_cubes} merge max {merge_max} largest \
                 {largest}"
            );
            check(&got, &keys, &bits, problem, &options, &case);
            assert_eq!(got.report.counting_passes, passes, "{case}");
        }
    }
    // Chunks with no bound to try (no minima bound, no sampled bound): the device-wide passes
    // (3) unless `row_long_unbounded`; chunks with the minima bound, the row cube (4). And the
    // sampled bound's side: 256-unit row cubes sample 256 keys of each chunk of ~3,889, whose
    // odds at k = 100 need room for ~805 keys under the bound: a tile of 4 keys a unit has it
    // (the row cube), one of 2 does not (device-wide).
    let base = default_tuning(&client);
    let (units, epu) = (base.row_units_per_cube, base.row_elements_per_unit);
    for (k, bound_units_per_k, row_sample, (units, epu), unbounded, passes) in [
        (100, 0, false, (units, epu), false, 3),
        (100, 0, false, (units, epu), true, 4),
        (7, 1, false, (units, epu), false, 4),
        (100, 0, true, (256, 4), false, 4),
        (100, 0, true, (256, 2), false, 3),
    ] {
        let options = TopkOptions {
            largest: true,
            sorted: true,
            strategy: TopkStrategy::RadixSelect,
            tuning: Some(TopkTuning {
                row_cube_max_len: max_len,
                row_split_cubes: 4,
                row_long_split_cubes: 64,
                bound_units_per_k,
                row_sample,
                row_units_per_cube: units,
                row_elements_per_unit: epu,
                row_long_unbounded: unbounded,
                ..base
            }),
        };
        let problem = TopkProblem { rows, len, k };
        let got = run(&client, &bits, Dtype::F32, problem, options, Dtype::I32);
        let case = format!(
            "seed {seed}: k {k} bound {bound_units_per_k} sample {row_sample} row cube \
             {units} x {epu} unbounded {unbounded}"
        );
        check(&got, &keys, &bits, problem, &options, &case);
        assert_eq!(got.report.counting_passes, passes, "{case}");
    }
}

#[test]
fn auto_rule_and_names() {
    let _serial = serial();
    let client = client();
    let names: Vec<&str> = TopkStrategy::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        ["auto", "rank_by_counting", "radix_select", "sort_and_slice"]
    );
    let (mut rng, seed) = rng("auto_rule_and_names");
    let caps = DeviceCaps::of(&client);
    let sort_capacity = sieve::sort::SortTuning::for_device(&caps).in_cube_capacity(&caps);
    let long = sort_capacity + 1;
    let cases = [
        (100, 5, TopkStrategy::RankByCounting),
        (long, 5, TopkStrategy::RadixSelect),
        (long, long - 1, TopkStrategy::SortAndSlice),
    ];
    for (len, k, expected) in cases {
        let keys: Vec<u32> = (0..len).map(|_| rng.random_range(0..1000)).collect();
        let problem = TopkProblem { rows: 1, len, k };
        let options = TopkOptions::default();
        let got = run(&client, &keys, Dtype::U32, problem, options, Dtype::I32);
        assert_eq!(got.report.strategy, expected, "len {len} k {k}");
        check(
            &got,
            &keys,
            &keys,
            problem,
            &options,
            &format!("seed {seed}: auto len {len}"),
        );
    }
}

#[test]
fn bad_calls_get_clear_errors() {
    let _serial = serial();
    let client = client();
    let values = client.empty(64);
    let io = TopkIo {
        values: &values,
        value_dtype: Dtype::F32,
        values_out: None,
        indices_out: None,
        index_dtype: Dtype::I32,
    };
    let problem = TopkProblem {
        rows: 1,
        len: 4,
        k: 5,
    };
    let call = |io: TopkIo<'_>, problem: TopkProblem, strategy: TopkStrategy| {
        topk::topk(
            &client,
            io,
            problem,
            TopkOptions {
                strategy,
                ..TopkOptions::default()
            },
        )
        .expect_err("refused")
        .to_string()
    };
    let e = call(io, problem, TopkStrategy::Auto);
    assert!(e.contains("problem.k") && e.contains("0..=4"), "{e}");
    let ok = TopkProblem { k: 2, ..problem };
    // Every value dtype is selected; 64-bit values only by sorting (tests/suite/dtypes_sort.rs).
    let e = call(
        TopkIo {
            value_dtype: Dtype::I64,
            ..io
        },
        ok,
        TopkStrategy::RadixSelect,
    );
    assert!(
        e.contains("options.strategy") && e.contains("sort_and_slice"),
        "{e}"
    );
    let e = call(
        TopkIo {
            index_dtype: Dtype::F32,
            ..io
        },
        ok,
        TopkStrategy::Auto,
    );
    assert!(e.contains("io.index_dtype"), "{e}");
    let e = call(
        io,
        TopkProblem {
            rows: 1,
            len: 1 << 20,
            k: 1,
        },
        TopkStrategy::RankByCounting,
    );
    assert!(
        e.contains("problem.len") && e.contains("rank_by_counting"),
        "{e}"
    );
    if !DeviceCaps::of(&client).supports(Dtype::I64) {
        let e = call(
            TopkIo {
                index_dtype: Dtype::I64,
                ..io
            },
            ok,
            TopkStrategy::Auto,
        );
        assert!(e.contains("i64"), "{e}");
    }
    // Bad tunings, each refused by the field's name and its valid range.
    let base = default_tuning(&client);
    let refused = |tuning: TopkTuning| {
        topk::topk(
            &client,
            io,
            ok,
            TopkOptions {
                tuning: Some(tuning),
                ..TopkOptions::default()
            },
        )
        .expect_err("a bad tuning is refused")
        .to_string()
    };
    let bad = [
        (
            TopkTuning {
                elements_per_unit: 0,
                ..base
            },
            ["tuning.elements_per_unit", "1..=32"],
        ),
        (
            TopkTuning {
                elements_per_unit: 33,
                ..base
            },
            ["tuning.elements_per_unit", "1..=32"],
        ),
        (
            TopkTuning {
                target_cubes: 0,
                ..base
            },
            ["tuning.target_cubes", "at least 1"],
        ),
        (
            TopkTuning {
                min_tiles_per_cube: 0,
                ..base
            },
            ["tuning.min_tiles_per_cube", "1..=32"],
        ),
        (
            TopkTuning {
                min_tiles_per_cube: 33,
                ..base
            },
            ["tuning.min_tiles_per_cube", "1..=32"],
        ),
        (
            TopkTuning {
                row_units_per_cube: 3,
                ..base
            },
            ["tuning.row_units_per_cube", "a power of two"],
        ),
        (
            TopkTuning {
                row_elements_per_unit: 0,
                ..base
            },
            ["tuning.row_elements_per_unit", "1..=32"],
        ),
        (
            TopkTuning {
                row_elements_per_unit: 33,
                ..base
            },
            ["tuning.row_elements_per_unit", "1..=32"],
        ),
        (
            TopkTuning {
                sample_tiles: 65537,
                ..base
            },
            ["tuning.sample_tiles", "0..=65536"],
        ),
    ];
    for (tuning, words) in bad {
        let e = refused(tuning);
        assert!(words.iter().all(|w| e.contains(w)), "{tuning:?}: {e}");
    }
}
