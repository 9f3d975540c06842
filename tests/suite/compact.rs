//! The device compaction engine against its CPU twin: every strategy the device can run,
//! every placement of rejected elements (drop, zero, keep = the stable split), masks of both
//! storages and value comparisons; densities 0, 0.001, 0.5 and 1; tiny, odd and prime
//! lengths, every length across one tile boundary, many rows (a grid past 65,535 cubes);
//! NaN and +-0.0 thresholds; determinism; and the errors bad calls get.

use crate::common;

use common::*;
use cubecl::prelude::Client;
use cubecl::server::Handle;
use rand::{Rng, rngs::StdRng};
use sieve::compact::{
    self, CompactIo, CompactOptions, CompactProblem, CompactStrategy, FlagRule, FlagWords, Flags,
    MaskStorage, Rejected, reference,
};
use sieve::{DeviceCaps, Dtype, SieveError};

const PLACEMENTS: [Rejected; 3] = [Rejected::Drop, Rejected::Zero, Rejected::Keep];
const POISON_F32: f32 = -12345.5;
const POISON_INDEX: i32 = -7;

/// Strategies to test on this device: the portable ones always; the look-back where the
/// runtime promises forward progress and has 64-bit atomics (CUDA, HIP).
fn strategies(caps: &DeviceCaps, rejected: Rejected) -> Vec<CompactStrategy> {
    let mut s = vec![
        CompactStrategy::Auto,
        CompactStrategy::Scatter,
        CompactStrategy::Gather,
    ];
    if caps.forward_progress && caps.atomic_u64 && rejected != Rejected::Keep {
        s.push(CompactStrategy::ScatterLookback);
    }
    s
}

/// [`strategies`], each with the values held through the tile's rank; the scatter
/// strategies also with the values loaded again after it ([`CompactOptions::reread_values`]),
/// and `Scatter` with the count pass's flag words forced on ([`FlagWords::On`]; `Auto` takes
/// none in the three-pass scatter).
fn variants(caps: &DeviceCaps, rejected: Rejected) -> Vec<CompactOptions> {
    // The variant that reads its values again also ranks one plane scan a vector (the
    // others pack several vectors' counts into one).
    let options = |strategy, reread_values, flag_words| CompactOptions {
        strategy,
        tuning: None,
        reread_values,
        flag_words,
        unpacked_ranks: reread_values,
        word_rank_sparsity: None,
    };
    strategies(caps, rejected)
        .into_iter()
        .flat_map(|strategy| {
            let scatters = strategy != CompactStrategy::Gather;
            let words = strategy == CompactStrategy::Scatter;
            [options(strategy, false, FlagWords::Auto)]
                .into_iter()
                .chain(scatters.then(|| options(strategy, true, FlagWords::Auto)))
                .chain(words.then(|| options(strategy, false, FlagWords::On)))
        })
        .collect()
}

fn random_flags(rng: &mut StdRng, n: usize, density: f64) -> Vec<bool> {
    (0..n).map(|_| rng.random_bool(density)).collect()
}

/// What one device compaction wrote: values (f32), indices (i32) and counts (i32).
struct Written {
    values: Vec<f32>,
    indices: Vec<i32>,
    counts: Vec<i32>,
}

/// Runs one f32 compaction with i32 indices into poisoned outputs and reads them back.
fn run_f32(
    client: &Client,
    values: &[f32],
    flags: Flags<'_>,
    problem: CompactProblem,
    rejected: Rejected,
    options: CompactOptions,
) -> Result<Written, SieveError> {
    let n = problem.rows * problem.len;
    let input = upload(client, values);
    let values_out = poisoned(client, n, POISON_F32);
    let indices_out = poisoned(client, n, POISON_INDEX);
    let counts = poisoned(client, problem.rows, POISON_INDEX);
    compact::compact(
        client,
        flags,
        CompactIo {
            values: Some(&input),
            value_dtype: Dtype::F32,
            values_out: Some(&values_out),
            indices_out: Some(&indices_out),
            counts: &counts,
            index_dtype: Dtype::I32,
        },
        problem,
        rejected,
        options,
    )?;
    Ok(Written {
        values: download(client, values_out, n),
        indices: download(client, indices_out, n),
        counts: download(client, counts, problem.rows),
    })
}

/// Compares device output with the CPU twin; slots the twin leaves unwritten must still hold
/// the poison. Floats compare by bits (NaN and -0.0 included).
fn check(got: &Written, want: &reference::Compacted<f32>, case: &str) {
    let counts: Vec<i32> = want.counts.iter().map(|&c| c as i32).collect();
    assert_same(&got.counts, &counts, &format!("{case}: counts"));
    let values: Vec<u32> = want
        .values
        .iter()
        .map(|v| v.unwrap_or(POISON_F32).to_bits())
        .collect();
    let got_values: Vec<u32> = got.values.iter().map(|v| v.to_bits()).collect();
    assert_same(&got_values, &values, &format!("{case}: values (bits)"));
    let indices: Vec<i32> = want
        .indices
        .iter()
        .map(|i| i.map_or(POISON_INDEX, |i| i as i32))
        .collect();
    assert_same(&got.indices, &indices, &format!("{case}: indices"));
}

/// Masks of both storages (where the device has byte buffers), every strategy and
/// placement, several densities, on lengths around tile boundaries.
#[test]
fn mask_compaction_matches_reference() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("mask_compaction_matches_reference");
    let mut storages = vec![MaskStorage::U32];
    if caps.u8 {
        storages.push(MaskStorage::U8);
    }
    let shapes = [
        (1, 0),
        (1, 1),
        (3, 31),
        (2, 33),
        (1, 4097),
        (5, 997),
        (1, 65_537),
    ];
    for &(rows, len) in &shapes {
        for density in [0.0, 0.001, 0.5, 1.0] {
            let n = rows * len;
            let values: Vec<f32> = (0..n).map(|_| rng.random_range(-100.0..100.0)).collect();
            let flags = random_flags(&mut rng, n, density);
            for &storage in &storages {
                let mask = upload_mask(&client, &flags, storage);
                for rejected in PLACEMENTS {
                    let want = reference::compact_rows(&values, &flags, rows, len, rejected);
                    for options in variants(&caps, rejected) {
                        let case = format!(
                            "seed {seed}: [{rows}, {len}] density {density} {storage:?} \
                             {rejected:?} {options:?}"
                        );
                        let got = run_f32(
                            &client,
                            &values,
                            Flags::Mask {
                                mask: &mask,
                                storage,
                            },
                            CompactProblem { rows, len },
                            rejected,
                            options,
                        )
                        .unwrap_or_else(|e| panic!("{case}: {e}"));
                        check(&got, &want, &case);
                    }
                }
            }
        }
    }
}

/// Every length from just under one tile to just over two, with tiny tiles, so every tile
/// boundary position and the tile-count scan are exercised.
#[test]
fn every_length_across_tile_boundaries() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("every_length_across_tile_boundaries");
    let tuning = tiny_scan_tuning(&caps);
    let tile = tuning.units_per_cube as usize;
    let storage = mask_storage(&caps);
    for len in (tile - 2)..=(2 * tile + 2) {
        let rows = 3;
        let n = rows * len;
        let values: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let flags = random_flags(&mut rng, n, 0.5);
        let mask = upload_mask(&client, &flags, storage);
        for rejected in PLACEMENTS {
            let want = reference::compact_rows(&values, &flags, rows, len, rejected);
            for options in variants(&caps, rejected) {
                let case = format!("seed {seed}: len {len} {rejected:?} {options:?} tiny tiles");
                let got = run_f32(
                    &client,
                    &values,
                    Flags::Mask {
                        mask: &mask,
                        storage,
                    },
                    CompactProblem { rows, len },
                    rejected,
                    CompactOptions {
                        tuning: Some(tuning),
                        ..options
                    },
                )
                .unwrap_or_else(|e| panic!("{case}: {e}"));
                check(&got, &want, &case);
            }
        }
    }
}

/// Flags from comparing values with a threshold: every rule, thresholds 0.0, -0.0, NaN and
/// +inf, on values holding NaN, +-0.0 and +-inf.
#[test]
fn comparison_flags_follow_ieee() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("comparison_flags_follow_ieee");
    let specials = [
        f32::NAN,
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.5,
        -1.5,
    ];
    let len = 1031;
    let values: Vec<f32> = (0..len)
        .map(|_| specials[rng.random_range(0..specials.len())])
        .collect();
    for rule in FLAG_RULES {
        for threshold in [0.0f32, -0.0, f32::NAN, f32::INFINITY] {
            let flags: Vec<bool> = values
                .iter()
                .map(|&v| match rule {
                    FlagRule::Greater => v > threshold,
                    FlagRule::GreaterEqual => v >= threshold,
                    FlagRule::Less => v < threshold,
                    FlagRule::LessEqual => v <= threshold,
                    FlagRule::Equal => v == threshold,
                    FlagRule::NotEqual => v != threshold,
                    FlagRule::Mask | FlagRule::BitClear | FlagRule::RunStart => unreachable!(),
                })
                .collect();
            for rejected in [Rejected::Drop, Rejected::Keep] {
                let want = reference::compact_rows(&values, &flags, 1, len, rejected);
                for options in variants(&caps, rejected) {
                    let case =
                        format!("seed {seed}: {rule:?} {threshold} {rejected:?} {options:?}");
                    let got = run_f32(
                        &client,
                        &values,
                        Flags::Compare {
                            rule,
                            threshold: threshold as f64,
                        },
                        CompactProblem { rows: 1, len },
                        rejected,
                        options,
                    )
                    .unwrap_or_else(|e| panic!("{case}: {e}"));
                    check(&got, &want, &case);
                }
            }
        }
    }
}

/// `RunStarts` flags (each row's first element and every element unequal to the one before
/// it, NaNs equal, -0.0 == +0.0): runs of specials (NaNs of two payloads, both zeros, the
/// infinities) sorted and in input order, runs crossing vector and tile edges, all equal and
/// all distinct; one and three rows; every strategy; tiny tiles and the default ones; i32
/// values too.
#[test]
fn run_start_flags_match_reference() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("run_start_flags_match_reference");
    let other_nan = f32::from_bits(0x7fc0_0001);
    let pool = [
        f32::NAN,
        other_nan,
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.5,
        -1.5,
        2.0,
    ];
    let tiny = tiny_scan_tuning(&caps);
    let tile = tiny.units_per_cube as usize;
    for (len, tuning) in [
        (1, None),
        (2, None),
        (5, None),
        (tile - 1, Some(tiny)),
        (tile + 3, Some(tiny)),
        (2 * tile + 1, Some(tiny)),
        (4099, None),
    ] {
        for rows in [1, 3] {
            let n = rows * len;
            // Runs of random length: long runs cross vector and tile edges.
            let mut runs: Vec<f32> = Vec::with_capacity(n);
            while runs.len() < n {
                let value = pool[rng.random_range(0..pool.len())];
                let run = rng.random_range(1..=9usize);
                runs.extend(std::iter::repeat_n(value, run.min(n - runs.len())));
            }
            let mut sorted = runs.clone();
            for row in sorted.chunks_mut(len) {
                row.sort_by(sieve::sort::reference::SortKey::order);
            }
            let inputs = [
                ("runs", runs),
                ("sorted", sorted),
                ("all equal", vec![-0.0; n]),
                ("distinct", (0..n).map(|i| i as f32).collect()),
            ];
            for (name, values) in &inputs {
                let flags = reference::run_start_flags(values, len);
                for rejected in [Rejected::Drop, Rejected::Keep] {
                    let want = reference::compact_rows(values, &flags, rows, len, rejected);
                    for options in variants(&caps, rejected) {
                        let case = format!(
                            "seed {seed}: {name} [{rows}, {len}] {rejected:?} {options:?} \
                             tiny tiles {}",
                            tuning.is_some()
                        );
                        let got = run_f32(
                            &client,
                            values,
                            Flags::RunStarts,
                            CompactProblem { rows, len },
                            rejected,
                            CompactOptions { tuning, ..options },
                        )
                        .unwrap_or_else(|e| panic!("{case}: {e}"));
                        check(&got, &want, &case);
                    }
                }
            }
        }
    }
    // Other dtypes (64-bit ones as two radix words), three rows of runs from a pool.
    let (rows, len) = (3, 1031);
    let draws: Vec<usize> = (0..rows * len)
        .map(|i| (i / rng.random_range(1..6usize)) % pool.len())
        .collect();
    let ints = |scale: i64| draws.iter().map(move |&d| d as i64 * scale - 3);
    run_starts_of(
        &client,
        Dtype::I32,
        &ints(1).map(|v| v as i32).collect::<Vec<_>>(),
        len,
    );
    run_starts_of(
        &client,
        Dtype::U32,
        &ints(7).map(|v| v as u32).collect::<Vec<_>>(),
        len,
    );
    if caps.supports(Dtype::I64) {
        run_starts_of(&client, Dtype::I64, &ints(1 << 40).collect::<Vec<_>>(), len);
    }
    if caps.supports(Dtype::F64) {
        let wide: Vec<f64> = draws.iter().map(|&d| pool[d] as f64).collect();
        run_starts_of(&client, Dtype::F64, &wide, len);
    }
    let _ = seed;
}

/// `Flags::RunStarts` over `[rows, len]` values of `dtype` against the reference: counts, and
/// the values' bits.
fn run_starts_of<T: bytemuck::Pod + sieve::sort::reference::SortKey + Default>(
    client: &Client,
    dtype: Dtype,
    values: &[T],
    len: usize,
) {
    let rows = values.len() / len;
    let want = reference::compact_rows(
        values,
        &reference::run_start_flags(values, len),
        rows,
        len,
        Rejected::Zero,
    );
    let input = upload(client, values);
    let values_out = poisoned(client, values.len(), 0xEEEE_EEEEu32 as u64);
    let counts = poisoned(client, rows, POISON_INDEX);
    compact::compact(
        client,
        Flags::RunStarts,
        CompactIo {
            values: Some(&input),
            value_dtype: dtype,
            values_out: Some(&values_out),
            indices_out: None,
            counts: &counts,
            index_dtype: Dtype::I32,
        },
        CompactProblem { rows, len },
        Rejected::Zero,
        CompactOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{dtype} runs: {e}"));
    let want_counts: Vec<i32> = want.counts.iter().map(|&c| c as i32).collect();
    assert_same(
        &download(client, counts, rows),
        &want_counts,
        &format!("{dtype} runs: counts"),
    );
    let want_values: Vec<T> = want.values.iter().map(|v| v.unwrap()).collect();
    let got: Vec<T> = download(client, values_out, values.len());
    assert_eq!(
        bytemuck::cast_slice::<T, u8>(&got),
        bytemuck::cast_slice::<T, u8>(&want_values),
        "{dtype} runs: values (bits)"
    );
}

/// Many short rows: a grid past 65,535 cubes (tiny tiles), each row compacted on its own.
#[test]
fn many_rows_past_the_grid_limit() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("many_rows_past_the_grid_limit");
    let tuning = tiny_scan_tuning(&caps);
    let rows = 70_000;
    let len = tuning.units_per_cube as usize + 3;
    let n = rows * len;
    let values: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let flags = random_flags(&mut rng, n, 0.3);
    let storage = mask_storage(&caps);
    let mask = upload_mask(&client, &flags, storage);
    let want = reference::compact_rows(&values, &flags, rows, len, Rejected::Zero);
    for strategy in strategies(&caps, Rejected::Zero) {
        let case = format!("seed {seed}: [{rows}, {len}] {strategy:?}");
        let got = run_f32(
            &client,
            &values,
            Flags::Mask {
                mask: &mask,
                storage,
            },
            CompactProblem { rows, len },
            Rejected::Zero,
            CompactOptions {
                strategy,
                tuning: Some(tuning),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{case}: {e}"));
        check(&got, &want, &case);
    }
}

/// Other value and index dtypes: i32 and u32 values, u32 indices, and i64 values and indices
/// where the device has 64-bit integers. Exact comparison.
#[test]
fn other_dtypes() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("other_dtypes");
    let storage = mask_storage(&caps);
    let (rows, len) = (3, 2053);
    let n = rows * len;
    let flags = random_flags(&mut rng, n, 0.5);
    let mask = upload_mask(&client, &flags, storage);
    let raw: Vec<i64> = (0..n)
        .map(|_| rng.random_range(-(1i64 << 40)..(1i64 << 40)))
        .collect();
    let mut cases = vec![(Dtype::I32, Dtype::U32), (Dtype::U32, Dtype::I32)];
    if caps.supports(Dtype::I64) {
        cases.push((Dtype::I64, Dtype::I64));
    }
    for (value_dtype, index_dtype) in cases {
        let want = reference::compact_rows(&raw, &flags, rows, len, Rejected::Keep);
        let input = match value_dtype {
            Dtype::I64 => upload(&client, &raw),
            Dtype::I32 => upload(&client, &raw.iter().map(|&v| v as i32).collect::<Vec<_>>()),
            _ => upload(&client, &raw.iter().map(|&v| v as u32).collect::<Vec<_>>()),
        };
        for strategy in strategies(&caps, Rejected::Keep) {
            let case =
                format!("seed {seed}: {value_dtype} values, {index_dtype} indices, {strategy:?}");
            let values_out = poisoned(&client, n * value_dtype.size_bytes(), 0xEEu8);
            let indices_out = poisoned(&client, n * index_dtype.size_bytes(), 0xEEu8);
            let counts = poisoned(&client, rows * index_dtype.size_bytes(), 0xEEu8);
            compact::compact(
                &client,
                Flags::Mask {
                    mask: &mask,
                    storage,
                },
                CompactIo {
                    values: Some(&input),
                    value_dtype,
                    values_out: Some(&values_out),
                    indices_out: Some(&indices_out),
                    counts: &counts,
                    index_dtype,
                },
                CompactProblem { rows, len },
                Rejected::Keep,
                CompactOptions {
                    strategy,
                    tuning: None,
                    ..Default::default()
                },
            )
            .unwrap_or_else(|e| panic!("{case}: {e}"));
            let got_values: Vec<i64> = match value_dtype {
                Dtype::I64 => download(&client, values_out, n),
                Dtype::I32 => download::<i32>(&client, values_out, n)
                    .into_iter()
                    .map(i64::from)
                    .collect(),
                _ => download::<u32>(&client, values_out, n)
                    .into_iter()
                    .map(|v| v as i32 as i64)
                    .collect(),
            };
            let narrow = |v: i64| match value_dtype {
                Dtype::I64 => v,
                _ => v as i32 as i64,
            };
            let want_values: Vec<i64> = want.values.iter().map(|v| narrow(v.unwrap())).collect();
            assert_same(&got_values, &want_values, &format!("{case}: values"));
            let widen = |h: Handle, len: usize| -> Vec<i64> {
                match index_dtype {
                    Dtype::I64 => download(&client, h, len),
                    Dtype::I32 => download::<i32>(&client, h, len)
                        .into_iter()
                        .map(i64::from)
                        .collect(),
                    _ => download::<u32>(&client, h, len)
                        .into_iter()
                        .map(i64::from)
                        .collect(),
                }
            };
            let want_indices: Vec<i64> = want.indices.iter().map(|i| i.unwrap() as i64).collect();
            assert_same(
                &widen(indices_out, n),
                &want_indices,
                &format!("{case}: indices"),
            );
            let want_counts: Vec<i64> = want.counts.iter().map(|&c| c as i64).collect();
            assert_same(
                &widen(counts, rows),
                &want_counts,
                &format!("{case}: counts"),
            );
        }
    }
}

/// Indices only (argwhere's shape): no values read or written.
#[test]
fn indices_only() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("indices_only");
    let storage = mask_storage(&caps);
    let len = 100_003;
    let flags = random_flags(&mut rng, len, 0.5);
    let mask = upload_mask(&client, &flags, storage);
    let want: Vec<i32> = (0..len).filter(|&i| flags[i]).map(|i| i as i32).collect();
    for strategy in strategies(&caps, Rejected::Drop) {
        let case = format!("seed {seed}: {strategy:?}");
        let indices_out = poisoned(&client, len, POISON_INDEX);
        let counts = poisoned(&client, 1, POISON_INDEX);
        compact::compact(
            &client,
            Flags::Mask {
                mask: &mask,
                storage,
            },
            CompactIo {
                values: None,
                value_dtype: Dtype::F32,
                values_out: None,
                indices_out: Some(&indices_out),
                counts: &counts,
                index_dtype: Dtype::I32,
            },
            CompactProblem { rows: 1, len },
            Rejected::Drop,
            CompactOptions {
                strategy,
                tuning: None,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{case}: {e}"));
        let count: Vec<i32> = download(&client, counts, 1);
        assert_eq!(count[0] as usize, want.len(), "{case}: count");
        let got: Vec<i32> = download(&client, indices_out, len);
        assert_same(&got[..want.len()], &want, &case);
        assert!(
            got[want.len()..].iter().all(|&i| i == POISON_INDEX),
            "{case}: Drop wrote past the survivors"
        );
    }
}

/// The same input twice gives the same bits.
#[test]
fn deterministic() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, _) = rng("deterministic");
    let storage = mask_storage(&caps);
    let (rows, len) = (4, 50_000);
    let n = rows * len;
    let values: Vec<f32> = (0..n).map(|_| rng.random()).collect();
    let flags = random_flags(&mut rng, n, 0.5);
    let mask = upload_mask(&client, &flags, storage);
    for strategy in strategies(&caps, Rejected::Zero) {
        let once = || {
            run_f32(
                &client,
                &values,
                Flags::Mask {
                    mask: &mask,
                    storage,
                },
                CompactProblem { rows, len },
                Rejected::Zero,
                CompactOptions {
                    strategy,
                    tuning: None,
                    ..Default::default()
                },
            )
            .expect("compaction failed")
        };
        let (a, b) = (once(), once());
        assert!(
            a.values
                .iter()
                .map(|v| v.to_bits())
                .eq(b.values.iter().map(|v| v.to_bits()))
                && a.indices == b.indices
                && a.counts == b.counts,
            "{strategy:?}: two runs differ"
        );
    }
}

/// The one-bit split: integers whose bit is 0 first, both halves in input order, for every
/// bit of i32 (negative keys included) and, where the device has them, of i64.
#[test]
fn bit_split_matches_reference() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("bit_split_matches_reference");
    let (rows, len) = (3, 1029);
    let n = rows * len;
    let keys: Vec<i64> = (0..n)
        .map(|_| rng.random_range(-(1i64 << 40)..(1i64 << 40)))
        .collect();
    let mut dtypes = vec![(Dtype::I32, 32u32)];
    if caps.supports(Dtype::I64) {
        dtypes.push((Dtype::I64, 64));
    }
    for (dtype, width) in dtypes {
        let narrow: Vec<i64> = match dtype {
            Dtype::I64 => keys.clone(),
            _ => keys.iter().map(|&k| k as i32 as i64).collect(),
        };
        let input = match dtype {
            Dtype::I64 => upload(&client, &narrow),
            _ => upload(
                &client,
                &narrow.iter().map(|&k| k as i32).collect::<Vec<_>>(),
            ),
        };
        for bit in [0, 1, 7, width / 2, width - 2, width - 1] {
            let flags: Vec<bool> = narrow.iter().map(|&k| (k >> bit) & 1 == 0).collect();
            let want = reference::compact_rows(&narrow, &flags, rows, len, Rejected::Keep);
            for strategy in strategies(&caps, Rejected::Keep) {
                let case = format!("seed {seed}: {dtype} bit {bit} {strategy:?}");
                let bytes = dtype.size_bytes();
                let values_out = poisoned(&client, n * bytes, 0xEEu8);
                let indices_out = poisoned(&client, n, POISON_INDEX);
                let counts = poisoned(&client, rows, POISON_INDEX);
                compact::compact(
                    &client,
                    Flags::BitClear { bit },
                    CompactIo {
                        values: Some(&input),
                        value_dtype: dtype,
                        values_out: Some(&values_out),
                        indices_out: Some(&indices_out),
                        counts: &counts,
                        index_dtype: Dtype::I32,
                    },
                    CompactProblem { rows, len },
                    Rejected::Keep,
                    CompactOptions {
                        strategy,
                        tuning: None,
                        ..Default::default()
                    },
                )
                .unwrap_or_else(|e| panic!("{case}: {e}"));
                let got: Vec<i64> = match dtype {
                    Dtype::I64 => download(&client, values_out, n),
                    _ => download::<i32>(&client, values_out, n)
                        .into_iter()
                        .map(i64::from)
                        .collect(),
                };
                let want_values: Vec<i64> = want.values.iter().map(|v| v.unwrap()).collect();
                assert_same(&got, &want_values, &format!("{case}: values"));
                let want_indices: Vec<i32> =
                    want.indices.iter().map(|i| i.unwrap() as i32).collect();
                let got_indices: Vec<i32> = download(&client, indices_out, n);
                assert_same(&got_indices, &want_indices, &format!("{case}: indices"));
                let want_counts: Vec<i32> = want.counts.iter().map(|&c| c as i32).collect();
                let got_counts: Vec<i32> = download(&client, counts, rows);
                assert_same(&got_counts, &want_counts, &format!("{case}: counts"));
            }
        }
    }
}

/// Bad calls are refused before anything launches, naming the argument.
#[test]
fn bad_calls_get_clear_errors() {
    let client = client();
    let counts = client.empty(64);
    let values = client.empty(64);
    let io = CompactIo {
        values: None,
        value_dtype: Dtype::F32,
        values_out: None,
        indices_out: None,
        counts: &counts,
        index_dtype: Dtype::I32,
    };
    let problem = CompactProblem { rows: 1, len: 4 };
    let compare = Flags::Compare {
        rule: FlagRule::Greater,
        threshold: 0.0,
    };
    let err = |flags, io, rejected, strategy| {
        compact::compact(
            &client,
            flags,
            io,
            problem,
            rejected,
            CompactOptions {
                strategy,
                tuning: None,
                ..Default::default()
            },
        )
        .expect_err("the call should be refused")
        .to_string()
    };
    let e = err(compare, io, Rejected::Drop, CompactStrategy::Auto);
    assert!(e.contains("io.values"), "{e}");
    let e = err(Flags::RunStarts, io, Rejected::Drop, CompactStrategy::Auto);
    assert!(e.contains("io.values") && e.contains("before it"), "{e}");
    let e = err(
        Flags::Compare {
            rule: FlagRule::Mask,
            threshold: 0.0,
        },
        CompactIo {
            values: Some(&values),
            ..io
        },
        Rejected::Drop,
        CompactStrategy::Auto,
    );
    assert!(e.contains("flags.rule"), "{e}");
    let e = err(
        compare,
        CompactIo {
            values: Some(&values),
            index_dtype: Dtype::F32,
            ..io
        },
        Rejected::Drop,
        CompactStrategy::Auto,
    );
    assert!(e.contains("io.index_dtype"), "{e}");
    let e = err(
        compare,
        CompactIo {
            values: Some(&values),
            ..io
        },
        Rejected::Keep,
        CompactStrategy::ScatterLookback,
    );
    assert!(e.contains("scatter_lookback"), "{e}");
    let bits = |bit, value_dtype| {
        compact::compact(
            &client,
            Flags::BitClear { bit },
            CompactIo {
                values: Some(&values),
                value_dtype,
                ..io
            },
            problem,
            Rejected::Keep,
            CompactOptions::default(),
        )
        .expect_err("the call should be refused")
        .to_string()
    };
    let e = bits(32, Dtype::I32);
    assert!(e.contains("flags.bit") && e.contains("0..32"), "{e}");
    let e = bits(3, Dtype::F32);
    assert!(e.contains("io.value_dtype"), "{e}");
}

/// What a counted compaction wrote: the count step one wrote, then step two's outputs of
/// exactly that many elements (values f32, indices i32).
struct Counted {
    count: usize,
    values: Vec<f32>,
    indices: Vec<i32>,
}

/// Both steps of a counted compaction of one f32 row with i32 indices, the workspace sized
/// by `counted_tiles` (or `workspace` elements when given); `total` overrides the count read
/// back (to test a wrong one); outputs get `spare` poisoned slots past the total, read back
/// too.
#[allow(clippy::too_many_arguments)]
fn run_counted(
    client: &Client,
    values: &[f32],
    flags: Flags<'_>,
    options: CompactOptions,
    workspace: Option<usize>,
    total: Option<usize>,
    spare: usize,
) -> Result<Counted, SieveError> {
    let len = values.len();
    let input = upload(client, values);
    let tiles_io = |workspace| compact::CountedIo {
        values: Some(&input),
        value_dtype: Dtype::F32,
        write_values: true,
        write_indices: true,
        index_dtype: Dtype::I32,
        workspace,
    };
    let scratch = client.empty(64);
    let tiles = compact::counted_tiles(client, flags, tiles_io(&scratch), len, options)?;
    let workspace = client.empty(4 * workspace.unwrap_or(tiles).max(1));
    let io = tiles_io(&workspace);
    let count = poisoned(client, 1, POISON_INDEX);
    compact::count_survivors(client, flags, io, len, &count, options)?;
    let count = download::<i32>(client, count, 1)[0] as usize;
    let total = total.unwrap_or(count);
    let slots = total + spare;
    let values_out = poisoned(client, slots.max(1), POISON_F32);
    let indices_out = poisoned(client, slots.max(1), POISON_INDEX);
    compact::write_survivors(
        client,
        flags,
        io,
        len,
        total,
        Some(&values_out),
        Some(&indices_out),
        options,
    )?;
    Ok(Counted {
        count,
        values: download(client, values_out, slots),
        indices: download(client, indices_out, slots),
    })
}

/// The counted compaction (count, then write into outputs of exactly the count: what
/// `mask_select`, `argwhere` and `unique` run) against the CPU twin: masks, comparisons and
/// run starts; densities 0 to 1; every length across a tiny tile boundary and a few around
/// the default tiles; a total below the count writes no slot past it.
#[test]
fn counted_compaction_matches_reference() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("counted_compaction_matches_reference");
    let tiny = tiny_scan_tuning(&caps);
    let tile = (tiny.units_per_cube * tiny.elements_per_unit) as usize;
    let storage = mask_storage(&caps);
    let mut cases: Vec<(usize, Option<sieve::scan::ScanTuning>)> =
        (0..=2 * tile + 1).map(|len| (len, Some(tiny))).collect();
    // Even lengths have room for the flag words; 65,536 at density 0.004 ranks from them alone
    // (words forced on), 65,538's run starts too by `Auto`'s rule, 24,574 at every density.
    cases.extend(
        [1, 2, 4097, 8191, 8192, 8193, 24_574, 65_536, 65_537, 65_538].map(|len| (len, None)),
    );
    for (len, tuning) in cases {
        let options = CompactOptions {
            strategy: CompactStrategy::Auto,
            tuning,
            // Odd lengths load the values written again after the rank: both forms cross
            // every tile boundary. The flag words by the rule, forced on, and off. Every
            // fourth length ranks one plane scan a vector.
            reread_values: len % 2 == 1,
            flag_words: [FlagWords::Auto, FlagWords::On, FlagWords::Off][len % 3],
            unpacked_ranks: len % 4 == 3,
            // Every fifth length ranks from the words alone at every density.
            word_rank_sparsity: (len % 5 == 4).then_some(1),
        };
        for density in [0.0, 0.004, 0.01, 0.5, 1.0] {
            let values: Vec<f32> = (0..len).map(|_| rng.random_range(-100.0..100.0)).collect();
            let mask = random_flags(&mut rng, len, density);
            let mask_handle = upload_mask(&client, &mask, storage);
            let threshold = 100.0 - 200.0 * density;
            // Runs about as long as the density says (`Auto` takes the words at 1 in 8, and
            // the scatter ranks from them alone at 1 in 100; masks and comparisons with words
            // forced on at 1 in 64).
            let run = (1.0 / density.max(0.004)).round() as usize;
            let runs: Vec<f32> = (0..len).map(|i| (i / run) as f32).collect();
            let inputs = [
                (
                    "mask",
                    &values,
                    Flags::Mask {
                        mask: &mask_handle,
                        storage,
                    },
                    mask.clone(),
                ),
                (
                    "greater",
                    &values,
                    Flags::Compare {
                        rule: FlagRule::Greater,
                        threshold,
                    },
                    reference::compare_flags(&values, FlagRule::Greater, threshold),
                ),
                (
                    "run starts",
                    &runs,
                    Flags::RunStarts,
                    reference::run_start_flags(&runs, len.max(1)),
                ),
            ];
            // Even lengths get `counted_workspace_with_words`' room, where the count pass leaves the
            // flags as words for the scatter; odd ones `counted_tiles`' (flags computed again).
            let workspace = (len % 2 == 0).then(|| compact::counted_workspace_with_words(len));
            for (name, values, flags, want_flags) in inputs {
                let case = format!(
                    "seed {seed}: {name} len {len} density {density} tiny tiles {} reread {} \
                     words {:?} workspace {workspace:?}",
                    tuning.is_some(),
                    options.reread_values,
                    options.flag_words
                );
                let want = reference::compact_rows(values, &want_flags, 1, len, Rejected::Drop);
                let count = want.counts[0];
                let got = run_counted(&client, values, flags, options, workspace, None, 2)
                    .unwrap_or_else(|e| panic!("{case}: {e}"));
                assert_eq!(got.count, count, "{case}: count");
                let mut values_want: Vec<u32> = want.values[..count]
                    .iter()
                    .map(|v| v.unwrap().to_bits())
                    .collect();
                values_want.extend([POISON_F32.to_bits(); 2]);
                let got_bits: Vec<u32> = got.values.iter().map(|v| v.to_bits()).collect();
                assert_same(&got_bits, &values_want, &format!("{case}: values (bits)"));
                let mut indices_want: Vec<i32> = want.indices[..count]
                    .iter()
                    .map(|i| i.unwrap() as i32)
                    .collect();
                indices_want.extend([POISON_INDEX; 2]);
                assert_same(&got.indices, &indices_want, &format!("{case}: indices"));
                if count > 2 {
                    // A total below the count: the first `total` slots as before, none past.
                    let total = count - 2;
                    let short =
                        run_counted(&client, values, flags, options, workspace, Some(total), 2)
                            .unwrap_or_else(|e| panic!("{case}: {e}"));
                    let mut short_want = got.indices[..total].to_vec();
                    short_want.extend([POISON_INDEX; 2]);
                    assert_same(&short.indices, &short_want, &format!("{case}: short total"));
                }
            }
        }
    }
}

/// Bad calls to the counted compaction are refused by name before anything launches.
#[test]
fn counted_compaction_errors_name_the_argument() {
    let client = client();
    let values: Vec<f32> = (0..5000).map(|i| i as f32).collect();
    let flags = Flags::Compare {
        rule: FlagRule::Greater,
        threshold: 10.0,
    };
    let tiny = tiny_scan_tuning(&DeviceCaps::of(&client));
    let options = CompactOptions {
        strategy: CompactStrategy::Auto,
        tuning: Some(tiny),
        ..Default::default()
    };
    let small = run_counted(&client, &values, flags, options, Some(1), None, 0);
    assert!(
        matches!(
            small,
            Err(SieveError::BufferTooSmall {
                name: "io.workspace",
                ..
            })
        ),
        "{:?}",
        small.err()
    );
    let gather = CompactOptions {
        strategy: CompactStrategy::Gather,
        tuning: None,
        ..Default::default()
    };
    let refused = run_counted(&client, &values, flags, gather, None, None, 0);
    assert!(
        matches!(refused, Err(SieveError::UnsupportedStrategy { .. })),
        "{:?}",
        refused.err()
    );
    let zero = CompactOptions {
        word_rank_sparsity: Some(0),
        ..Default::default()
    };
    let refused = run_counted(&client, &values, flags, zero, None, None, 0);
    assert!(
        matches!(
            refused,
            Err(SieveError::InvalidArgument {
                name: "options.word_rank_sparsity",
                ..
            })
        ),
        "{:?}",
        refused.err()
    );
    let input = upload(&client, &values);
    let workspace = client.empty(4 * 5000);
    let io = compact::CountedIo {
        values: Some(&input),
        value_dtype: Dtype::F32,
        write_values: true,
        write_indices: false,
        index_dtype: Dtype::I32,
        workspace: &workspace,
    };
    let options = CompactOptions::default();
    let count = client.empty(4);
    let float_index = compact::CountedIo {
        index_dtype: Dtype::F32,
        ..io
    };
    let refused = compact::count_survivors(&client, flags, float_index, 5000, &count, options);
    assert!(format!("{:?}", refused.err()).contains("io.index_dtype"));
    let out = client.empty(4 * 5000);
    let wrong = |values_out, indices_out, total| {
        compact::write_survivors(
            &client,
            flags,
            io,
            5000,
            total,
            values_out,
            indices_out,
            options,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
    };
    assert!(wrong(None, None, 3).contains("values_out"));
    assert!(wrong(Some(&out), Some(&out), 3).contains("indices_out"));
    assert!(wrong(Some(&out), None, 5001).contains("total"));
    let tiny_out = client.empty(4);
    assert!(wrong(Some(&tiny_out), None, 3).contains("io.values_out"));
}
