//! Every dtype through the radix sort (keys) and the top-k (values), issue 14: i8, i16, i32,
//! i64, u8, u16, u32, u64, f16, bf16, f32 and f64, against the CPU references
//! (`sort::reference::sort_rows`, `topk::reference::topk_rows`), bit for bit.
//!
//! Per dtype: rows of random keys (a third special values, many ties), of the dtype's
//! adversarial values alone (MIN, MAX, 0, and for floats -0.0, NaNs of several payloads and
//! both signs, +-inf, subnormals), all equal, sorted and reversed; lengths across the tiny
//! tunings' tiles and the default LSD tile; both orders / largest and smallest; default and
//! tiny tunings (5-bit digits, so 16-bit keys take passes that straddle the key's top). The
//! top-k runs every strategy that serves the dtype and checks how many counting passes the
//! boundary search queued (8- and 16-bit keys: no pass over bits every key has zero).
//!
//! A dtype the device lacks must be refused with `SieveError::UnsupportedDtype` naming it
//! (and is then listed as skipped on stderr); where the device has it, it must sort. 64-bit
//! keys and values are read as pairs of 32-bit words and need no device support: they must
//! run everywhere.

use crate::common;

use common::*;
use cubecl::prelude::Client;
use cubecl::server::Handle;
use half::{bf16, f16};
use rand::{Rng, rngs::StdRng};
use sieve::sort::reference::{SortKey, sort_rows};
use sieve::sort::{self, SortIo, SortOptions, SortOrder, SortProblem, SortStrategy, SortTuning};
use sieve::topk::{self, TopkIo, TopkOptions, TopkProblem, TopkStrategy, TopkTuning};
use sieve::{DeviceCaps, Dtype, SieveError};

const POISON: u32 = 0xDEAD_BEEF;

/// A host element of one dtype.
trait Elem: bytemuck::Pod + SortKey + std::fmt::Debug {
    const DTYPE: Dtype;
    /// The bit pattern, for comparisons NaN cannot spoil.
    fn bits(self) -> u64;
    /// The adversarial values: MIN, MAX, 0, +-1, and for floats -0.0, NaNs (payloads, both
    /// signs), +-inf, the extreme subnormals and the smallest normal.
    fn specials() -> Vec<Self>;
    /// One of a few small values (ties).
    fn small(rng: &mut StdRng) -> Self;
    /// Any bit pattern.
    fn any(rng: &mut StdRng) -> Self;
    /// Non-decreasing in `i` (ties where the dtype runs out of values).
    fn ramp(i: usize) -> Self;
}

macro_rules! int_elem {
    ($($t:ty => $dtype:expr),*) => {$(
        impl Elem for $t {
            const DTYPE: Dtype = $dtype;
            fn bits(self) -> u64 {
                self as u64
            }
            fn specials() -> Vec<Self> {
                vec![<$t>::MIN, <$t>::MAX, 0, 1, <$t>::MIN + 1, <$t>::MAX - 1, <$t>::MAX / 2,
                     (<$t>::MAX / 2).wrapping_add(1), (0 as $t).wrapping_sub(1)]
            }
            fn small(rng: &mut StdRng) -> Self {
                (rng.random_range(0..4u8) as $t).wrapping_sub(2)
            }
            fn any(rng: &mut StdRng) -> Self {
                rng.random()
            }
            fn ramp(i: usize) -> Self {
                <$t>::try_from(i).unwrap_or(<$t>::MAX)
            }
        }
    )*};
}
int_elem!(i8 => Dtype::I8, i16 => Dtype::I16, i32 => Dtype::I32, i64 => Dtype::I64,
          u8 => Dtype::U8, u16 => Dtype::U16, u32 => Dtype::U32, u64 => Dtype::U64);

macro_rules! float_elem {
    ($t:ty, $dtype:expr, $bits:ty, $from_f32:expr, [$($special:expr),*]) => {
        impl Elem for $t {
            const DTYPE: Dtype = $dtype;
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn specials() -> Vec<Self> {
                let mut out: Vec<$t> = vec![$(<$t>::from_bits($special)),*];
                out.extend([0.0f32, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY]
                    .map($from_f32));
                out.extend([<$t>::MIN, <$t>::MAX, <$t>::MIN_POSITIVE]);
                out
            }
            fn small(rng: &mut StdRng) -> Self {
                $from_f32(rng.random_range(-4i32..4) as f32 * 0.5)
            }
            fn any(rng: &mut StdRng) -> Self {
                <$t>::from_bits(rng.random::<$bits>())
            }
            fn ramp(i: usize) -> Self {
                $from_f32(i as f32 - 100.0)
            }
        }
    };
}
// NaNs: quiet and signalling, both signs, payloads; subnormals: the smallest and largest of
// both signs.
float_elem!(
    f32,
    Dtype::F32,
    u32,
    |x: f32| x,
    [
        0x7FC0_0000,
        0xFFC0_0000,
        0x7F80_0001,
        0xFFFF_FFFF,
        0x0000_0001,
        0x8000_0001,
        0x007F_FFFF,
        0x807F_FFFF
    ]
);
float_elem!(
    f64,
    Dtype::F64,
    u64,
    |x: f32| x as f64,
    [
        0x7FF8_0000_0000_0000,
        0xFFF8_0000_0000_0000,
        0x7FF0_0000_0000_0001,
        0x7FF0_0001_0000_0000,
        0xFFFF_FFFF_FFFF_FFFF,
        0x0000_0000_0000_0001,
        0x8000_0000_0000_0001,
        0x000F_FFFF_FFFF_FFFF,
        0x800F_FFFF_FFFF_FFFF,
        0x0000_0001_0000_0000,
        0x8000_0001_0000_0000
    ]
);
float_elem!(
    f16,
    Dtype::F16,
    u16,
    f16::from_f32,
    [
        0x7E00, 0xFE00, 0x7C01, 0xFFFF, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0200
    ]
);
float_elem!(
    bf16,
    Dtype::BF16,
    u16,
    bf16::from_f32,
    [
        0x7FC0, 0xFFC0, 0x7F81, 0xFFFF, 0x0001, 0x8001, 0x007F, 0x807F
    ]
);

/// 64-bit dtypes are read as 32-bit words: served on every device.
fn word_pairs(dtype: Dtype) -> bool {
    dtype.size_bytes() == 8
}

/// Whether this device must refuse `dtype` (and with exactly which error).
fn refused_here(caps: &DeviceCaps, dtype: Dtype) -> bool {
    !caps.supports(dtype) && !word_pairs(dtype)
}

fn assert_refused(result: Result<(), SieveError>, dtype: Dtype, what: &str) {
    match result {
        Err(SieveError::UnsupportedDtype { dtype: named, .. }) if named == dtype => {
            eprintln!("{what}: {dtype} skipped: the device lacks it (refused as expected)");
        }
        other => panic!(
            "{what}: {dtype} on a device without it: expected UnsupportedDtype, got {other:?}"
        ),
    }
}

/// The rows a case runs on, by pattern.
fn rows_of<T: Elem>(rng: &mut StdRng, pattern: &str, n: usize) -> Vec<T> {
    let specials = T::specials();
    match pattern {
        "random" => (0..n)
            .map(|_| match rng.random_range(0..10) {
                0..3 => specials[rng.random_range(0..specials.len())],
                3..7 => T::small(rng),
                _ => T::any(rng),
            })
            .collect(),
        "specials" => (0..n)
            .map(|_| specials[rng.random_range(0..specials.len())])
            .collect(),
        "all equal" => vec![specials[rng.random_range(0..specials.len())]; n],
        "sorted" => (0..n).map(T::ramp).collect(),
        "reversed" => (0..n).rev().map(T::ramp).collect(),
        other => panic!("no pattern {other}"),
    }
}

/// A poisoned output of `n` elements of `T`.
fn poisoned_for<T: Elem>(client: &Client, n: usize) -> Handle {
    poisoned(client, (n * size_of::<T>()).div_ceil(4).max(2), POISON)
}

/// Tiny LSD tiles (one plane of units, 2 keys each) and 5-bit digits everywhere: pass
/// boundaries that do not divide the key's bits; the in-cube sort with 2 keys per unit.
fn tiny_sort_tuning(caps: &DeviceCaps) -> SortTuning {
    SortTuning {
        units_per_cube: caps.plane_size_max.max(4).next_power_of_two(),
        elements_per_unit: 2,
        onesweep_elements_per_unit: 2,
        keys_only_elements_per_unit: 2,
        onesweep_keys_only_elements_per_unit: 2,
        radix_bits: 5,
        in_cube_radix_bits: 5,
        short_row_radix_bits: 3,
        in_cube_keys_per_unit: 2,
        ..SortTuning::for_device(caps)
    }
}

fn sort_once<T: Elem>(
    client: &Client,
    keys: &[T],
    rows: usize,
    len: usize,
    order: SortOrder,
    options: SortOptions,
) -> Result<(Vec<T>, Vec<i32>), SieveError> {
    let n = rows * len;
    let input = upload_padded(client, keys);
    let keys_out = poisoned_for::<T>(client, n);
    let indices_out = poisoned(client, n.max(1), POISON);
    sort::sort(
        client,
        SortIo {
            keys: &input,
            key_dtype: T::DTYPE,
            keys_out: Some(&keys_out),
            indices_out: Some(&indices_out),
            index_dtype: Dtype::I32,
        },
        SortProblem { rows, len },
        order,
        options,
    )?;
    Ok((
        download(client, keys_out, n),
        download(client, indices_out, n),
    ))
}

/// The permutation must be the reference's (stability included: a stable sort's is unique)
/// and the keys the input's bits moved by it.
fn check_sorted<T: Elem>(
    got: &(Vec<T>, Vec<i32>),
    keys: &[T],
    want: &[usize],
    len: usize,
    case: &str,
) {
    let want_indices: Vec<i32> = want.iter().map(|&i| i as i32).collect();
    assert_same(&got.1, &want_indices, &format!("{case}: permutation"));
    let got_bits: Vec<u64> = got.0.iter().map(|k| k.bits()).collect();
    let want_bits: Vec<u64> = want
        .iter()
        .enumerate()
        .map(|(slot, &i)| keys[(slot / len) * len + i].bits())
        .collect();
    assert_same(&got_bits, &want_bits, &format!("{case}: keys (bits)"));
}

fn sort_dtype<T: Elem>(client: &Client) {
    let caps = DeviceCaps::of(client);
    let (mut rng, seed) = rng(&format!("sort_every_dtype {}", T::DTYPE));
    if refused_here(&caps, T::DTYPE) {
        let keys = rows_of::<T>(&mut rng, "random", 8);
        let result = sort_once(
            client,
            &keys,
            1,
            8,
            SortOrder::Ascending,
            SortOptions::default(),
        );
        assert_refused(result.map(|_| ()), T::DTYPE, "sort");
        return;
    }
    if !caps.supports(T::DTYPE) {
        eprintln!(
            "sort: {} runs as 32-bit words (the device lacks the dtype)",
            T::DTYPE
        );
    }
    let tiny = tiny_sort_tuning(&caps);
    let tile = tiny.tile();
    let in_cube = SortTuning::for_device(&caps).in_cube_capacity(&caps);
    let tiny_in_cube = tiny.in_cube_capacity(&caps);
    let lengths = [
        (1, 1),
        (2, 5),
        (3, tile - 1),
        (2, tile + 1),
        (2, 301),
        (1, in_cube.max(2048) + 3),
    ];
    for (i, &(rows, len)) in lengths.iter().enumerate() {
        // Every pattern on one length (across tiny tiles), random data on all.
        let patterns: &[&str] = if i == 4 {
            &["random", "specials", "all equal", "sorted", "reversed"]
        } else {
            &["random"]
        };
        for pattern in patterns {
            let keys = rows_of::<T>(&mut rng, pattern, rows * len);
            for order in [SortOrder::Ascending, SortOrder::Descending] {
                let want = sort_rows(&keys, rows, len, order == SortOrder::Descending);
                let mut runs = vec![
                    ("auto", SortStrategy::Auto, None),
                    ("lsd", SortStrategy::Lsd, None),
                    ("lsd tiny", SortStrategy::Lsd, Some(tiny)),
                ];
                if !word_pairs(T::DTYPE) && len <= tiny_in_cube {
                    runs.push(("in_cube tiny", SortStrategy::InCube, Some(tiny)));
                }
                for (name, strategy, tuning) in runs {
                    let case = format!(
                        "seed {seed}: {} [{rows}, {len}] {pattern} {order:?} {name}",
                        T::DTYPE
                    );
                    let got = sort_once(
                        client,
                        &keys,
                        rows,
                        len,
                        order,
                        SortOptions { strategy, tuning },
                    )
                    .unwrap_or_else(|e| panic!("{case}: {e}"));
                    check_sorted(&got, &keys, &want, len, &case);
                }
            }
        }
    }
    if word_pairs(T::DTYPE) {
        let keys = rows_of::<T>(&mut rng, "random", 4);
        let options = SortOptions {
            strategy: SortStrategy::InCube,
            tuning: None,
        };
        let e = sort_once(client, &keys, 1, 4, SortOrder::Ascending, options)
            .expect_err("64-bit keys in one cube are refused")
            .to_string();
        assert!(
            e.contains("options.strategy") && e.contains("64-bit"),
            "{e}"
        );
    }
}

#[test]
fn sort_every_dtype() {
    let client = client();
    sort_dtype::<i8>(&client);
    sort_dtype::<i16>(&client);
    sort_dtype::<i32>(&client);
    sort_dtype::<i64>(&client);
    sort_dtype::<u8>(&client);
    sort_dtype::<u16>(&client);
    sort_dtype::<u32>(&client);
    sort_dtype::<u64>(&client);
    sort_dtype::<f16>(&client);
    sort_dtype::<bf16>(&client);
    sort_dtype::<f32>(&client);
    sort_dtype::<f64>(&client);
}

/// The top-k's tuning for `shape`: the device's or tiny tiles (one plane of units, 2 keys
/// each, few cubes per pass), with the radix select one cube per row or device-wide, and the
/// minima bound tried for every `k` it can serve or never.
fn topk_tuning(caps: &DeviceCaps, tiny: bool, row_cube: bool, bound: bool) -> TopkTuning {
    let base = if tiny {
        tiny_topk_tuning(caps)
    } else {
        TopkTuning::for_device(caps)
    };
    TopkTuning {
        row_cube_max_len: if row_cube { usize::MAX } else { 0 },
        bound_units_per_k: if bound { 1 } else { 0 },
        ..base
    }
}

struct TopkGot<T> {
    values: Vec<T>,
    indices: Vec<i32>,
    passes: u32,
}

fn topk_once<T: Elem>(
    client: &Client,
    keys: &[T],
    problem: TopkProblem,
    options: TopkOptions,
) -> Result<TopkGot<T>, SieveError> {
    let out = problem.rows * problem.k;
    let input = upload_padded(client, keys);
    let values_out = poisoned_for::<T>(client, out);
    let indices_out = poisoned(client, out.max(1), POISON);
    let report = topk::topk(
        client,
        TopkIo {
            values: &input,
            value_dtype: T::DTYPE,
            values_out: Some(&values_out),
            indices_out: Some(&indices_out),
            index_dtype: Dtype::I32,
        },
        problem,
        options,
    )?;
    Ok(TopkGot {
        values: download(client, values_out, out),
        indices: download(client, indices_out, out),
        passes: report.counting_passes,
    })
}

fn topk_dtype<T: Elem>(client: &Client) {
    let caps = DeviceCaps::of(client);
    let (mut rng, seed) = rng(&format!("topk_every_dtype {}", T::DTYPE));
    if refused_here(&caps, T::DTYPE) {
        let keys = rows_of::<T>(&mut rng, "random", 8);
        let problem = TopkProblem {
            rows: 1,
            len: 8,
            k: 2,
        };
        let result = topk_once(client, &keys, problem, TopkOptions::default());
        assert_refused(result.map(|_| ()), T::DTYPE, "topk");
        return;
    }
    if !caps.supports(T::DTYPE) {
        eprintln!(
            "topk: {} runs as 32-bit words (the device lacks the dtype)",
            T::DTYPE
        );
    }
    let key_bits = 8 * T::DTYPE.size_bytes().min(4) as u32;
    let wide = word_pairs(T::DTYPE);
    let rank_capacity = TopkTuning::for_device(&caps).rank_capacity(&caps);
    // (name, strategy, tuning, counting passes when a search runs)
    let mut runs: Vec<(&str, TopkStrategy, Option<TopkTuning>, u32)> = vec![
        ("auto", TopkStrategy::Auto, None, u32::MAX),
        (
            "sort_and_slice tiny",
            TopkStrategy::SortAndSlice,
            Some(topk_tuning(&caps, true, true, false)),
            0,
        ),
    ];
    let selects = [
        ("rank", TopkStrategy::RankByCounting, false, true, true, 0),
        (
            "rank no bound",
            TopkStrategy::RankByCounting,
            false,
            true,
            false,
            0,
        ),
        (
            "row cube",
            TopkStrategy::RadixSelect,
            false,
            true,
            true,
            key_bits / 8,
        ),
        (
            "row cube digits tiny",
            TopkStrategy::RadixSelect,
            true,
            true,
            false,
            key_bits / 8,
        ),
        (
            "device-wide tiny",
            TopkStrategy::RadixSelect,
            true,
            false,
            false,
            // 8-bit digits: these rows are shorter than 2^16 keys (longer rows of 32-bit keys
            // take 11, 11 and 10 bits: `topk::radix_select_reports_its_counting_passes`).
            key_bits / 8,
        ),
    ];
    for (name, strategy, tiny, row_cube, bound, passes) in selects {
        let tuning = Some(topk_tuning(&caps, tiny, row_cube, bound));
        if wide {
            // Only the sort serves 64-bit values: every other strategy refuses them by name.
            let keys = rows_of::<T>(&mut rng, "random", 8);
            let problem = TopkProblem {
                rows: 1,
                len: 8,
                k: 2,
            };
            let options = TopkOptions {
                strategy,
                tuning,
                ..TopkOptions::default()
            };
            let e = topk_once(client, &keys, problem, options)
                .err()
                .unwrap_or_else(|| panic!("{} values with {name}: not refused", T::DTYPE))
                .to_string();
            assert!(
                e.contains("options.strategy") && e.contains("sort_and_slice"),
                "{e}"
            );
        } else {
            runs.push((name, strategy, tuning, passes));
        }
    }
    let tile = 2 * caps.plane_size_max.max(4).next_power_of_two() as usize;
    let lengths = [(2, 7), (3, 3 * tile + 1), (2, 1500)];
    for (i, &(rows, len)) in lengths.iter().enumerate() {
        let patterns: &[&str] = if i == 1 {
            &["random", "specials", "all equal", "sorted", "reversed"]
        } else {
            &["random"]
        };
        for pattern in patterns {
            let keys = rows_of::<T>(&mut rng, pattern, rows * len);
            for largest in [true, false] {
                // Every `k` (the minima bound, digit passes, no search) on random rows.
                let ks: &[usize] = if *pattern == "random" {
                    &[1, len / 2, len]
                } else {
                    &[len / 2]
                };
                for &k in ks {
                    let want = sieve::topk::reference::topk_rows(&keys, rows, len, k, largest);
                    for &(name, strategy, tuning, passes) in &runs {
                        if strategy == TopkStrategy::RankByCounting && len > rank_capacity {
                            continue;
                        }
                        for sorted in [true, false] {
                            if !sorted && (k != len / 2 || *pattern != "random") {
                                continue;
                            }
                            let case = format!(
                                "seed {seed}: {} [{rows}, {len}] {pattern} k {k} largest \
                                 {largest} sorted {sorted} {name}",
                                T::DTYPE
                            );
                            let problem = TopkProblem { rows, len, k };
                            let options = TopkOptions {
                                largest,
                                sorted,
                                strategy,
                                tuning,
                            };
                            let got = topk_once(client, &keys, problem, options)
                                .unwrap_or_else(|e| panic!("{case}: {e}"));
                            check_topk(&got, &keys, &want, problem, sorted, &case);
                            // The boundary search runs over the key's own bits only.
                            if passes != u32::MAX && k < len {
                                assert_eq!(got.passes, passes, "{case}: counting passes");
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Sorted: the reference's indices (unique: the stable order); unsorted: the same set per
/// row. Values: the input's bits at the indices.
fn check_topk<T: Elem>(
    got: &TopkGot<T>,
    keys: &[T],
    want: &[usize],
    problem: TopkProblem,
    sorted: bool,
    case: &str,
) {
    let TopkProblem { rows, len, k } = problem;
    let mut indices = got.indices.clone();
    let mut expected: Vec<i32> = want.iter().map(|&i| i as i32).collect();
    if !sorted {
        for r in 0..rows {
            indices[r * k..(r + 1) * k].sort_unstable();
            expected[r * k..(r + 1) * k].sort_unstable();
        }
    }
    assert_same(&indices, &expected, &format!("{case}: indices"));
    let got_bits: Vec<u64> = got.values.iter().map(|v| v.bits()).collect();
    let want_bits: Vec<u64> = got
        .indices
        .iter()
        .enumerate()
        .map(|(slot, &i)| keys[(slot / k) * len + i as usize].bits())
        .collect();
    assert_same(&got_bits, &want_bits, &format!("{case}: values (bits)"));
}

#[test]
fn topk_every_dtype() {
    let _serial = serial();
    let client = client();
    topk_dtype::<i8>(&client);
    topk_dtype::<i16>(&client);
    topk_dtype::<i32>(&client);
    topk_dtype::<i64>(&client);
    topk_dtype::<u8>(&client);
    topk_dtype::<u16>(&client);
    topk_dtype::<u32>(&client);
    topk_dtype::<u64>(&client);
    topk_dtype::<f16>(&client);
    topk_dtype::<bf16>(&client);
    topk_dtype::<f32>(&client);
    topk_dtype::<f64>(&client);
}
