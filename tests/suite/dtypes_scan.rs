//! Every sieve dtype through the scan and the compaction (issue 14, item 1), against the CPU
//! twins, **bit for bit**: u32, i32, f32, i64, f16, bf16, i8, i16, u8, u16, u64 and f64.
//!
//! - Scans: every dtype x every [`ScanOp`] x both kinds x every strategy the device runs, at
//!   tiny and default tunings, over lengths across vector, tile and plane boundaries; rows of
//!   random values with a few specials, of dense specials (the dtype's MIN and MAX, wrapping
//!   sums and products; NaN with distinct payloads, +-inf, +-0.0 and subnormals for floats),
//!   of one repeated value, and sorted. 8- and 16-bit integers accumulate in 32 bits and are
//!   truncated at the store, so they wrap in their own width exactly as the reference does.
//! - Compaction: every dtype's values through masks (every placement: select, padded rows,
//!   split), comparisons with thresholds (argwhere-like: positions and counts only; for
//!   integers fractional, out-of-range, infinite and NaN thresholds, which compare exactly),
//!   and the one-bit split of every integer dtype.
//!
//! A dtype the device lacks (on lavapipe's WGSL path: the 8- and 16-bit integers and bf16)
//! is not run: each test prints which it skipped and asserts that the call is refused with
//! `SieveError::UnsupportedDtype` naming it.
//!
//! Exactness: float sums add halves and products multiply by +-1, +-2 and +-0.5 (at most 120
//! factors that are not +-1 a row), so every partial result in any association order is exact
//! in the accumulator (f32 for f16 and bf16) and only the store rounds, as in the reference.
//! MIN, MAX and subnormals of floats enter minima, maxima and the compaction, whose outputs
//! are input elements. Where the contract leaves bits open the comparison does too: a NaN of
//! a sum or product may carry any payload, a zero sum either sign, and f16 and bf16 go through
//! the f32 accumulator and back, which may canonicalise a NaN's payload (still a NaN). A
//! device that compares a dtype's subnormals as zeros (NVIDIA's Vulkan driver, for f32) is
//! probed for and printed, and subnormals are then left out of its comparisons.

use crate::common;

use common::*;
use cubecl::prelude::Client;
use cubecl::server::Handle;
use half::{bf16, f16};
use rand::{Rng, rngs::StdRng};
use sieve::compact::reference::{self as compact_ref, FlagElement};
use sieve::compact::{
    self, CompactIo, CompactOptions, CompactProblem, CompactStrategy, FlagRule, Flags, Rejected,
};
use sieve::scan::reference::{self as scan_ref, ScanElement};
use sieve::scan::{self, ScanKind, ScanOp, ScanOptions, ScanProblem, ScanStrategy, ScanTuning};
use sieve::{DeviceCaps, Dtype, SieveError};

const KINDS: [ScanKind; 2] = [ScanKind::Inclusive, ScanKind::Exclusive];
const PLACEMENTS: [Rejected; 3] = [Rejected::Drop, Rejected::Zero, Rejected::Keep];

/// Lengths across vector widths (len % 4), plane widths (16, 32, 64) and the tiny tiles.
const LENGTHS: [usize; 16] = [1, 2, 3, 4, 5, 7, 9, 16, 31, 32, 33, 63, 65, 128, 129, 257];

/// An element type under test.
pub(crate) trait El: ScanElement + FlagElement + bytemuck::Pod + std::fmt::Debug {
    const DTYPE: Dtype;
    /// The f16 and bf16 scans go through the f32 accumulator and back: a NaN stays a NaN,
    /// its payload may not.
    const WIDENED: bool = false;
    /// Adversarial values fit for `op` (see the module docs: all of them for minima, maxima
    /// and the compaction, `op == None`); float subnormals only when `subnormals`.
    fn specials(op: Option<ScanOp>, subnormals: bool) -> Vec<Self>;
    /// The smallest positive subnormal (floats).
    fn subnormal() -> Option<Self>;
    /// An ordinary value for `op`; `budget` counts a row's float product factors that are
    /// not +-1.
    fn ordinary(rng: &mut StdRng, op: ScanOp, budget: &mut u32) -> Self;
    /// Thresholds the comparison flags are tested with.
    fn thresholds() -> Vec<f64>;
}

macro_rules! int_el {
    ($t:ty, $dtype:expr) => {
        impl El for $t {
            const DTYPE: Dtype = $dtype;
            fn specials(_op: Option<ScanOp>, _subnormals: bool) -> Vec<$t> {
                vec![
                    <$t>::MIN,
                    <$t>::MAX,
                    0,
                    1,
                    (0 as $t).wrapping_sub(1),
                    <$t>::MAX / 2 + 1,
                ]
            }
            fn subnormal() -> Option<$t> {
                None
            }
            fn ordinary(rng: &mut StdRng, op: ScanOp, _budget: &mut u32) -> $t {
                let x: $t = rng.random();
                match op {
                    // Mostly odd factors, so products wrap without collapsing to zero.
                    ScanOp::Prod if rng.random_bool(0.9) => x | 1,
                    // Ties among full-range values.
                    ScanOp::Min | ScanOp::Max if rng.random_bool(0.3) => {
                        rng.random_range(0..4) as $t
                    }
                    _ => x,
                }
            }
            fn thresholds() -> Vec<f64> {
                let (min, max) = (<$t>::MIN as f64, <$t>::MAX as f64);
                vec![
                    0.0,
                    1.0,
                    2.5,
                    -2.5,
                    -1.0,
                    min,
                    max,
                    min - 0.5,
                    max + 0.5,
                    300.0,
                    -300.0,
                    1e30,
                    -1e30,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NAN,
                ]
            }
        }
    };
}
int_el!(u32, Dtype::U32);
int_el!(i32, Dtype::I32);
int_el!(i64, Dtype::I64);
int_el!(i8, Dtype::I8);
int_el!(i16, Dtype::I16);
int_el!(u8, Dtype::U8);
int_el!(u16, Dtype::U16);
int_el!(u64, Dtype::U64);

/// A float type under test: `$from` makes one from an f64 (exact for the values used),
/// `$bits` one from its bits; `$nans` are NaNs with distinct payloads and signs, `$subnormals`
/// the smallest and largest positive subnormals and the smallest negative one.
macro_rules! float_el {
    ($t:ty, $dtype:expr, $widened:expr, $from:expr, $bits:expr, $nans:expr, $subnormals:expr) => {
        impl El for $t {
            const DTYPE: Dtype = $dtype;
            const WIDENED: bool = $widened;
            fn specials(op: Option<ScanOp>, subnormals: bool) -> Vec<$t> {
                let from: fn(f64) -> $t = $from;
                let bits: fn(u64) -> $t = $bits;
                let mut s: Vec<$t> = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, 1.0, -1.0]
                    .into_iter()
                    .map(from)
                    .collect();
                s.extend($nans.into_iter().map(bits));
                if !matches!(op, Some(ScanOp::Sum | ScanOp::Prod)) {
                    if subnormals {
                        s.extend($subnormals.into_iter().map(bits));
                    }
                    s.extend([<$t>::MAX, <$t>::MIN]);
                }
                s
            }
            fn subnormal() -> Option<$t> {
                let bits: fn(u64) -> $t = $bits;
                Some(bits(1))
            }
            fn ordinary(rng: &mut StdRng, op: ScanOp, budget: &mut u32) -> $t {
                let from: fn(f64) -> $t = $from;
                from(match op {
                    // Halves: every partial sum of a row is exact.
                    ScanOp::Sum => rng.random_range(-4i32..=4) as f64 * 0.5,
                    ScanOp::Prod => {
                        let sign = if rng.random_bool(0.5) { -1.0 } else { 1.0 };
                        if *budget > 0 && rng.random_bool(0.4) {
                            *budget -= 1;
                            sign * if rng.random_bool(0.5) { 2.0 } else { 0.5 }
                        } else {
                            sign
                        }
                    }
                    // Many ties (small integers, both zeros) among arbitrary values.
                    ScanOp::Min | ScanOp::Max => match rng.random_range(0..3) {
                        0 => rng.random_range(-3i32..=3) as f64,
                        1 => {
                            if rng.random_bool(0.5) {
                                0.0
                            } else {
                                -0.0
                            }
                        }
                        _ => rng.random_range(-1000.0f64..1000.0),
                    },
                })
            }
            fn thresholds() -> Vec<f64> {
                vec![
                    0.0,
                    -0.0,
                    1.0,
                    -2.0,
                    0.5,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NAN,
                ]
            }
        }
    };
}
float_el!(
    f32,
    Dtype::F32,
    false,
    |x| x as f32,
    |b| f32::from_bits(b as u32),
    [0x7FC0_0000u64, 0x7FC0_1234, 0xFFC0_0042],
    [1u64, 0x007F_FFFF, 0x8000_0001]
);
float_el!(
    f64,
    Dtype::F64,
    false,
    |x| x,
    f64::from_bits,
    [
        0x7FF8_0000_0000_0000u64,
        0x7FF8_0000_0000_1234,
        0xFFF8_0000_0000_0042
    ],
    [1u64, 0x000F_FFFF_FFFF_FFFF, 0x8000_0000_0000_0001]
);
float_el!(
    f16,
    Dtype::F16,
    true,
    f16::from_f64,
    |b| f16::from_bits(b as u16),
    [0x7E00u64, 0x7E12, 0xFE42],
    [1u64, 0x03FF, 0x8001]
);
float_el!(
    bf16,
    Dtype::BF16,
    true,
    bf16::from_f64,
    |b| bf16::from_bits(b as u16),
    [0x7FC0u64, 0x7FC2, 0xFFC1],
    [1u64, 0x007F, 0x8001]
);

/// Runs `$f::<T>$args` for every `T` listed.
macro_rules! each_type {
    ([$($t:ty),*] $f:ident $args:tt) => {
        $($f::<$t> $args;)*
    };
}

/// Runs `$f::<T>$args` for every dtype.
macro_rules! each_dtype {
    ($f:ident $args:tt) => {
        each_type!([u32, i32, f32, i64, f16, bf16, i8, i16, u8, u16, u64, f64] $f $args)
    };
}

/// A buffer of `bytes` bytes (padded to whole words), every byte `poison`.
pub(crate) fn poison_bytes(client: &Client, bytes: usize, poison: u8) -> Handle {
    upload(client, &vec![poison; bytes.next_multiple_of(4).max(4)])
}

/// Whether the device has `T`'s dtype. If not, prints that `test` skips it and asserts that
/// a scan and a compaction of it are refused with `UnsupportedDtype` naming it.
fn supported<T: El>(s: &Setup) -> bool {
    let Setup {
        client, caps, test, ..
    } = s;
    let dtype = T::DTYPE;
    if caps.supports(dtype) {
        return true;
    }
    eprintln!(
        "{test}: skipped {dtype}: the device ({}) lacks it; checking that it is refused",
        caps.describe()
    );
    let buffer = client.empty(64);
    let refused = |e: SieveError, what: &str| match e {
        SieveError::UnsupportedDtype { dtype: named, .. } => {
            assert_eq!(named, dtype, "{test}: {what} of {dtype}: wrong dtype named")
        }
        other => panic!("{test}: {what} of {dtype}: expected UnsupportedDtype, got {other}"),
    };
    let e = scan::scan_op(
        client,
        &buffer,
        &client.empty(64),
        ScanProblem { rows: 1, len: 4 },
        dtype,
        ScanOp::Sum,
        ScanKind::Inclusive,
        ScanOptions::default(),
    )
    .expect_err("the scan of a dtype the device lacks must be refused");
    refused(e, "scan");
    let counts = client.empty(64);
    let e = compact::compact(
        client,
        Flags::Compare {
            rule: FlagRule::Greater,
            threshold: 0.0,
        },
        CompactIo {
            values: Some(&buffer),
            value_dtype: dtype,
            values_out: Some(&client.empty(64)),
            indices_out: None,
            counts: &counts,
            index_dtype: Dtype::I32,
        },
        CompactProblem { rows: 1, len: 4 },
        Rejected::Drop,
        CompactOptions::default(),
    )
    .expect_err("the compaction of a dtype the device lacks must be refused");
    refused(e, "compaction");
    false
}

/// Whether the device compares subnormals of `T` as zeros. NVIDIA's Vulkan driver flushes
/// f32 subnormals (CubeCL's SPIR-V does not ask to preserve them), so there a subnormal ties
/// with zero in minima, maxima and threshold flags, which then differ from the reference.
/// Probed with the compaction (is the smallest positive subnormal `> 0`?); when they are
/// flushed, the tests print so and leave subnormals out of comparisons (masks still move
/// them).
fn flushes_subnormals<T: El>(client: &Client, test: &str) -> bool {
    let Some(subnormal) = T::subnormal() else {
        return false;
    };
    let input = upload_padded(client, &[subnormal]);
    let counts = poison_bytes(client, 4, POISON);
    compact::compact(
        client,
        Flags::Compare {
            rule: FlagRule::Greater,
            threshold: 0.0,
        },
        CompactIo {
            values: Some(&input),
            value_dtype: T::DTYPE,
            values_out: None,
            indices_out: None,
            counts: &counts,
            index_dtype: Dtype::I32,
        },
        CompactProblem { rows: 1, len: 1 },
        Rejected::Drop,
        CompactOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{test}: subnormal probe of {}: {e}", T::DTYPE));
    let flushed = download::<i32>(client, counts, 1) == [0];
    if flushed {
        eprintln!(
            "{test}: the device flushes {} subnormals to zero in comparisons: left out of \
             minima, maxima and threshold flags",
            T::DTYPE
        );
    }
    flushed
}

// ---------------------------------------------------------------------------------------
// Scans

/// The scan strategies `T` runs with on this device: reduce-then-scan always; the look-back
/// where the runtime promises forward progress and has 64-bit atomics, for 32-bit
/// accumulators (it deadlocks on software Vulkan).
fn scan_strategies<T: El>(caps: &DeviceCaps) -> Vec<ScanStrategy> {
    let mut s = vec![ScanStrategy::ReduceThenScan];
    if caps.forward_progress && caps.atomic_u64 && T::DTYPE.accumulator().size_bytes() == 4 {
        s.push(ScanStrategy::DecoupledLookback);
    }
    s
}

/// Rows of `len` for `op`: random with a few specials, dense specials, one value repeated,
/// sorted (no NaN).
fn scan_rows<T: El>(rng: &mut StdRng, len: usize, op: ScanOp, subnormals: bool) -> Vec<T> {
    let specials = T::specials(Some(op), subnormals);
    let mut rows = Vec::with_capacity(4 * len);
    for (special, sorted) in [(0.05, false), (0.5, false), (1.0, false), (0.1, true)] {
        // At most 120 product factors of magnitude 2 or 0.5 per row: no partial product
        // leaves f32's normal range, however it is associated.
        let mut budget = 120u32;
        let mut row: Vec<T> = (0..len)
            .map(|_| {
                if rng.random_bool(special) {
                    specials[rng.random_range(0..specials.len())]
                } else {
                    T::ordinary(rng, op, &mut budget)
                }
            })
            .collect();
        if special == 1.0 {
            // One special value repeated.
            let v = row[0];
            row.iter_mut().for_each(|x| *x = v);
        }
        if sorted {
            row.retain(|x| !x.is_nan());
            row.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
            row.resize(len, T::ordinary(rng, op, &mut 0));
        }
        rows.extend(row);
    }
    rows
}

/// Device output equals the reference bit for bit, but where the contract leaves bits open
/// (see the module docs).
pub(crate) fn assert_scan_bits<T: El>(got: &[T], want: &[T], op: ScanOp, case: &str) {
    let any_nan = T::WIDENED || matches!(op, ScanOp::Sum | ScanOp::Prod);
    assert_bits_but(got, want, any_nan, op == ScanOp::Sum, case);
}

/// Bit-exact comparison, but where a contract leaves bits open: any NaN payload
/// (`any_nan`), either sign of a zero (`any_zero`).
pub(crate) fn assert_bits_but<T: ScanElement + bytemuck::Pod + std::fmt::Debug>(
    got: &[T],
    want: &[T],
    any_nan: bool,
    any_zero: bool,
    case: &str,
) {
    assert_eq!(got.len(), want.len(), "{case}: length");
    let zero = |x: T| x == T::narrow(T::zero());
    let bad: Vec<usize> = (0..got.len())
        .filter(|&i| {
            bytemuck::bytes_of(&got[i]) != bytemuck::bytes_of(&want[i])
                && !(any_nan && got[i].is_nan() && want[i].is_nan())
                && !(any_zero && zero(got[i]) && zero(want[i]))
        })
        .collect();
    if let Some(&first) = bad.first() {
        panic!(
            "{case}: {}/{} elements differ; first at {first}: got {:?}, expected {:?}",
            bad.len(),
            got.len(),
            got[first],
            want[first]
        );
    }
}

/// Scans `data` (`[rows, len]`) with `op`, both kinds, into a poisoned buffer and compares
/// with the reference. Returns the strategy that ran.
pub(crate) fn check_scan<T: El>(
    client: &Client,
    data: &[T],
    rows: usize,
    len: usize,
    op: ScanOp,
    options: ScanOptions,
    case: &str,
) -> ScanStrategy {
    let input = upload_padded(client, data);
    let mut ran = options.strategy;
    for kind in KINDS {
        // Every byte 0xFF (NaN for floats, -1 / MAX for integers): unwritten outputs show.
        let output = poison_bytes(client, rows * len * T::DTYPE.size_bytes(), 0xFF);
        ran = scan::scan_op(
            client,
            &input,
            &output,
            ScanProblem { rows, len },
            T::DTYPE,
            op,
            kind,
            options,
        )
        .unwrap_or_else(|e| panic!("{case}: scan_op failed: {e}"));
        let got: Vec<T> = download(client, output, rows * len);
        let want = scan_ref::scan_rows_op(data, rows, len, op, kind == ScanKind::Exclusive);
        assert_scan_bits(
            &got,
            &want,
            op,
            &format!(
                "{case} {} {} {kind:?} {ran:?} rows={rows} len={len}",
                T::DTYPE,
                op.name()
            ),
        );
    }
    ran
}

/// Every operator, strategy and length for `T` (or its refusal where the device lacks it);
/// only the dtypes `SIEVE_DTYPES` names where it is set (`dtypes_ops::chosen`: one process
/// per dtype, as NVRTC compiles every dtype x op x tuning's kernels one after another).
fn scan_dtype<T: El>(s: &Setup, rng: &mut StdRng, lengths: &[usize], tuning: Option<ScanTuning>) {
    if !crate::dtypes_ops::chosen(T::DTYPE) {
        eprintln!("{}: {} not chosen by SIEVE_DTYPES", s.test, T::DTYPE);
        return;
    }
    if !supported::<T>(s) {
        return;
    }
    let Setup {
        client, caps, test, ..
    } = s;
    let subnormals = !flushes_subnormals::<T>(client, test);
    for strategy in scan_strategies::<T>(caps) {
        let options = ScanOptions { strategy, tuning };
        for op in ScanOp::ALL {
            for &len in lengths {
                let data = scan_rows::<T>(rng, len, op, subnormals);
                check_scan(client, &data, 4, len, op, options, test);
            }
        }
    }
}

#[test]
fn scan_every_dtype_op_and_kind_at_tiny_tunings() {
    let (s, mut rng) = Setup::seeded("scan_every_dtype_op_and_kind_at_tiny_tunings");
    // A tile is 4-16 elements on lavapipe, a plane or two of vectors elsewhere: these rows
    // cross many tiles and the tile sums recurse.
    let tuning = Some(tiny_scan_tuning(&s.caps));
    each_dtype!(scan_dtype(&s, &mut rng, &LENGTHS, tuning));
}

#[test]
fn scan_every_dtype_op_and_kind_at_default_tunings() {
    let (s, mut rng) = Setup::seeded("scan_every_dtype_op_and_kind_at_default_tunings");
    // The reduce-then-scan's default tile (the look-back's is twice as long): rows of one
    // tile and a bit, and of a few tiles, besides short ones.
    let tile = s.default_scan_tile();
    each_dtype!(scan_dtype(
        &s,
        &mut rng,
        &[5, 33, tile - 1, tile + 1, 3 * tile + 4],
        None
    ));
}

/// Hand-picked rows: wrapping in the dtype's own width, the dtype's extremes as the exclusive
/// minimum's and maximum's identities (not the 32-bit accumulator's), and the reference
/// agreeing with hand-computed values.
#[test]
fn scan_narrow_integers_wrap_in_their_width() {
    let s = Setup::new("scan_narrow_integers_wrap_in_their_width");
    fn case<T: El>(s: &Setup, input: &[T], expected: &[(ScanOp, bool, Vec<T>)]) {
        let test = s.test;
        for (op, exclusive, want) in expected {
            let reference = scan_ref::scan_rows_op(input, 1, input.len(), *op, *exclusive);
            assert_eq!(&reference, want, "{test}: reference {} {op:?}", T::DTYPE);
        }
        if !supported::<T>(s) {
            return;
        }
        for op in ScanOp::ALL {
            check_scan(
                &s.client,
                input,
                1,
                input.len(),
                op,
                ScanOptions::default(),
                test,
            );
        }
    }
    use ScanOp::{Max, Min, Prod, Sum};
    case::<i8>(
        &s,
        &[100, 100, -128, 3],
        &[
            (Sum, false, vec![100, -56, 72, 75]),
            (Prod, false, vec![100, 16, 0, 0]),
            (Min, true, vec![i8::MAX, 100, 100, -128]),
            (Max, true, vec![i8::MIN, 100, 100, 100]),
        ],
    );
    case::<u8>(
        &s,
        &[200, 100, 3, 255],
        &[
            (Sum, false, vec![200, 44, 47, 46]),
            (Prod, false, vec![200, 32, 96, 160]),
            (Min, true, vec![u8::MAX, 200, 100, 3]),
            (Max, true, vec![0, 200, 200, 200]),
        ],
    );
    case::<i16>(
        &s,
        &[i16::MAX, 1, -2, 300],
        &[
            (Sum, false, vec![i16::MAX, i16::MIN, 32766, -32470]),
            (Min, true, vec![i16::MAX, i16::MAX, 1, -2]),
            (Max, true, vec![i16::MIN, i16::MAX, i16::MAX, i16::MAX]),
        ],
    );
    case::<u16>(
        &s,
        &[300, 300, 65535, 2],
        &[
            (Sum, false, vec![300, 600, 599, 601]),
            (Prod, false, vec![300, 24464, 41072, 16608]),
            (Min, true, vec![u16::MAX, 300, 300, 300]),
        ],
    );
    case::<u64>(
        &s,
        &[u64::MAX, 2, 1 << 63, 5],
        &[
            (Sum, false, vec![u64::MAX, 1, (1 << 63) + 1, (1 << 63) + 6]),
            (Prod, false, vec![u64::MAX, u64::MAX - 1, 0, 0]),
            (Min, true, vec![u64::MAX, u64::MAX, 2, 2]),
        ],
    );
}

/// 64-bit accumulators (i64, u64, f64) take the reduce-then-scan: `Auto` picks it on every
/// runtime, and a forced look-back is refused by name (its status words carry 32 bits).
#[test]
fn scan_64_bit_accumulators_take_reduce_then_scan() {
    fn case<T: El>(s: &Setup) {
        if !supported::<T>(s) {
            return;
        }
        let Setup { client, test, .. } = s;
        let data: Vec<T> = T::specials(Some(ScanOp::Sum), false);
        let ran = check_scan(
            client,
            &data,
            1,
            data.len(),
            ScanOp::Sum,
            ScanOptions::default(),
            test,
        );
        assert_eq!(
            ran,
            ScanStrategy::ReduceThenScan,
            "{test}: Auto for {}",
            T::DTYPE
        );
        let buffer = upload_padded(client, &data);
        let e = scan::scan_op(
            client,
            &buffer,
            &client.empty(64),
            ScanProblem {
                rows: 1,
                len: data.len(),
            },
            T::DTYPE,
            ScanOp::Sum,
            ScanKind::Inclusive,
            ScanOptions {
                strategy: ScanStrategy::DecoupledLookback,
                tuning: None,
            },
        )
        .expect_err("a forced look-back of a 64-bit accumulator must be refused");
        let message = e.to_string();
        assert!(
            matches!(e, SieveError::UnsupportedStrategy { .. })
                && message.contains("decoupled_lookback"),
            "{test}: {}: {message}",
            T::DTYPE
        );
    }
    let s = Setup::new("scan_64_bit_accumulators_take_reduce_then_scan");
    each_type!([i64, u64, f64] case(&s));
}

// ---------------------------------------------------------------------------------------
// Compaction

/// Compaction strategies for `rejected` on this device: the portable ones always, the
/// look-back where the runtime promises forward progress (CUDA, HIP).
fn compact_strategies(caps: &DeviceCaps, rejected: Rejected) -> Vec<CompactStrategy> {
    let mut s = vec![CompactStrategy::Scatter, CompactStrategy::Gather];
    if caps.forward_progress && caps.atomic_u64 && rejected != Rejected::Keep {
        s.push(CompactStrategy::ScatterLookback);
    }
    s
}

/// Random values with many specials of every kind (NaN payloads, MIN, MAX, subnormals).
fn compact_values<T: El>(rng: &mut StdRng, n: usize, subnormals: bool) -> Vec<T> {
    let specials = T::specials(None, subnormals);
    (0..n)
        .map(|_| {
            if rng.random_bool(0.3) {
                specials[rng.random_range(0..specials.len())]
            } else {
                T::ordinary(rng, ScanOp::Min, &mut 0)
            }
        })
        .collect()
}

const POISON: u8 = 0xEE;

/// One compaction of `values` (`[rows, len]`) into poisoned outputs, compared with the
/// reference for `flags_want`: values bit for bit, i32 positions, counts; slots the
/// reference leaves unwritten must still hold the poison. Values are written only when
/// `with_values`.
#[allow(clippy::too_many_arguments)]
fn check_compaction<T: El>(
    client: &Client,
    values: &[T],
    flags: Flags<'_>,
    flags_want: &[bool],
    (rows, len): (usize, usize),
    rejected: Rejected,
    with_values: bool,
    options: CompactOptions,
    case: &str,
) {
    let n = rows * len;
    let input = upload_padded(client, values);
    let values_out = poison_bytes(client, n * T::DTYPE.size_bytes(), POISON);
    let indices_out = poison_bytes(client, n * 4, POISON);
    let counts = poison_bytes(client, rows * 4, POISON);
    let ran = compact::compact(
        client,
        flags,
        CompactIo {
            values: Some(&input),
            value_dtype: T::DTYPE,
            values_out: with_values.then_some(&values_out),
            indices_out: Some(&indices_out),
            counts: &counts,
            index_dtype: Dtype::I32,
        },
        CompactProblem { rows, len },
        rejected,
        options,
    )
    .unwrap_or_else(|e| panic!("{case}: compact failed: {e}"));
    let case = format!(
        "{case} {} {rejected:?} {ran:?} rows={rows} len={len}",
        T::DTYPE
    );
    let want = compact_ref::compact_rows(values, flags_want, rows, len, rejected);
    let poison_index = i32::from_ne_bytes([POISON; 4]);
    let want_counts: Vec<i32> = want.counts.iter().map(|&c| c as i32).collect();
    assert_same(
        &download::<i32>(client, counts, rows),
        &want_counts,
        &format!("{case}: counts"),
    );
    let want_indices: Vec<i32> = want
        .indices
        .iter()
        .map(|i| i.map_or(poison_index, |i| i as i32))
        .collect();
    assert_same(
        &download::<i32>(client, indices_out, n),
        &want_indices,
        &format!("{case}: indices"),
    );
    let size = T::DTYPE.size_bytes();
    let want_bytes: Vec<Vec<u8>> = want
        .values
        .iter()
        .map(|v| match v {
            Some(v) if with_values => bytemuck::bytes_of(v).to_vec(),
            _ => vec![POISON; size],
        })
        .collect();
    let got_bytes: Vec<Vec<u8>> = download::<u8>(client, values_out, n * size)
        .chunks(size)
        .map(<[u8]>::to_vec)
        .collect();
    assert_same(&got_bytes, &want_bytes, &format!("{case}: values (bytes)"));
}

/// Mask-based selection of `T` values (every placement and strategy: `mask_select`,
/// `compact_rows`, `stable_partition`), three rows of densities 0.5, 0 and 1 (then random).
fn compact_masks<T: El>(
    s: &Setup,
    rng: &mut StdRng,
    lengths: &[usize],
    tuning: Option<ScanTuning>,
) {
    if !supported::<T>(s) {
        return;
    }
    let Setup {
        client, caps, test, ..
    } = s;
    let storage = mask_storage(caps);
    for &len in lengths {
        let rows = 4;
        let values = compact_values::<T>(rng, rows * len, true);
        let flags: Vec<bool> = [0.5, 0.0, 1.0, rng.random_range(0.0..1.0)]
            .into_iter()
            .flat_map(|density| {
                (0..len)
                    .map(|_| rng.random_bool(density))
                    .collect::<Vec<_>>()
            })
            .collect();
        let mask = upload_mask(client, &flags, storage);
        for rejected in PLACEMENTS {
            for strategy in compact_strategies(caps, rejected) {
                check_compaction(
                    client,
                    &values,
                    Flags::Mask {
                        mask: &mask,
                        storage,
                    },
                    &flags,
                    (rows, len),
                    rejected,
                    true,
                    CompactOptions {
                        strategy,
                        tuning,
                        ..Default::default()
                    },
                    test,
                );
            }
        }
    }
}

#[test]
fn compaction_every_dtype_by_mask_at_tiny_tunings() {
    let (s, mut rng) = Setup::seeded("compaction_every_dtype_by_mask_at_tiny_tunings");
    let tuning = Some(tiny_scan_tuning(&s.caps));
    let lengths = [1, 3, 4, 5, 31, 33, 65, 130];
    each_dtype!(compact_masks(&s, &mut rng, &lengths, tuning));
}

#[test]
fn compaction_every_dtype_by_mask_at_default_tunings() {
    let (s, mut rng) = Setup::seeded("compaction_every_dtype_by_mask_at_default_tunings");
    let tile = s.default_scan_tile();
    each_dtype!(compact_masks(&s, &mut rng, &[7, tile - 1, tile + 1], None));
}

/// Comparison flags for `T`: every rule x every threshold, positions and counts only (the
/// shape of `argwhere`), and once with values and the split placement per rule.
fn compact_thresholds<T: El>(s: &Setup, rng: &mut StdRng) {
    if !supported::<T>(s) {
        return;
    }
    let Setup {
        client, caps, test, ..
    } = s;
    let (rows, len) = (3, 67);
    let values = compact_values::<T>(rng, rows * len, !flushes_subnormals::<T>(client, test));
    for rule in FLAG_RULES {
        for threshold in T::thresholds() {
            let flags = compact_ref::compare_flags(&values, rule, threshold);
            check_compaction(
                client,
                &values,
                Flags::Compare { rule, threshold },
                &flags,
                (rows, len),
                Rejected::Drop,
                false,
                CompactOptions {
                    strategy: CompactStrategy::Auto,
                    tuning: Some(tiny_scan_tuning(caps)),
                    ..Default::default()
                },
                &format!("{test} {rule:?} {threshold}"),
            );
        }
        let threshold = T::thresholds()[2];
        check_compaction(
            client,
            &values,
            Flags::Compare { rule, threshold },
            &compact_ref::compare_flags(&values, rule, threshold),
            (rows, len),
            Rejected::Keep,
            true,
            CompactOptions::default(),
            &format!("{test} {rule:?} {threshold}"),
        );
    }
}

#[test]
fn compaction_every_dtype_by_threshold() {
    let (s, mut rng) = Setup::seeded("compaction_every_dtype_by_threshold");
    each_dtype!(compact_thresholds(&s, &mut rng));
}

/// The one-bit split of every integer dtype: its lowest, a middle and its sign bit.
#[test]
fn compaction_every_integer_dtype_by_bit() {
    fn case<T: El>(s: &Setup, rng: &mut StdRng) {
        if !supported::<T>(s) {
            return;
        }
        let Setup {
            client, caps, test, ..
        } = s;
        let width = 8 * T::DTYPE.size_bytes() as u32;
        let (rows, len) = (2, 131);
        let values = compact_values::<T>(rng, rows * len, true);
        for bit in [0, width / 2 - 1, width - 1] {
            for strategy in compact_strategies(caps, Rejected::Keep) {
                check_compaction(
                    client,
                    &values,
                    Flags::BitClear { bit },
                    &compact_ref::bit_clear_flags(&values, bit),
                    (rows, len),
                    Rejected::Keep,
                    true,
                    CompactOptions {
                        strategy,
                        tuning: Some(tiny_scan_tuning(caps)),
                        ..Default::default()
                    },
                    &format!("{test} bit {bit}"),
                );
            }
        }
        let e = compact::compact(
            client,
            Flags::BitClear { bit: width },
            CompactIo {
                values: Some(&client.empty(len * 8)),
                value_dtype: T::DTYPE,
                values_out: None,
                indices_out: None,
                counts: &client.empty(64),
                index_dtype: Dtype::I32,
            },
            CompactProblem { rows: 1, len },
            Rejected::Keep,
            CompactOptions::default(),
        )
        .expect_err("a bit past the dtype's width must be refused")
        .to_string();
        assert!(
            e.contains("flags.bit") && e.contains(&format!("0..{width}")),
            "{test}: {}: {e}",
            T::DTYPE
        );
    }
    let (s, mut rng) = Setup::seeded("compaction_every_integer_dtype_by_bit");
    each_type!([u32, i32, i64, i8, i16, u8, u16, u64] case(&s, &mut rng));
}
