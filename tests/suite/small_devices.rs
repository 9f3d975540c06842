//! Every op at its default tuning on devices smaller than the one under test, through the caps
//! override (`sieve::device::with_limits`): 64 and 128 units per cube, 16 and 32 KiB of shared
//! memory, no plane operations. The raw `sieve::{scan, compact, sort, topk, distinct}` and every public
//! Burn op, on rows of 1..300 (around plane, tile and power-of-two boundaries), 4097 and
//! 70,000 keys and [64, 5000], against the CPU references. Also: what `DeviceCaps::of` reports
//! under the override, and the errors a forced strategy or tuning that cannot fit gets.
//!
//! Plane widths other than the device's cannot be simulated (lavapipe has no planes, the H200
//! has 32 lanes): the limits here only lower units, shared memory and plane use.

use crate::common;

use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use common::*;
use cubecl::prelude::Client;
use rand::{Rng, rngs::StdRng};
use sieve::compact::{
    self, CompactIo, CompactOptions, CompactProblem, CompactStrategy, Flags, MaskStorage, Rejected,
};
use sieve::device::{DeviceLimits, with_limits};
use sieve::scan::{self, ScanKind, ScanOptions, ScanProblem, ScanTuning};
use sieve::sort::{self, SortIo, SortOptions, SortOrder, SortProblem, SortStrategy, SortTuning};
use sieve::topk::{self, TopkIo, TopkOptions, TopkProblem, TopkStrategy, TopkTuning};
use sieve::{DeviceCaps, Dtype};
use sieve_burn::TopKOptions;

const KIB: usize = 1024;

/// Below Vulkan's guaranteed 128 invocations per workgroup with its guaranteed 16 KiB; the
/// guaranteed 128 with 32 KiB. No plane operations in either (the fallbacks run).
const LIMITS: [DeviceLimits; 2] = [
    DeviceLimits {
        max_units_per_cube: Some(64),
        max_shared_bytes: Some(16 * KIB),
        plane_ops: Some(false),
    },
    DeviceLimits {
        max_units_per_cube: Some(128),
        max_shared_bytes: Some(32 * KIB),
        plane_ops: Some(false),
    },
];

/// Row lengths in 1..300: tiny, around 32/64/128/256 (planes, cubes, tiles) and odd.
const SHORT: [usize; 14] = [1, 2, 7, 31, 33, 63, 64, 65, 127, 129, 255, 256, 257, 299];

/// `[rows, len]` shapes and the limits each runs under: the short rows three at a time, under
/// each set of limits in turn (to keep CI's time); rows of many tiles (4097: one past a
/// power of two; 70,000: tile sums that recurse, many LSD tiles, a one-cube radix select) and
/// many rows of 5000 under every set.
fn cases() -> Vec<(DeviceLimits, [usize; 2])> {
    let mut cases: Vec<(DeviceLimits, [usize; 2])> = SHORT
        .iter()
        .enumerate()
        .map(|(i, &len)| (LIMITS[i % LIMITS.len()], [3, len]))
        .collect();
    for limits in LIMITS {
        cases.extend([[1, 4097], [1, 70_000], [64, 5000]].map(|shape| (limits, shape)));
    }
    cases
}

/// Runs `f` under `limits` with the caps it sees (printed, for a failure's context).
fn under<R>(limits: DeviceLimits, f: impl FnOnce(&Client, &DeviceCaps) -> R) -> R {
    with_limits(limits, || {
        let client = client();
        let caps = DeviceCaps::of(&client);
        eprintln!("under {limits:?}: {}", caps.describe());
        f(&client, &caps)
    })
}

fn random_f32(rng: &mut StdRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| special_f32(rng)).collect()
}

/// Small integers as f32, so every sum is exact.
fn small_f32(rng: &mut StdRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-8i32..8) as f32).collect()
}

#[test]
fn caps_report_the_lowered_limits() {
    let client = client();
    let real = DeviceCaps::of(&client);
    let limits = DeviceLimits {
        max_units_per_cube: Some(64),
        max_shared_bytes: Some(16 * KIB),
        plane_ops: Some(false),
    };
    with_limits(limits, || {
        let caps = DeviceCaps::of(&client);
        assert_eq!(caps.max_units_per_cube, 64.min(real.max_units_per_cube));
        assert_eq!(caps.max_shared_bytes, (16 * KIB).min(real.max_shared_bytes));
        assert!(!caps.plane_ops);
        assert_eq!(caps.limits, limits);
        assert!(
            caps.describe().contains("limited to"),
            "{}",
            caps.describe()
        );
        // Plane widths are the hardware's.
        assert_eq!(caps.plane_size_max, real.plane_size_max);
        // Nested scopes only tighten; a larger limit raises nothing.
        let looser = DeviceLimits {
            max_units_per_cube: Some(1 << 20),
            max_shared_bytes: Some(8 * KIB),
            plane_ops: Some(true),
        };
        with_limits(looser, || {
            let inner = DeviceCaps::of(&client);
            assert_eq!(inner.max_units_per_cube, caps.max_units_per_cube);
            assert_eq!(inner.max_shared_bytes, (8 * KIB).min(real.max_shared_bytes));
            assert!(!inner.plane_ops);
        });
        assert_eq!(DeviceCaps::of(&client), caps);
        // Another thread does not see this thread's limits.
        let other = client.clone();
        let other = std::thread::spawn(move || DeviceCaps::of(&other)).join();
        assert_eq!(other.expect("caps on another thread"), real);
        // Default tunings fit the lowered limits.
        assert!(ScanTuning::for_device(&caps, false).units_per_cube <= 64);
        let sort_tuning = SortTuning::for_device(&caps);
        assert!(sort_tuning.units_per_cube <= 64 && !sort_tuning.use_planes);
        assert!(sort_tuning.device_tile_bytes(&caps) <= 16 * KIB);
        let topk_tuning = TopkTuning::for_device(&caps);
        assert!(topk_tuning.units_per_cube <= 64 && topk_tuning.row_units_per_cube <= 64);
        assert!(topk_tuning.rank_capacity(&caps) <= 64 * 16);
    });
    // The limits end with the scope, a panicking one too.
    assert_eq!(DeviceCaps::of(&client), real);
    let panicked = std::panic::catch_unwind(|| with_limits(limits, || -> () { panic!("inside") }));
    assert!(panicked.is_err());
    assert_eq!(DeviceCaps::of(&client), real);
}

#[test]
fn forced_strategies_and_tunings_that_cannot_fit_are_refused() {
    let limits = LIMITS[0];
    under(limits, |client, caps| {
        let units = caps.max_units_per_cube;
        let shared = format!("{} bytes", caps.max_shared_bytes);
        let limited = format!("{units} units per cube, {shared} of shared memory");
        let keys = upload(client, &vec![0f32; 4096]);
        let out = client.empty(4 * 4096);
        // The in-cube sort holds at most 16 keys per unit of the largest cube.
        let len = 16 * caps.max_units_per_cube as usize + 1;
        let e = sort::sort(
            client,
            SortIo {
                keys: &keys,
                key_dtype: Dtype::F32,
                keys_out: Some(&out),
                indices_out: None,
                index_dtype: Dtype::I32,
            },
            SortProblem { rows: 1, len },
            SortOrder::Ascending,
            SortOptions {
                strategy: SortStrategy::InCube,
                tuning: None,
            },
        )
        .expect_err("a row past the in-cube capacity is refused")
        .to_string();
        assert!(e.contains("problem.len") && e.contains(&limited), "{e}");
        // Rank by counting: at most 16 keys per unit of the largest cube.
        let e = topk::topk(
            client,
            TopkIo {
                values: &keys,
                value_dtype: Dtype::F32,
                values_out: Some(&out),
                indices_out: None,
                index_dtype: Dtype::I32,
            },
            TopkProblem { rows: 1, len, k: 3 },
            TopkOptions {
                strategy: TopkStrategy::RankByCounting,
                ..TopkOptions::default()
            },
        )
        .expect_err("a row past the rank capacity is refused")
        .to_string();
        assert!(
            e.contains("rank_by_counting") && e.contains(&limited),
            "{e}"
        );
        // A tuning made for a larger cube.
        let e = scan::scan(
            client,
            &keys,
            &out,
            ScanProblem { rows: 1, len: 8 },
            Dtype::F32,
            ScanKind::Inclusive,
            ScanOptions {
                tuning: Some(ScanTuning {
                    units_per_cube: 256,
                    ..ScanTuning::for_device(caps, false)
                }),
                ..ScanOptions::default()
            },
        )
        .expect_err("256 units past a 64-unit limit are refused")
        .to_string();
        assert!(
            e.contains("tuning.units_per_cube") && e.contains(&format!("..={units}")),
            "{e}"
        );
        // Plane operations the (limited) device does not have.
        let e = scan::scan(
            client,
            &keys,
            &out,
            ScanProblem { rows: 1, len: 8 },
            Dtype::F32,
            ScanKind::Inclusive,
            ScanOptions {
                tuning: Some(ScanTuning {
                    use_planes: true,
                    ..ScanTuning::for_device(caps, false)
                }),
                ..ScanOptions::default()
            },
        )
        .expect_err("plane operations are refused")
        .to_string();
        assert!(
            e.contains("use_planes") && e.contains("no plane operations"),
            "{e}"
        );
        // An LSD tile past the shared memory: 64 units x 16 keys with the split ranker.
        let e = sort::sort(
            client,
            SortIo {
                keys: &keys,
                key_dtype: Dtype::F32,
                keys_out: Some(&out),
                indices_out: None,
                index_dtype: Dtype::I32,
            },
            SortProblem { rows: 1, len: 4096 },
            SortOrder::Ascending,
            SortOptions {
                strategy: SortStrategy::Lsd,
                tuning: Some(SortTuning {
                    elements_per_unit: 16,
                    ..SortTuning::for_device(caps)
                }),
            },
        )
        .expect_err("a tile past the shared memory is refused")
        .to_string();
        assert!(
            e.contains("tuning.elements_per_unit") && e.contains(&shared),
            "{e}"
        );
    });
    // A top-k pass tile past the shared memory: 128 units x 32 keys (with its bins and spine)
    // is over 16 KiB.
    let limits = DeviceLimits {
        max_units_per_cube: Some(128),
        ..LIMITS[0]
    };
    under(limits, |client, caps| {
        let shared = format!("{} bytes", caps.max_shared_bytes);
        let keys = upload(client, &vec![0f32; 4096]);
        let out = client.empty(4 * 4096);
        let e = topk::topk(
            client,
            TopkIo {
                values: &keys,
                value_dtype: Dtype::F32,
                values_out: Some(&out),
                indices_out: None,
                index_dtype: Dtype::I32,
            },
            TopkProblem {
                rows: 1,
                len: 4096,
                k: 3,
            },
            TopkOptions {
                tuning: Some(TopkTuning {
                    units_per_cube: 128,
                    elements_per_unit: 32,
                    ..TopkTuning::for_device(caps)
                }),
                ..TopkOptions::default()
            },
        )
        .expect_err("a top-k tile past the shared memory is refused")
        .to_string();
        assert!(
            e.contains("tuning.elements_per_unit") && e.contains(&shared),
            "{e}"
        );
    });
}

#[test]
fn raw_scan_at_default_tunings() {
    let (mut rng, seed) = rng("raw_scan_at_default_tunings");
    for (limits, [rows, len]) in cases() {
        under(limits, |client, _| {
            let data: Vec<u32> = random_u32(&mut rng, rows * len, u32::MAX);
            let input = upload(client, &data);
            for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
                let case = format!("seed {seed}: {limits:?} [{rows}, {len}] {kind:?}");
                let output = poisoned(client, rows * len, 0xDEAD_BEEFu32);
                scan::scan(
                    client,
                    &input,
                    &output,
                    ScanProblem { rows, len },
                    Dtype::U32,
                    kind,
                    ScanOptions::default(),
                )
                .unwrap_or_else(|e| panic!("{case}: {e}"));
                let want =
                    scan::reference::scan_rows(&data, rows, len, kind == ScanKind::Exclusive);
                assert_same(&download::<u32>(client, output, rows * len), &want, &case);
            }
        });
    }
}

#[test]
fn raw_compact_at_default_tunings() {
    let (mut rng, seed) = rng("raw_compact_at_default_tunings");
    const POISON: i32 = -7;
    for (limits, [rows, len]) in cases() {
        under(limits, |client, _| {
            let n = rows * len;
            let values: Vec<i32> = (0..n as i32).collect();
            let flags: Vec<bool> = (0..n).map(|_| rng.random_bool(0.5)).collect();
            let words: Vec<u32> = flags.iter().map(|&f| f as u32).collect();
            let (input, mask) = (upload(client, &values), upload(client, &words));
            // The scatter's padded and split placements, the gather's split (mask_select's
            // dropping placement runs in the Burn test).
            for (strategy, rejected) in [
                (CompactStrategy::Auto, Rejected::Zero),
                (CompactStrategy::Auto, Rejected::Keep),
                (CompactStrategy::Gather, Rejected::Keep),
            ] {
                let case =
                    format!("seed {seed}: {limits:?} [{rows}, {len}] {rejected:?} {strategy:?}");
                let values_out = poisoned(client, n, POISON);
                let indices_out = poisoned(client, n, POISON);
                let counts = poisoned(client, rows, POISON);
                compact::compact(
                    client,
                    Flags::Mask {
                        mask: &mask,
                        storage: MaskStorage::U32,
                    },
                    CompactIo {
                        values: Some(&input),
                        value_dtype: Dtype::I32,
                        values_out: Some(&values_out),
                        indices_out: Some(&indices_out),
                        counts: &counts,
                        index_dtype: Dtype::I32,
                    },
                    CompactProblem { rows, len },
                    rejected,
                    CompactOptions {
                        strategy,
                        tuning: None,
                        ..Default::default()
                    },
                )
                .unwrap_or_else(|e| panic!("{case}: {e}"));
                let want = compact::reference::compact_rows(&values, &flags, rows, len, rejected);
                let want_counts: Vec<i32> = want.counts.iter().map(|&c| c as i32).collect();
                let want_values: Vec<i32> =
                    want.values.iter().map(|v| v.unwrap_or(POISON)).collect();
                let want_indices: Vec<i32> = want
                    .indices
                    .iter()
                    .map(|i| i.map_or(POISON, |i| i as i32))
                    .collect();
                let got: Vec<i32> = download(client, counts, rows);
                assert_same(&got, &want_counts, &format!("{case}: counts"));
                let got: Vec<i32> = download(client, values_out, n);
                assert_same(&got, &want_values, &format!("{case}: values"));
                let got: Vec<i32> = download(client, indices_out, n);
                assert_same(&got, &want_indices, &format!("{case}: indices"));
            }
        });
    }
}

/// `unique`'s hash path (`sieve::distinct`) at its default options under each set of limits
/// (fewer units a cube, and no plane operations: the cube minimum of the first zero's and
/// NaN's positions goes through shared memory), over every case's elements as one row of
/// duplicate-heavy f32 with both zeros and NaNs: the reference's values, bit for bit.
#[test]
fn raw_distinct_at_default_options() {
    let (mut rng, seed) = rng("raw_distinct_at_default_options");
    for (limits, [rows, len]) in cases() {
        under(limits, |client, _| {
            let x = random_f32(&mut rng, rows * len);
            let case = format!("seed {seed}: {limits:?} [{}]", x.len());
            let got = crate::sets::raw_distinct(client, &x, Dtype::F32, Default::default())
                .unwrap_or_else(|| panic!("{case}: the table gave up"));
            let want = crate::sets::unique_reference(&x).0;
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_same(&bits(&got), &bits(&want), &case);
        });
    }
}

#[test]
fn raw_sort_at_default_tunings() {
    let (mut rng, seed) = rng("raw_sort_at_default_tunings");
    for (i, (limits, [rows, len])) in cases().into_iter().enumerate() {
        under(limits, |client, _| {
            let n = rows * len;
            // Duplicate-heavy floats with NaN and +-0.0, and full-range integers (every
            // LSD pass has work).
            let floats = random_f32(&mut rng, n);
            let float_bits: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
            let ints = random_u32(&mut rng, n, u32::MAX);
            let order = [SortOrder::Ascending, SortOrder::Descending][i % 2];
            for (dtype, bits) in [(Dtype::F32, &float_bits), (Dtype::U32, &ints)] {
                let case = format!("seed {seed}: {limits:?} [{rows}, {len}] {dtype} {order:?}");
                let keys = upload(client, bits);
                let keys_out = poisoned(client, n, 0xDEAD_BEEFu32);
                let indices_out = poisoned(client, n, -7i32);
                let strategy = sort::sort(
                    client,
                    SortIo {
                        keys: &keys,
                        key_dtype: dtype,
                        keys_out: Some(&keys_out),
                        indices_out: Some(&indices_out),
                        index_dtype: Dtype::I32,
                    },
                    SortProblem { rows, len },
                    order,
                    SortOptions::default(),
                )
                .unwrap_or_else(|e| panic!("{case}: {e}"));
                let case = format!("{case} ({strategy:?})");
                let descending = order == SortOrder::Descending;
                let want = if dtype == Dtype::F32 {
                    sort::reference::sort_rows(&floats, rows, len, descending)
                } else {
                    sort::reference::sort_rows(&ints, rows, len, descending)
                };
                let want_indices: Vec<i32> = want.iter().map(|&j| j as i32).collect();
                let want_keys: Vec<u32> = (0..n).map(|s| bits[s / len * len + want[s]]).collect();
                let got: Vec<i32> = download(client, indices_out, n);
                assert_same(&got, &want_indices, &format!("{case}: indices"));
                let got: Vec<u32> = download(client, keys_out, n);
                assert_same(&got, &want_keys, &format!("{case}: keys"));
            }
        });
    }
}

/// Every strategy that fits: `Auto`, sort-and-slice, the one-cube radix select
/// and the device-wide one (forced by a `row_cube_max_len` of 0: its digit kernel then runs
/// with fewer units than digits), rank by counting where the row fits.
#[test]
fn raw_topk_every_strategy_at_default_tunings() {
    let _device = serial();
    let (mut rng, seed) = rng("raw_topk_every_strategy_at_default_tunings");
    for (i, (limits, [rows, len])) in cases().into_iter().enumerate() {
        under(limits, |client, caps| {
            let defaults = TopkTuning::for_device(caps);
            let device_wide = TopkTuning {
                row_cube_max_len: 0,
                ..defaults
            };
            let n = rows * len;
            let values = random_f32(&mut rng, n);
            let input = upload(client, &values);
            let largest = i % 2 == 0;
            let mut runs = vec![
                (TopkStrategy::Auto, None),
                (TopkStrategy::SortAndSlice, None),
                (TopkStrategy::RadixSelect, None),
                (TopkStrategy::RadixSelect, Some(device_wide)),
            ];
            if len <= defaults.rank_capacity(caps) {
                runs.push((TopkStrategy::RankByCounting, None));
            }
            // k = len (every key) on the short rows only: it skips the search.
            let mut ks = vec![1, len / 3 + 1];
            if len < 300 {
                ks.push(len);
            }
            ks.dedup();
            for k in ks {
                let want = topk::reference::topk_rows(&values, rows, len, k, largest);
                let want_indices: Vec<i32> = want.iter().map(|&j| j as i32).collect();
                let want_bits: Vec<u32> = (0..rows * k)
                    .map(|s| values[s / k * len + want[s]].to_bits())
                    .collect();
                for &(strategy, tuning) in &runs {
                    let case = format!(
                        "seed {seed}: {limits:?} [{rows}, {len}] k {k} largest {largest} \
                             {strategy:?} device-wide {}",
                        tuning.is_some()
                    );
                    let values_out = poisoned(client, rows * k, 0xDEAD_BEEFu32);
                    let indices_out = poisoned(client, rows * k, -7i32);
                    topk::topk(
                        client,
                        TopkIo {
                            values: &input,
                            value_dtype: Dtype::F32,
                            values_out: Some(&values_out),
                            indices_out: Some(&indices_out),
                            index_dtype: Dtype::I32,
                        },
                        TopkProblem { rows, len, k },
                        TopkOptions {
                            largest,
                            sorted: true,
                            strategy,
                            tuning,
                        },
                    )
                    .unwrap_or_else(|e| panic!("{case}: {e}"));
                    let got: Vec<i32> = download(client, indices_out, rows * k);
                    assert_same(&got, &want_indices, &format!("{case}: indices"));
                    let got: Vec<u32> = download(client, values_out, rows * k);
                    assert_same(&got, &want_bits, &format!("{case}: values"));
                }
            }
        });
    }
}

fn float_tensor(data: &[f32], [rows, len]: [usize; 2], device: &Device) -> Tensor<2> {
    Tensor::from_data(TensorData::new(data.to_vec(), [rows, len]), device)
}

fn int_tensor(data: &[i32], [rows, len]: [usize; 2], device: &Device) -> Tensor<2, Int> {
    Tensor::from_data(TensorData::new(data.to_vec(), [rows, len]), device)
}

/// cumsum (Float and Int), along the rows and down the columns.
#[test]
fn burn_cumsum_at_default_tunings() {
    let device = Device::default();
    let (mut rng, seed) = rng("burn_cumsum_at_default_tunings");
    for (limits, shape @ [rows, len]) in cases() {
        under(limits, |_, _| {
            let n = rows * len;
            let case = format!("seed {seed}: {limits:?} {shape:?}");
            let floats = small_f32(&mut rng, n);
            let want: Vec<f32> = scan::reference::scan_rows(&floats, rows, len, false);
            let got = f32s(sieve_burn::cumsum(float_tensor(&floats, shape, &device), 1));
            assert_same(&got, &want, &format!("{case}: float dim 1"));
            let ints: Vec<i32> = (0..n).map(|_| rng.random_range(-1000..1000)).collect();
            let want: Vec<i64> = scan::reference::scan_rows(&ints, rows, len, false)
                .into_iter()
                .map(i64::from)
                .collect();
            let x = int_tensor(&ints, shape, &device);
            assert_same(&i64s(sieve_burn::cumsum(x.clone(), 1)), &want, &case);
            // Down the columns: the transposed problem.
            let t: Vec<i32> = (0..n).map(|i| ints[i % rows * len + i / rows]).collect();
            let want: Vec<i64> = scan::reference::scan_rows(&t, len, rows, false)
                .into_iter()
                .map(i64::from)
                .collect();
            let got = i64s(sieve_burn::cumsum(x, 0).swap_dims(0, 1));
            assert_same(&got, &want, &format!("{case}: int dim 0"));
        });
    }
}

/// mask_select, mask_select_padded, argwhere, nonzero, compact_rows.
#[test]
fn burn_filters_at_default_tunings() {
    let device = Device::default();
    let (mut rng, seed) = rng("burn_filters_at_default_tunings");
    for (limits, shape @ [rows, len]) in cases() {
        under(limits, |_, _| {
            let n = rows * len;
            let case = format!("seed {seed}: {limits:?} {shape:?}");
            let values = small_f32(&mut rng, n);
            let flags: Vec<bool> = (0..n).map(|_| rng.random_bool(0.5)).collect();
            let x = float_tensor(&values, shape, &device);
            let mask = Tensor::<2, Bool>::from_data(TensorData::new(flags.clone(), shape), &device);
            let kept: Vec<usize> = (0..n).filter(|&i| flags[i]).collect();
            let want: Vec<f32> = kept.iter().map(|&i| values[i]).collect();
            let got = f32s(sieve_burn::mask_select(x.clone(), mask.clone()));
            assert_same(&got, &want, &format!("{case}: mask_select"));
            let (padded, count) = sieve_burn::mask_select_padded(x.clone(), mask.clone());
            let mut want_padded = want.clone();
            want_padded.resize(n, 0.0);
            assert_same(&f32s(padded), &want_padded, &format!("{case}: padded"));
            assert_same(
                &i64s(count),
                &[kept.len() as i64],
                &format!("{case}: count"),
            );
            let coords: Vec<i64> = kept
                .iter()
                .flat_map(|&i| [(i / len) as i64, (i % len) as i64])
                .collect();
            let got = i64s(sieve_burn::argwhere(mask.clone()));
            assert_same(&got, &coords, &format!("{case}: argwhere"));
            let nonzero = sieve_burn::nonzero(mask.clone());
            if kept.is_empty() {
                assert!(nonzero.is_empty(), "{case}: nonzero");
            } else {
                for (d, t) in nonzero.into_iter().enumerate() {
                    let want: Vec<i64> = coords.iter().skip(d).step_by(2).copied().collect();
                    assert_same(&i64s(t), &want, &format!("{case}: nonzero {d}"));
                }
            }
            let (compacted, counts) = sieve_burn::compact_rows(x, mask);
            let want = compact::reference::compact_rows(&values, &flags, rows, len, Rejected::Zero);
            let want_values: Vec<f32> = want.values.iter().map(|v| v.unwrap()).collect();
            let want_counts: Vec<i64> = want.counts.iter().map(|&c| c as i64).collect();
            assert_same(
                &f32s(compacted),
                &want_values,
                &format!("{case}: compact_rows"),
            );
            assert_same(&i64s(counts), &want_counts, &format!("{case}: row counts"));
        });
    }
}

/// stable_partition (Float) and split_by_bit (Int) along the rows.
#[test]
fn burn_splits_at_default_tunings() {
    let device = Device::default();
    let (mut rng, seed) = rng("burn_splits_at_default_tunings");
    for (limits, shape @ [rows, len]) in cases() {
        under(limits, |_, _| {
            let n = rows * len;
            let case = format!("seed {seed}: {limits:?} {shape:?}");
            let values = small_f32(&mut rng, n);
            let flags: Vec<bool> = (0..n).map(|_| rng.random_bool(0.5)).collect();
            let mask = Tensor::<2, Bool>::from_data(TensorData::new(flags.clone(), shape), &device);
            let (v, i, c) =
                sieve_burn::stable_partition(float_tensor(&values, shape, &device), mask, 1);
            let want = compact::reference::compact_rows(&values, &flags, rows, len, Rejected::Keep);
            let want_values: Vec<f32> = want.values.iter().map(|v| v.unwrap()).collect();
            let want_indices: Vec<i64> = want.indices.iter().map(|i| i.unwrap() as i64).collect();
            let want_counts: Vec<i64> = want.counts.iter().map(|&c| c as i64).collect();
            assert_same(&f32s(v), &want_values, &format!("{case}: partition values"));
            assert_same(
                &i64s(i),
                &want_indices,
                &format!("{case}: partition indices"),
            );
            assert_same(&i64s(c), &want_counts, &format!("{case}: partition counts"));
            let keys: Vec<i32> = (0..n).map(|_| rng.random_range(-100..100)).collect();
            let zeros: Vec<bool> = keys.iter().map(|k| (k >> 3) & 1 == 0).collect();
            let (v, i, c) = sieve_burn::split_by_bit(int_tensor(&keys, shape, &device), 3, 1);
            let want = compact::reference::compact_rows(&keys, &zeros, rows, len, Rejected::Keep);
            let want_values: Vec<i64> = want.values.iter().map(|v| v.unwrap() as i64).collect();
            let want_indices: Vec<i64> = want.indices.iter().map(|i| i.unwrap() as i64).collect();
            let want_counts: Vec<i64> = want.counts.iter().map(|&c| c as i64).collect();
            assert_same(&i64s(v), &want_values, &format!("{case}: split values"));
            assert_same(&i64s(i), &want_indices, &format!("{case}: split indices"));
            assert_same(&i64s(c), &want_counts, &format!("{case}: split counts"));
        });
    }
}

/// sort, sort_descending, sort_with_indices, sort_descending_with_indices, argsort,
/// argsort_descending on Float rows; sort_with_indices on Int rows.
#[test]
fn burn_sorts_at_default_tunings() {
    let device = Device::default();
    let (mut rng, seed) = rng("burn_sorts_at_default_tunings");
    for (limits, shape @ [rows, len]) in cases() {
        under(limits, |_, _| {
            let n = rows * len;
            let case = format!("seed {seed}: {limits:?} {shape:?}");
            let values = random_f32(&mut rng, n);
            let x = float_tensor(&values, shape, &device);
            for descending in [false, true] {
                let case = format!("{case} descending {descending}");
                let order = sort::reference::sort_rows(&values, rows, len, descending);
                let want_indices: Vec<i64> = order.iter().map(|&j| j as i64).collect();
                let want_bits: Vec<u32> = (0..n)
                    .map(|s| values[s / len * len + order[s]].to_bits())
                    .collect();
                let (sorted, indices, keys_only, args) = if descending {
                    let (v, i) = sieve_burn::sort_descending_with_indices(x.clone(), 1);
                    let keys = sieve_burn::sort_descending(x.clone(), 1);
                    (v, i, keys, sieve_burn::argsort_descending(x.clone(), 1))
                } else {
                    let (v, i) = sieve_burn::sort_with_indices(x.clone(), 1);
                    let keys = sieve_burn::sort(x.clone(), 1);
                    (v, i, keys, sieve_burn::argsort(x.clone(), 1))
                };
                assert_same(&bits(sorted), &want_bits, &format!("{case}: values"));
                assert_same(&i64s(indices), &want_indices, &format!("{case}: indices"));
                assert_same(&bits(keys_only), &want_bits, &format!("{case}: sort"));
                assert_same(&i64s(args), &want_indices, &format!("{case}: argsort"));
            }
            let ints: Vec<i32> = (0..n).map(|_| rng.random_range(-50..50)).collect();
            let order = sort::reference::sort_rows(&ints, rows, len, false);
            let want_values: Vec<i64> = (0..n)
                .map(|s| ints[s / len * len + order[s]] as i64)
                .collect();
            let (v, i) = sieve_burn::sort_with_indices(int_tensor(&ints, shape, &device), 1);
            assert_same(&i64s(v), &want_values, &format!("{case}: int values"));
            let want: Vec<i64> = order.iter().map(|&j| j as i64).collect();
            assert_same(&i64s(i), &want, &format!("{case}: int indices"));
        });
    }
}

/// topk, topk_with_indices, argtopk, bottomk_with_indices, topk_with_options (unsorted: the
/// same set), on Float rows and one Int case per shape.
#[test]
fn burn_topk_at_default_tunings() {
    let _device = serial();
    let device = Device::default();
    let (mut rng, seed) = rng("burn_topk_at_default_tunings");
    for (limits, shape @ [rows, len]) in cases() {
        under(limits, |_, _| {
            let n = rows * len;
            let values = random_f32(&mut rng, n);
            let x = float_tensor(&values, shape, &device);
            // k = len (every key) on the short rows only: it skips the search.
            let mut ks = vec![1, len / 3 + 1];
            if len < 300 {
                ks.push(len);
            }
            ks.dedup();
            for k in ks {
                let case = format!("seed {seed}: {limits:?} {shape:?} k {k}");
                for largest in [true, false] {
                    let case = format!("{case} largest {largest}");
                    let (indices, want) = check_first_k(&x, &values, &shape, 1, k, largest, &case);
                    if largest {
                        let v = sieve_burn::topk(x.clone(), k, 1);
                        assert_same(&bits(v), &want, &format!("{case}: topk"));
                        let i = sieve_burn::argtopk(x.clone(), k, 1);
                        assert_same(&i64s(i), &indices, &format!("{case}: argtopk"));
                    }
                }
                // Unsorted: the same set; compared as sorted index lists per row.
                let options = TopKOptions {
                    sorted: false,
                    ..TopKOptions::default()
                };
                let (_, i) = sieve_burn::topk_with_options(x.clone(), k, 1, options);
                let (want, _) = first_k_along(&values, &shape, 1, k, true);
                let per_row = |mut v: Vec<i64>| {
                    v.chunks_mut(k.max(1)).for_each(|row| row.sort());
                    v
                };
                let case = format!("{case}: unsorted");
                assert_same(&per_row(i64s(i)), &per_row(want), &case);
            }
            let ints: Vec<i32> = (0..n).map(|_| rng.random_range(-20..20)).collect();
            let k = len / 2 + 1;
            let (want, _) = first_k_along(&ints, &shape, 1, k, true);
            let (_, i) = sieve_burn::topk_with_indices(int_tensor(&ints, shape, &device), k, 1);
            let case = format!("seed {seed}: {limits:?} {shape:?} int k {k}");
            assert_same(&i64s(i), &want, &case);
        });
    }
}
