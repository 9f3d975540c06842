//! The cumulative family on the device scan (`sieve::scan::scan_op`: running sums, products,
//! minima, maxima) against its CPU twin, **bit for bit**: every operator x f32, i32, u32 and
//! i64 (where the device has it) x both kinds x every strategy the device runs, at default
//! and at tiny tunings, over lengths across vector, tile and plane boundaries. Each call
//! scans five rows, one per pattern: random with a few specials, sorted, reversed, all equal,
//! and dense specials (NaN with distinct payloads, +-inf, +-0.0, zeros for the product, the
//! dtype's extremes for minima and maxima). The values, the bit comparison and the check come
//! from `dtypes_scan`, which runs every dtype.
//!
//! Float products are exact here: magnitudes are 1, 2 or 0.5 and a row holds at most 120 that
//! are not 1, so every partial product in any association order is a normal f32 (or a zero,
//! an infinity or a NaN, which no association changes) and the device must match the
//! sequential reference exactly. Sums use halves, exact for the same reason.
//! PyTorch's rules themselves (NaN, ties between -0.0 and +0.0) are pinned by hand-written
//! cases in `torch_rules`.

use crate::common;

use crate::dtypes_scan::{El, assert_scan_bits, check_scan};
use common::*;
use cubecl::prelude::Client;
use rand::{Rng, rngs::StdRng};
use sieve::scan::reference;
use sieve::scan::{ScanOp, ScanOptions, ScanStrategy, ScanTuning};
use sieve::{DeviceCaps, Dtype};

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

/// One value for `op`: with chance `special` one of `T`'s specials for it (a NaN, where it
/// has them, a quarter of the time when `nan`, else never), otherwise an ordinary one.
/// `budget` counts the row's product factors that are not +-1 (floats).
fn sample<T: El>(rng: &mut StdRng, op: ScanOp, special: f64, nan: bool, budget: &mut u32) -> T {
    if rng.random_bool(special) {
        // No subnormals: some devices compare them as zeros (see `dtypes_scan`).
        let (nans, others): (Vec<T>, Vec<T>) = T::specials(Some(op), false)
            .into_iter()
            .partition(|x| x.is_nan());
        let pool = if nan && !nans.is_empty() && rng.random_bool(0.25) {
            nans
        } else {
            others
        };
        return pool[rng.random_range(0..pool.len())];
    }
    T::ordinary(rng, op, budget)
}

/// One row of `len` values in `pattern`.
fn row<T: El>(rng: &mut StdRng, len: usize, op: ScanOp, pattern: Pattern) -> Vec<T> {
    // At most 120 product factors of magnitude 2 or 0.5 per row: no partial product leaves
    // the normal range (2^-126..2^128), however it is associated.
    let mut budget = 120u32;
    let mut draw =
        |rng: &mut StdRng, special: f64, nan: bool| sample::<T>(rng, op, special, nan, &mut budget);
    let mut values: Vec<T> = match pattern {
        Pattern::Random => (0..len).map(|_| draw(rng, 0.03, true)).collect(),
        Pattern::Sorted | Pattern::Reversed => (0..len).map(|_| draw(rng, 0.1, false)).collect(),
        // No factor of magnitude 2 or 0.5 repeated: a row of 0.5s passes through the
        // subnormals, which some devices flush to zero (NVIDIA's Vulkan driver does for f32:
        // CubeCL's SPIR-V does not ask to preserve them).
        Pattern::AllEqual => vec![sample::<T>(rng, op, 0.5, true, &mut 0); len],
        Pattern::Specials => (0..len).map(|_| draw(rng, 0.5, true)).collect(),
    };
    match pattern {
        Pattern::Sorted => values.sort_by(|a, b| a.partial_cmp(b).expect("no NaN")),
        Pattern::Reversed => values.sort_by(|a, b| b.partial_cmp(a).expect("no NaN")),
        _ => {}
    }
    values
}

/// Every pattern (one row each) at every length, for one dtype and operator.
fn check_lengths<T: El>(
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
        check_scan(client, &data, PATTERNS.len(), len, op, options, case);
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
        if caps.supports(Dtype::I64) && options.strategy != ScanStrategy::DecoupledLookback {
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
    // A tile is 4-16 elements on lavapipe, a plane or two of vectors elsewhere, so these rows
    // cross many tiles and the tile sums recurse.
    let tuning = tiny_scan_tuning(&caps);
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
        assert_scan_bits(&got_ref, want, *op, &format!("reference {op:?} {input:?}"));
        check_scan(&client, input, 1, input.len(), *op, options, "torch rule");
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
        check_scan(&client, &ints, 1, 5, op, options, "torch rule (i32)");
    }
    // Exclusive float minima and maxima start at the infinities.
    let row = [2.0f32, -1.0];
    assert_scan_bits(
        &reference::scan_rows_op(&row, 1, 2, ScanOp::Min, true),
        &[inf, 2.0],
        ScanOp::Min,
        "exclusive min",
    );
    assert_scan_bits(
        &reference::scan_rows_op(&row, 1, 2, ScanOp::Max, true),
        &[-inf, 2.0],
        ScanOp::Max,
        "exclusive max",
    );
    eprintln!("torch_rules on {}", caps.describe());
}

/// Every vector width a tuning may ask for (1, 2, 4), and 8 and 16 refused with the
/// argument's name (wider vectors were slower on the H200 through CUDA: `docs/PERFORMANCE.md`,
/// twelfth session). Rows whose length is and is not a multiple of the width (the launch
/// narrows to what divides it), at one and several tiles.
#[test]
fn every_vector_width() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, _) = rng("every_vector_width");
    for width in [1usize, 2, 4, 8, 16] {
        let tuning = ScanTuning {
            elements_per_unit: 16,
            max_vector_size: width,
            ..tiny_scan_tuning(&caps)
        };
        if width > 4 {
            // Refused by the tuning check, before any strategy is chosen.
            let input = upload(&client, &[1.0f32; 16]);
            let output = client.empty(64);
            let err = sieve::scan::scan_op(
                &client,
                &input,
                &output,
                sieve::scan::ScanProblem { rows: 1, len: 16 },
                Dtype::F32,
                ScanOp::Min,
                sieve::scan::ScanKind::Inclusive,
                ScanOptions {
                    strategy: ScanStrategy::ReduceThenScan,
                    tuning: Some(tuning),
                },
            )
            .expect_err("a vector wider than 4 must be refused");
            assert!(
                err.to_string().contains("tuning.max_vector_size"),
                "width {width}: {err}"
            );
            continue;
        }
        let tile = (tuning.units_per_cube * tuning.elements_per_unit) as usize;
        let lengths = [16, 17, 18, 250, tile, tile + 2, 3 * tile + 8, 5 * tile - 1];
        let case = format!("vector width {width}");
        for strategy in strategies(&caps) {
            let options = ScanOptions {
                strategy,
                tuning: Some(tuning),
            };
            for op in ScanOp::ALL {
                check_lengths::<f32>(&client, &mut rng, &lengths, op, options, &case);
                check_lengths::<i32>(&client, &mut rng, &lengths, op, options, &case);
            }
        }
    }
}

/// `scan_columns` (the scan along a middle axis of a contiguous `[outer, len, inner]` buffer)
/// of `data` against the row reference of its transposed columns, both kinds, bit for bit.
fn check_columns<T: El>(client: &Client, data: &[T], shape: [usize; 3], op: ScanOp, case: &str) {
    use sieve::scan::{ColumnProblem, ScanKind};
    let [outer, len, inner] = shape;
    let at = |o: usize, r: usize, c: usize| (o * len + r) * inner + c;
    // Column (o, c) as row o * inner + c.
    let rows: Vec<T> = (0..outer * inner)
        .flat_map(|col| (0..len).map(move |r| (col / inner, r, col % inner)))
        .map(|(o, r, c)| data[at(o, r, c)])
        .collect();
    let input = upload_padded(client, data);
    for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
        let output =
            crate::dtypes_scan::poison_bytes(client, data.len() * T::DTYPE.size_bytes(), 0xFF);
        sieve::scan::scan_columns(
            client,
            &input,
            &output,
            ColumnProblem { outer, len, inner },
            T::DTYPE,
            op,
            kind,
        )
        .unwrap_or_else(|e| panic!("{case}: scan_columns failed: {e}"));
        let got: Vec<T> = download(client, output, data.len());
        let by_rows =
            reference::scan_rows_op(&rows, outer * inner, len, op, kind == ScanKind::Exclusive);
        let mut want = vec![by_rows[0]; data.len()];
        for col in 0..outer * inner {
            for r in 0..len {
                want[at(col / inner, r, col % inner)] = by_rows[col * len + r];
            }
        }
        assert_scan_bits(&got, &want, op, &format!("{case}, {kind:?}"));
    }
}

/// `[outer, len, inner]` data whose every column is one of the row patterns.
fn columns_data<T: El>(rng: &mut StdRng, shape: [usize; 3], op: ScanOp) -> Vec<T> {
    let [outer, len, inner] = shape;
    let cols: Vec<Vec<T>> = (0..outer * inner)
        .map(|col| row::<T>(rng, len, op, PATTERNS[col % PATTERNS.len()]))
        .collect();
    (0..outer * len * inner)
        .map(|i| {
            let (o, r, c) = (i / (len * inner), i / inner % len, i % inner);
            cols[o * inner + c][r]
        })
        .collect()
}

/// The column scan: every operator and dtype at column lengths across its batch of 8 rows
/// (1, 7, 8, 9, 17, 33), slabs of 1-3, odd and even column counts, one column; then columns
/// numerous enough for its vectors of 2 and 4 (f32, i32), and an empty problem.
#[test]
fn columns_every_op_dtype_and_shape() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, _) = rng("columns_every_op_dtype_and_shape");
    let shapes = [
        [1, 1, 5],
        [1, 7, 3],
        [2, 8, 4],
        [3, 9, 33],
        [1, 17, 1],
        [2, 33, 64],
        [1, 300, 7],
    ];
    for op in ScanOp::ALL {
        for shape in shapes {
            let case = format!("{op:?} {shape:?}");
            check_columns(
                &client,
                &columns_data::<f32>(&mut rng, shape, op),
                shape,
                op,
                &case,
            );
            check_columns(
                &client,
                &columns_data::<i32>(&mut rng, shape, op),
                shape,
                op,
                &case,
            );
            check_columns(
                &client,
                &columns_data::<u32>(&mut rng, shape, op),
                shape,
                op,
                &case,
            );
            if caps.supports(Dtype::I64) {
                check_columns(
                    &client,
                    &columns_data::<i64>(&mut rng, shape, op),
                    shape,
                    op,
                    &case,
                );
            }
        }
        // 2^16 and 2^18 columns: vectors of 2 and 4 neighbouring columns.
        for shape in [[1, 3, 1 << 17], [2, 2, 1 << 17]] {
            let case = format!("{op:?} {shape:?}");
            let f: Vec<f32> = (0..shape.iter().product::<usize>())
                .map(|_| [-2.0f32, -0.5, 0.5, 2.0][rng.random_range(0..4)])
                .collect();
            check_columns(&client, &f, shape, op, &case);
            let i: Vec<i32> = (0..shape.iter().product::<usize>())
                .map(|_| rng.random_range(-1000..1000))
                .collect();
            check_columns(&client, &i, shape, op, &case);
        }
    }
    // Nothing to scan: no launch, no error.
    let empty = upload_padded(&client, &[0.0f32]);
    for shape in [[0, 4, 4], [2, 0, 4], [2, 4, 0]] {
        let [outer, len, inner] = shape;
        sieve::scan::scan_columns(
            &client,
            &empty,
            &empty,
            sieve::scan::ColumnProblem { outer, len, inner },
            Dtype::F32,
            ScanOp::Sum,
            sieve::scan::ScanKind::Inclusive,
        )
        .unwrap_or_else(|e| panic!("{shape:?}: {e}"));
    }
}
