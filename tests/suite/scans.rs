//! The cumulative family on the device scan (`sieve::scan::scan_op`: running sums, products,
//! minima, maxima) against its CPU twin, **bit for bit**: every operator x f32, i32, u32 and
//! i64 (where the device has it) x both kinds x every strategy the device runs, at default
//! and at tiny tunings, over lengths across vector, tile and plane boundaries. Each call
//! scans five rows, one per pattern: random with a few specials, sorted, reversed, all equal,
//! and dense specials (NaN with distinct payloads, +-inf, +-0.0, zeros for the product).
//!
//! Float products are exact here: magnitudes are 1, 2 or 0.5 and a row holds at most 120 that
//! are not 1, so every partial product in any association order is a normal f32 (or a zero,
//! an infinity or a NaN, which no association changes) and the device must match the
//! sequential reference exactly. Sums use halves, exact for the same reason.
//! PyTorch's rules themselves (NaN, ties between -0.0 and +0.0) are pinned by hand-written
//! cases in `torch_rules`.

use crate::common;

use common::*;
use cubecl::prelude::Client;
use rand::{Rng, rngs::StdRng};
use sieve::scan::reference::{self, ScanElement};
use sieve::scan::{self, ScanKind, ScanOp, ScanOptions, ScanProblem, ScanStrategy, ScanTuning};
use sieve::{DeviceCaps, Dtype};

const KINDS: [ScanKind; 2] = [ScanKind::Inclusive, ScanKind::Exclusive];

/// NaNs with distinct payloads (and signs), so "the latest NaN met" is visible in the bits.
const NANS: [u32; 3] = [0x7FC0_0000, 0x7FC0_1234, 0xFFC0_0042];

/// Lengths across vector widths (len % 4), plane widths (16, 32, 64) and the tiny tiles.
const LENGTHS: [usize; 27] = [
    1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256,
    257, 299, 300,
];

/// The row patterns of one call, one row each.
#[derive(Clone, Copy, Debug)]
enum Pattern {
    /// Random values, now and then a special (NaN rarely, so rows have a prefix before it).
    Random,
    /// Random values without NaN, ascending.
    Sorted,
    /// Random values without NaN, descending.
    Reversed,
    /// One value (special half the time) repeated.
    AllEqual,
    /// Half the values special.
    Specials,
}

const PATTERNS: [Pattern; 5] = [
    Pattern::Random,
    Pattern::Sorted,
    Pattern::Reversed,
    Pattern::AllEqual,
    Pattern::Specials,
];

/// An element type under test: its dtype and a sampler of values fit for each operator.
trait Element: ScanElement + bytemuck::Pod + std::fmt::Debug {
    const DTYPE: Dtype;
    /// One value for `op`; `special` is the chance of a special value, `nan` whether a NaN
    /// may be drawn. `budget` counts the row's product factors that are not +-1 (floats).
    fn sample(rng: &mut StdRng, op: ScanOp, special: f64, nan: bool, budget: &mut u32) -> Self;
}

impl Element for f32 {
    const DTYPE: Dtype = Dtype::F32;
    fn sample(rng: &mut StdRng, op: ScanOp, special: f64, nan: bool, budget: &mut u32) -> f32 {
        if rng.random_bool(special) {
            let specials = [0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, 1.0, -1.0];
            return if nan && rng.random_bool(0.25) {
                f32::from_bits(NANS[rng.random_range(0..NANS.len())])
            } else {
                specials[rng.random_range(0..specials.len())]
            };
        }
        match op {
            // Halves: every partial sum of a row is exact.
            ScanOp::Sum => rng.random_range(-4i32..=4) as f32 * 0.5,
            ScanOp::Prod => {
                let sign = if rng.random_bool(0.5) { -1.0 } else { 1.0 };
                if *budget > 0 && rng.random_bool(0.4) {
                    *budget -= 1;
                    sign * if rng.random_bool(0.5) { 2.0 } else { 0.5 }
                } else {
                    sign
                }
            }
            // Many ties (small integers, both zeros) among arbitrary floats.
            ScanOp::Min | ScanOp::Max => match rng.random_range(0..3) {
                0 => rng.random_range(-3i32..=3) as f32,
                1 => {
                    if rng.random_bool(0.5) {
                        0.0
                    } else {
                        -0.0
                    }
                }
                _ => rng.random_range(-1000.0f32..1000.0),
            },
        }
    }
}

macro_rules! int_element {
    ($t:ty, $dtype:expr) => {
        impl Element for $t {
            const DTYPE: Dtype = $dtype;
            fn sample(
                rng: &mut StdRng,
                op: ScanOp,
                special: f64,
                _nan: bool,
                _budget: &mut u32,
            ) -> $t {
                if rng.random_bool(special) {
                    let specials = [
                        <$t>::MIN,
                        <$t>::MAX,
                        0 as $t,
                        1 as $t,
                        (0 as $t).wrapping_sub(1),
                    ];
                    return specials[rng.random_range(0..specials.len())];
                }
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
        }
    };
}
int_element!(i32, Dtype::I32);
int_element!(u32, Dtype::U32);
int_element!(i64, Dtype::I64);

/// One row of `len` values in `pattern`.
fn row<T: Element>(rng: &mut StdRng, len: usize, op: ScanOp, pattern: Pattern) -> Vec<T> {
    // At most 120 product factors of magnitude 2 or 0.5 per row: no partial product leaves
    // the normal range (2^-126..2^128), however it is associated.
    let mut budget = 120u32;
    let mut draw =
        |rng: &mut StdRng, special: f64, nan: bool| T::sample(rng, op, special, nan, &mut budget);
    let mut values: Vec<T> = match pattern {
        Pattern::Random => (0..len).map(|_| draw(rng, 0.03, true)).collect(),
        Pattern::Sorted | Pattern::Reversed => (0..len).map(|_| draw(rng, 0.1, false)).collect(),
        // No factor of magnitude 2 or 0.5 repeated: a row of 0.5s passes through the
        // subnormals, which some devices flush to zero (NVIDIA's Vulkan driver does for f32:
        // CubeCL's SPIR-V does not ask to preserve them).
        Pattern::AllEqual => vec![T::sample(rng, op, 0.5, true, &mut 0); len],
        Pattern::Specials => (0..len).map(|_| draw(rng, 0.5, true)).collect(),
    };
    match pattern {
        Pattern::Sorted => values.sort_by(|a, b| a.partial_cmp(b).expect("no NaN")),
        Pattern::Reversed => values.sort_by(|a, b| b.partial_cmp(a).expect("no NaN")),
        _ => {}
    }
    values
}

/// Device output equals the reference bit for bit, but: a NaN of a sum or product may carry
/// any payload (IEEE does not fix which operand's), so there any NaN meets any NaN; and the
/// sign of a zero sum is not part of the sum's contract (`0.0 + -0.0` is +0.0, and shader
/// compilers fold additions of 0.0 away), so there -0.0 meets +0.0.
fn assert_bits<T: Element>(got: &[T], want: &[T], op: ScanOp, case: &str) {
    assert_eq!(got.len(), want.len(), "{case}: length");
    let any_nan = matches!(op, ScanOp::Sum | ScanOp::Prod);
    let any_zero = |x: T| op == ScanOp::Sum && x == T::narrow(T::zero());
    let bad: Vec<usize> = (0..got.len())
        .filter(|&i| {
            bytemuck::bytes_of(&got[i]) != bytemuck::bytes_of(&want[i])
                && !(any_nan && got[i].is_nan() && want[i].is_nan())
                && !(any_zero(got[i]) && any_zero(want[i]))
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

/// Scans `data` (`[rows, len]`) with `op` into a poisoned buffer, both kinds, and compares
/// with the reference.
fn check<T: Element>(
    client: &Client,
    data: &[T],
    rows: usize,
    len: usize,
    op: ScanOp,
    options: ScanOptions,
    case: &str,
) {
    let input = upload(client, data);
    for kind in KINDS {
        // Every byte 0xFF (NaN for floats, -1 / MAX for ints), so unwritten outputs show.
        let output = poisoned(client, rows * len * T::DTYPE.size_bytes(), 0xFFu8);
        scan::scan_op(
            client,
            &input,
            &output,
            ScanProblem { rows, len },
            T::DTYPE,
            op,
            kind,
            options,
        )
        .expect("scan_op failed");
        let got: Vec<T> = download(client, output, rows * len);
        let want = reference::scan_rows_op(data, rows, len, op, kind == ScanKind::Exclusive);
        assert_bits(
            &got,
            &want,
            op,
            &format!(
                "{case} {} {} {kind:?} {options:?} rows={rows} len={len}",
                op.name(),
                T::DTYPE
            ),
        );
    }
}

/// Every pattern (one row each) at every length, for one dtype and operator.
fn check_lengths<T: Element>(
    client: &Client,
    rng: &mut StdRng,
    lengths: &[usize],
    op: ScanOp,
    options: ScanOptions,
    case: &str,
) {
    for &len in lengths {
        let data: Vec<T> = PATTERNS
            .iter()
            .flat_map(|&pattern| row::<T>(rng, len, op, pattern))
            .collect();
        check(client, &data, PATTERNS.len(), len, op, options, case);
    }
}

/// Every operator and dtype the strategy serves on this device.
fn check_all(
    client: &Client,
    caps: &DeviceCaps,
    rng: &mut StdRng,
    lengths: &[usize],
    options: ScanOptions,
    case: &str,
) {
    for op in ScanOp::ALL {
        check_lengths::<f32>(client, rng, lengths, op, options, case);
        check_lengths::<i32>(client, rng, lengths, op, options, case);
        check_lengths::<u32>(client, rng, lengths, op, options, case);
        // The look-back's status words hold 32-bit values: i64 runs reduce-then-scan only.
        if caps.i64 && options.strategy != ScanStrategy::DecoupledLookback {
            check_lengths::<i64>(client, rng, lengths, op, options, case);
        }
    }
}

/// Reduce-then-scan always; the look-back where the runtime promises forward progress and
/// has 64-bit atomics (it deadlocks on software Vulkan).
fn strategies(caps: &DeviceCaps) -> Vec<ScanStrategy> {
    let mut s = vec![ScanStrategy::ReduceThenScan];
    if caps.forward_progress && caps.atomic_u64 {
        s.push(ScanStrategy::DecoupledLookback);
    }
    s
}

#[test]
fn every_op_and_dtype_at_tiny_tunings() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, _) = rng("every_op_and_dtype_at_tiny_tunings");
    // One plane-multiple of units, one element each: a tile is 4-16 elements on lavapipe, a
    // plane or two of vectors elsewhere, so these rows cross many tiles and the tile sums
    // recurse.
    let tuning = ScanTuning {
        units_per_cube: caps.plane_size_max.max(4).next_power_of_two(),
        elements_per_unit: 1,
        max_vector_size: 4,
        use_planes: caps.plane_ops,
    };
    for strategy in strategies(&caps) {
        let options = ScanOptions {
            strategy,
            tuning: Some(tuning),
        };
        check_all(&client, &caps, &mut rng, &LENGTHS, options, "tiny tuning");
    }
}

#[test]
fn every_op_and_dtype_at_default_tunings() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, _) = rng("every_op_and_dtype_at_default_tunings");
    for strategy in strategies(&caps) {
        let options = ScanOptions {
            strategy,
            tuning: None,
        };
        // The default tile (vectors of 4 where the length allows): rows of one tile and a
        // bit, and of a few tiles, besides the short lengths.
        let tuning = ScanTuning::for_device(&caps, strategy == ScanStrategy::DecoupledLookback);
        let tile = (tuning.units_per_cube * tuning.elements_per_unit) as usize;
        let mut lengths = LENGTHS.to_vec();
        lengths.extend([tile - 1, tile + 1, 3 * tile + 4]);
        check_all(
            &client,
            &caps,
            &mut rng,
            &lengths,
            options,
            "default tuning",
        );
    }
}

/// PyTorch's results for hand-picked rows, from the device and the reference alike.
#[test]
fn torch_rules() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let nan = |i: usize| f32::from_bits(NANS[i]);
    let (pz, nz, inf) = (0.0f32, -0.0f32, f32::INFINITY);
    // (op, input, torch's inclusive output)
    let cases: Vec<(ScanOp, Vec<f32>, Vec<f32>)> = vec![
        // Ties keep the later value: the zeros come out as the latest of them.
        (ScanOp::Min, vec![pz, nz, pz, nz], vec![pz, nz, pz, nz]),
        (ScanOp::Max, vec![nz, pz, nz, 1.0], vec![nz, pz, nz, 1.0]),
        (ScanOp::Min, vec![1.0, pz, 2.0, nz], vec![1.0, pz, pz, nz]),
        // A NaN sticks; a later NaN replaces it (its own bits).
        (
            ScanOp::Max,
            vec![1.0, nan(1), 5.0, nan(2), inf],
            vec![1.0, nan(1), nan(1), nan(2), nan(2)],
        ),
        (
            ScanOp::Min,
            vec![nan(2), -inf, 3.0],
            vec![nan(2), nan(2), nan(2)],
        ),
        (ScanOp::Min, vec![inf, 3.0, -inf], vec![inf, 3.0, -inf]),
        // IEEE products: signed zeros, 0 * inf = NaN.
        (
            ScanOp::Prod,
            vec![2.0, -0.5, pz, -3.0, inf],
            vec![2.0, -1.0, nz, pz, f32::NAN],
        ),
        (ScanOp::Prod, vec![-inf, 0.5, -2.0], vec![-inf, -inf, inf]),
    ];
    let options = ScanOptions::default();
    for (op, input, want) in &cases {
        let got_ref = reference::scan_rows_op(input, 1, input.len(), *op, false);
        assert_bits(&got_ref, want, *op, &format!("reference {op:?} {input:?}"));
        check(&client, input, 1, input.len(), *op, options, "torch rule");
    }
    // Integers: exact minima and maxima, wrapping products, identities first when exclusive.
    let ints = [3i32, i32::MIN, 7, i32::MAX, -1];
    for (op, inclusive, exclusive) in [
        (
            ScanOp::Min,
            [3, i32::MIN, i32::MIN, i32::MIN, i32::MIN],
            [i32::MAX, 3, i32::MIN, i32::MIN, i32::MIN],
        ),
        (
            ScanOp::Max,
            [3, 3, 7, i32::MAX, i32::MAX],
            [i32::MIN, 3, 3, 7, i32::MAX],
        ),
        (
            ScanOp::Prod,
            [3, i32::MIN, i32::MIN, i32::MIN, i32::MIN],
            [1, 3, i32::MIN, i32::MIN, i32::MIN],
        ),
    ] {
        assert_eq!(
            reference::scan_rows_op(&ints, 1, 5, op, false),
            inclusive,
            "{op:?}"
        );
        assert_eq!(
            reference::scan_rows_op(&ints, 1, 5, op, true),
            exclusive,
            "{op:?}"
        );
        check(&client, &ints, 1, 5, op, options, "torch rule (i32)");
    }
    // Exclusive float minima and maxima start at the infinities.
    let row = [2.0f32, -1.0];
    assert_bits(
        &reference::scan_rows_op(&row, 1, 2, ScanOp::Min, true),
        &[inf, 2.0],
        ScanOp::Min,
        "exclusive min",
    );
    assert_bits(
        &reference::scan_rows_op(&row, 1, 2, ScanOp::Max, true),
        &[-inf, 2.0],
        ScanOp::Max,
        "exclusive max",
    );
    eprintln!("torch_rules on {}", caps.describe());
}
