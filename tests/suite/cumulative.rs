//! The cumulative family as Burn ops (`sieve_burn::{cumprod, cummin, cummax}`, issue 14 item
//! 3) through Burn's public API: on the default device (Dispatch -> Fusion -> CubeBackend:
//! the device scan), on Flex and NdArray (stock-op fallbacks), under Autodiff.
//!
//! Each op x Float (f32) / Int (i32) x every dim of rank-3 tensors (lanes across the scan's
//! tiles at its default tuning) x views is checked two ways:
//! - against Burn's own op (`Tensor::cumprod/cummin/cummax`) on Flex, as numbers: Burn's ops
//!   are the semantics. Where PyTorch's rule shows in the bits and Burn's Flex op differs
//!   (cummin/cummax keep the *latest* of equal values, so `-0.0` after `+0.0` comes out as
//!   `-0.0`, and after NaNs the latest NaN; Flex keeps the earlier zero), zeros compare as
//!   one value and NaNs as one;
//! - against the CPU reference (`sieve::scan::reference::scan_rows_op`, the kernels' twin),
//!   bit for bit (NaN payloads of cummin/cummax included; a product's NaN compares as NaN,
//!   its payload being the hardware's).
//!
//! Float products are exact in any association order: factors are +-1, +-2 and +-0.5 (at most
//! 100 that are not +-1 in a whole tensor) and specials, so the tree-ordered device product
//! must equal Flex's sequential one. Int products wrap; Flex's (Rust `*`) would panic on
//! overflow in a debug build, so wrapping is checked against the CPU reference only.

use crate::common;

use burn::tensor::{DType, Device, Int, Tensor, TensorData};
use common::{assert_same, rng, serial};
use rand::{Rng, rngs::StdRng};
use sieve::DeviceCaps;
use sieve::scan::reference::{ScanElement, scan_rows_op};
use sieve::scan::{ScanOp, ScanTuning};

const OPS: [ScanOp; 3] = [ScanOp::Prod, ScanOp::Min, ScanOp::Max];

/// NaNs with distinct payloads and signs, so "the latest NaN" shows in the bits.
const NANS: [u32; 3] = [0x7FC0_0000, 0x7FC0_1234, 0xFFC0_0042];

/// Elements per tile of the default scan tuning on the test device (reduce-then-scan's; the
/// look-back's tiles are twice as long).
fn tile() -> usize {
    let caps = DeviceCaps::of(&common::client());
    let tuning = ScanTuning::for_device(&caps, false);
    (tuning.units_per_cube * tuning.elements_per_unit) as usize
}

/// Test shapes: small, vector-aligned last dim, and lanes across one tile (along dim 1: laid
/// out with the dim last first) and two (the second also across the look-back's tile, along
/// the last dim). Few lanes in the long ones: lavapipe is slow.
fn shapes() -> Vec<[usize; 3]> {
    let t = tile();
    vec![
        [3, 5, 7],
        [4, 6, 64],
        [1, t + 1, 2],
        [1, 1, 2 * t + 5],
        columns_shape(),
    ]
}

/// A shape whose dims 0 and 1 have enough columns after them for the device to scan the
/// columns in place (`ColumnProblem::prefers_columns`; asserted, so the path cannot go
/// untested), an odd count past the threshold.
fn columns_shape() -> [usize; 3] {
    let caps = DeviceCaps::of(&common::client());
    let threshold = (1..)
        .map(|c| 2 * c + 1)
        .find(|&c| {
            sieve::scan::ColumnProblem {
                outer: 2,
                len: 9,
                inner: c,
            }
            .prefers_columns(&caps)
        })
        .expect("some column count is enough");
    let shape = [2, 9, threshold];
    let dim0 = sieve::scan::ColumnProblem {
        outer: 1,
        len: 2,
        inner: 9 * threshold,
    };
    assert!(dim0.prefers_columns(&caps), "dim 0 of {shape:?}");
    shape
}

/// The CPU reference of `op` along `dim`: each lane through `scan_rows_op`.
fn reference<T: ScanElement + Default>(
    data: &[T],
    shape: &[usize],
    dim: usize,
    op: ScanOp,
) -> Vec<T> {
    let mut out = vec![T::default(); data.len()];
    for lane in common::lanes(shape, dim).into_iter().map(|lane| lane.at) {
        let row: Vec<T> = lane.iter().map(|&p| data[p]).collect();
        for (&p, v) in lane.iter().zip(scan_rows_op(&row, 1, row.len(), op, false)) {
            out[p] = v;
        }
    }
    out
}

/// The op under test, on any device.
fn run<K: sieve_burn::SieveKind>(x: Tensor<3, K>, dim: i32, op: ScanOp) -> Tensor<3, K> {
    match op {
        ScanOp::Prod => sieve_burn::cumprod(x, dim),
        ScanOp::Min => sieve_burn::cummin(x, dim),
        ScanOp::Max => sieve_burn::cummax(x, dim),
        ScanOp::Sum => sieve_burn::cumsum(x, dim),
    }
}

/// Burn's own op of the same name.
fn stock_float(x: Tensor<3>, dim: usize, op: ScanOp) -> Tensor<3> {
    match op {
        ScanOp::Prod => x.cumprod(dim),
        ScanOp::Min => x.cummin(dim),
        ScanOp::Max => x.cummax(dim),
        ScanOp::Sum => x.cumsum(dim),
    }
}

fn stock_int(x: Tensor<3, Int>, dim: usize, op: ScanOp) -> Tensor<3, Int> {
    match op {
        ScanOp::Prod => x.cumprod(dim),
        ScanOp::Min => x.cummin(dim),
        ScanOp::Max => x.cummax(dim),
        ScanOp::Sum => x.cumsum(dim),
    }
}

/// Float values for `op`: specials (+-0.0, +-inf) with chance `special`, NaNs with chance
/// `nan`, else factors of an exact product (+-1; +-2 or +-0.5 while `budget` lasts) or
/// quarter steps for minima and maxima (ties, and new extremes now and then along a lane).
fn sample_f32(rng: &mut StdRng, op: ScanOp, special: f64, nan: f64, budget: &mut u32) -> f32 {
    if rng.random_bool(nan) {
        return f32::from_bits(NANS[rng.random_range(0..NANS.len())]);
    }
    if rng.random_bool(special) {
        let specials = [0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY];
        return specials[rng.random_range(0..specials.len())];
    }
    let sign = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
    match op {
        ScanOp::Prod if *budget > 0 && rng.random_bool(0.05) => {
            *budget -= 1;
            sign * [2.0, 0.5][rng.random_range(0..2)]
        }
        ScanOp::Prod => sign,
        _ => rng.random_range(-4000i32..=4000) as f32 * 0.25,
    }
}

/// Int values: products of +-1 with a few +-2 and zeros (chance `special`; no overflow:
/// `budget`), or a range with ties.
fn sample_i32(rng: &mut StdRng, op: ScanOp, special: f64, budget: &mut u32) -> i32 {
    match op {
        ScanOp::Prod if rng.random_bool(special) => 0,
        ScanOp::Prod if *budget > 0 && rng.random_bool(0.05) => {
            *budget -= 1;
            [2, -2][rng.random_range(0..2)]
        }
        ScanOp::Prod => [1, -1][rng.random_range(0..2)],
        _ => rng.random_range(-5000..5000),
    }
}

/// A float as compared with Burn's op: NaN as one value, -0.0 as +0.0.
fn as_number(v: f32) -> u32 {
    if v.is_nan() {
        f32::NAN.to_bits()
    } else if v == 0.0 {
        0
    } else {
        v.to_bits()
    }
}

/// A float as compared with the reference: its bits, except a product's NaN (any payload).
fn as_bits(v: f32, op: ScanOp) -> u32 {
    if op == ScanOp::Prod && v.is_nan() {
        f32::NAN.to_bits()
    } else {
        v.to_bits()
    }
}

fn floats<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().iter::<f32>().collect()
}

fn ints<const D: usize>(t: Tensor<D, Int>) -> Vec<i64> {
    t.into_data().iter::<i64>().collect()
}

fn float_tensor(data: &[f32], shape: [usize; 3], device: &Device) -> Tensor<3> {
    Tensor::from_data(TensorData::new(data.to_vec(), shape), (device, DType::F32))
}

fn int_tensor(data: &[i32], shape: [usize; 3], device: &Device) -> Tensor<3, Int> {
    Tensor::from_data(TensorData::new(data.to_vec(), shape), (device, DType::I32))
}

/// Checks `got` (op `op` along `dim` of `data`) against Burn's op on Flex and the reference:
/// bit for bit when `exact` (the kernels), else as numbers (the stock fallbacks: which zero
/// and which NaN payload a running extreme keeps is the backend's own op's choice).
fn check_float(
    got: &[f32],
    data: &[f32],
    shape: [usize; 3],
    dim: usize,
    op: ScanOp,
    exact: bool,
    case: &str,
) {
    let stock = floats(stock_float(
        float_tensor(data, shape, &Device::flex()),
        dim,
        op,
    ));
    let number = |v: &[f32]| v.iter().map(|&x| as_number(x)).collect::<Vec<_>>();
    assert_same(
        &number(got),
        &number(&stock),
        &format!("{case}: vs Burn's op on Flex"),
    );
    let want = reference(data, &shape, dim, op);
    let bits = |v: &[f32]| v.iter().map(|&x| as_bits(x, op)).collect::<Vec<_>>();
    if exact {
        assert_same(
            &bits(got),
            &bits(&want),
            &format!("{case}: vs the CPU reference"),
        );
    } else {
        assert_same(
            &number(got),
            &number(&want),
            &format!("{case}: vs the CPU reference"),
        );
    }
}

fn check_int(got: &[i64], data: &[i32], shape: [usize; 3], dim: usize, op: ScanOp, case: &str) {
    let stock = ints(stock_int(int_tensor(data, shape, &Device::flex()), dim, op));
    assert_same(got, &stock, &format!("{case}: vs Burn's op on Flex"));
    let want: Vec<i64> = reference(data, &shape, dim, op)
        .into_iter()
        .map(i64::from)
        .collect();
    assert_same(got, &want, &format!("{case}: vs the CPU reference"));
}

/// Every op x kind x shape x dim (also as a negative dim) on `device`; `exact`: see
/// [`check_float`].
fn every_op_on(device: &Device, exact: bool, label: &str) {
    let (mut rng, _) = rng(&format!("every_op_every_dim ({label})"));
    for shape in shapes() {
        let n: usize = shape.iter().product();
        // Specials a few times a long lane (a zero ends a product's story), often in short.
        let special = (8.0 / n as f64).clamp(0.002, 0.05);
        for op in OPS {
            // About three NaNs a tensor, in one tensor of two: lanes with and without them.
            let nan = if rng.random_bool(0.5) {
                3.0 / n as f64
            } else {
                0.0
            };
            let mut budget = 100;
            let data: Vec<f32> = (0..n)
                .map(|_| sample_f32(&mut rng, op, special, nan, &mut budget))
                .collect();
            let mut budget = 25;
            let keys: Vec<i32> = (0..n)
                .map(|_| sample_i32(&mut rng, op, special, &mut budget))
                .collect();
            let x = float_tensor(&data, shape, device);
            let k = int_tensor(&keys, shape, device);
            for dim in 0..3 {
                let case = format!("{label} {} {shape:?} dim {dim}", op.name());
                let got = floats(run(x.clone(), dim as i32, op));
                check_float(&got, &data, shape, dim, op, exact, &format!("f32 {case}"));
                let got_int = ints(run(k.clone(), dim as i32, op));
                check_int(&got_int, &keys, shape, dim, op, &format!("i32 {case}"));
                // A negative dim is the same dim, bit for bit (on the small shapes).
                if n < 1000 {
                    let negative = dim as i32 - 3;
                    let bits = |v: &[f32]| v.iter().map(|&x| x.to_bits()).collect::<Vec<_>>();
                    let again = floats(run(x.clone(), negative, op));
                    let named = format!("f32 {case} as dim {negative}");
                    assert_same(&bits(&again), &bits(&got), &named);
                    let again = ints(run(k.clone(), negative, op));
                    assert_same(&again, &got_int, &format!("i32 {case} as dim {negative}"));
                }
            }
        }
    }
}

#[test]
fn every_op_every_dim_on_the_device() {
    let _serial = serial();
    every_op_on(&Device::default(), true, "device");
}

#[test]
fn every_op_every_dim_on_flex() {
    every_op_on(&Device::flex(), false, "flex");
}

#[cfg(feature = "ndarray")]
#[test]
#[allow(deprecated)] // Burn deprecates NdArray; its users are still served.
fn every_op_every_dim_on_ndarray() {
    every_op_on(&Device::ndarray(), false, "ndarray");
}

/// The four scans (one Burn op, `sieve_cumulative`, told apart by its `ScanOp`) and the same
/// scan of a Float and an Int tensor (one op, told apart by the `Values` kind), queued together
/// on one Fusion stream before anything is read: each result is its own operator's and kind's.
/// Three rounds in different orders, so a stream whose op sequence Fusion has seen before (and
/// whose plan it replays) still runs each op with its own operator.
#[test]
fn scans_queued_together_keep_their_operator_and_kind() {
    let _serial = serial();
    let device = Device::default();
    let x = Tensor::<1>::from_floats([3.0f32, -1.0, 2.0, 0.5, -2.0, 4.0], &device);
    let k = Tensor::<1, Int>::from_ints([3, -1, 2, 5, -2, 4], &device);
    let want_float: [(ScanOp, [f32; 6]); 4] = [
        (ScanOp::Sum, [3.0, 2.0, 4.0, 4.5, 2.5, 6.5]),
        (ScanOp::Prod, [3.0, -3.0, -6.0, -3.0, 6.0, 24.0]),
        (ScanOp::Min, [3.0, -1.0, -1.0, -1.0, -2.0, -2.0]),
        (ScanOp::Max, [3.0, 3.0, 3.0, 3.0, 3.0, 4.0]),
    ];
    let want_int: [(ScanOp, [i64; 6]); 2] = [
        (ScanOp::Sum, [3, 2, 4, 9, 7, 11]),
        (ScanOp::Max, [3, 3, 3, 5, 5, 5]),
    ];
    let float_op = |op: ScanOp, t: Tensor<1>| match op {
        ScanOp::Sum => sieve_burn::cumsum(t, 0),
        ScanOp::Prod => sieve_burn::cumprod(t, 0),
        ScanOp::Min => sieve_burn::cummin(t, 0),
        ScanOp::Max => sieve_burn::cummax(t, 0),
    };
    let int_op = |op: ScanOp, t: Tensor<1, Int>| match op {
        ScanOp::Sum => sieve_burn::cumsum(t, 0),
        _ => sieve_burn::cummax(t, 0),
    };
    for round in [[0, 1, 2, 3], [0, 1, 2, 3], [3, 2, 1, 0]] {
        // Everything queued first (floats, then ints), then read.
        let floats_queued: Vec<_> = round
            .iter()
            .map(|&i| (i, float_op(want_float[i].0, x.clone())))
            .collect();
        let ints_queued: Vec<_> = [1, 0]
            .iter()
            .map(|&i| (i, int_op(want_int[i].0, k.clone())))
            .collect();
        for (i, got) in floats_queued {
            let (op, want) = want_float[i];
            assert_eq!(floats(got), want, "{} in round {round:?}", op.name());
        }
        for (i, got) in ints_queued {
            let (op, want) = want_int[i];
            assert_eq!(ints(got), want, "int {} in round {round:?}", op.name());
        }
    }
}

/// PyTorch's rules, by hand: NaN sticks (the latest NaN's payload), the latest of equal values
/// wins (so the sign of a zero is the latest zero's), products of zeros and infinities.
#[test]
fn torch_rules_by_hand() {
    let _serial = serial();
    let device = Device::default();
    let [a, b, _] = NANS.map(f32::from_bits);
    let inf = f32::INFINITY;
    let cases: [(ScanOp, Vec<f32>, Vec<f32>); 6] = [
        (
            ScanOp::Min,
            vec![0.0, -0.0, 1.0, 0.0],
            vec![0.0, -0.0, -0.0, 0.0],
        ),
        (
            ScanOp::Max,
            vec![-0.0, 0.0, -1.0, -0.0],
            vec![-0.0, 0.0, 0.0, -0.0],
        ),
        (
            ScanOp::Min,
            vec![2.0, a, -inf, b, 1.0],
            vec![2.0, a, a, b, b],
        ),
        (
            ScanOp::Max,
            vec![-inf, 3.0, b, inf, a],
            vec![-inf, 3.0, b, b, a],
        ),
        (
            ScanOp::Prod,
            vec![2.0, -0.0, 3.0, inf, 1.0],
            vec![2.0, -0.0, -0.0, f32::NAN, f32::NAN],
        ),
        (
            ScanOp::Prod,
            vec![-inf, -0.5, 0.0, -1.0],
            vec![-inf, inf, f32::NAN, f32::NAN],
        ),
    ];
    for (op, input, want) in cases {
        let n = input.len();
        let x = Tensor::<3>::from_data(TensorData::new(input.clone(), [1, 1, n]), &device);
        let got = floats(run(x, -1, op));
        let bits = |v: &[f32]| v.iter().map(|&x| as_bits(x, op)).collect::<Vec<_>>();
        assert_same(
            &bits(&got),
            &bits(&want),
            &format!("{} of {input:?}", op.name()),
        );
    }
    // Ints: wrapping products, exact extremes.
    let x = Tensor::<1, Int>::from_data(
        TensorData::new(vec![i32::MAX, 2, -1, i32::MIN, 0], [5]),
        (&device, DType::I32),
    );
    assert_eq!(
        ints(sieve_burn::cumprod(x.clone(), 0)),
        [i32::MAX as i64, -2, 2, 0, 0]
    );
    assert_eq!(
        ints(sieve_burn::cummin(x.clone(), 0)),
        [i32::MAX as i64, 2, -1, i32::MIN as i64, i32::MIN as i64]
    );
    assert_eq!(ints(sieve_burn::cummax(x, 0)), [i32::MAX as i64; 5]);
}

/// Int products wrap as two's complement (PyTorch's), across tiles: against the reference.
#[test]
fn int_products_wrap() {
    let _serial = serial();
    let device = Device::default();
    let (mut rng, _) = rng("int_products_wrap");
    let shape = [2, 2 * tile() + 7, 1];
    let n: usize = shape.iter().product();
    let keys: Vec<i32> = (0..n).map(|_| rng.random_range(-9..=9)).collect();
    let got = ints(sieve_burn::cumprod(int_tensor(&keys, shape, &device), 1));
    let want: Vec<i64> = reference(&keys, &shape, 1, ScanOp::Prod)
        .into_iter()
        .map(i64::from)
        .collect();
    assert_same(&got, &want, "wrapping i32 cumprod");
}

/// Views (permuted, narrowed: an offset into the buffer, transposed and narrowed) are read in
/// logical order.
#[test]
fn views_are_read_in_logical_order() {
    let _serial = serial();
    let device = Device::default();
    let (mut rng, _) = rng("cumulative views_are_read_in_logical_order");
    let shape = [6, 40, 9];
    let n: usize = shape.iter().product();
    for op in OPS {
        let mut budget = 60;
        let data: Vec<f32> = (0..n)
            .map(|_| sample_f32(&mut rng, op, 0.01, 0.002, &mut budget))
            .collect();
        let keys: Vec<i32> = data
            .iter()
            .map(|&v| if v.is_finite() { (v * 4.0) as i32 } else { 3 })
            .collect();
        let base = float_tensor(&data, shape, &device);
        let int_base = int_tensor(&keys, shape, &device);
        let views = [
            (
                "permuted",
                base.clone().permute([2, 0, 1]),
                int_base.clone().permute([2, 0, 1]),
            ),
            (
                "narrowed",
                base.clone().narrow(1, 3, 31),
                int_base.clone().narrow(1, 3, 31),
            ),
            (
                "swapped+narrowed",
                base.clone().swap_dims(0, 2).narrow(0, 1, 7),
                int_base.clone().swap_dims(0, 2).narrow(0, 1, 7),
            ),
        ];
        for (name, view, int_view) in views {
            let view_shape: [usize; 3] = view.dims();
            let logical = floats(view.clone());
            let int_logical: Vec<i32> = ints(int_view.clone())
                .into_iter()
                .map(|v| v as i32)
                .collect();
            for dim in 0..3 {
                let case = format!("{} {name} dim {dim}", op.name());
                let got = floats(run(view.clone(), dim as i32, op));
                check_float(
                    &got,
                    &logical,
                    view_shape,
                    dim,
                    op,
                    true,
                    &format!("f32 {case}"),
                );
                let got = ints(run(int_view.clone(), dim as i32, op));
                check_int(
                    &got,
                    &int_logical,
                    view_shape,
                    dim,
                    op,
                    &format!("i32 {case}"),
                );
            }
        }
    }
}

/// Under Fusion (the default device fuses elementwise work): fused neighbours on both sides
/// must see the op's input and output in order.
#[test]
fn fused_neighbours() {
    let _serial = serial();
    let device = Device::default();
    let n = 3 * tile() + 1;
    let ones = Tensor::<1>::ones([n], &device);
    // cumprod of (2 * 1 - 1) = 1s, then + 1.
    let y = floats(sieve_burn::cumprod(ones.clone() * 2.0 - 1.0, 0) + 1.0);
    assert!(y.iter().all(|&v| v == 2.0), "fused cumprod");
    // A descending ramp: the running minimum is the ramp itself, the maximum its first value.
    let ramp = Tensor::<1, Int>::arange(0..n as i64, &device).float();
    let down = floats(sieve_burn::cummin(ramp.clone() * -1.0, 0) * 2.0);
    assert!(
        down.iter().enumerate().all(|(i, &v)| v == -2.0 * i as f32),
        "fused cummin"
    );
    let up = floats(sieve_burn::cummax(ramp.clone() * -1.0 + 5.0, 0) - 5.0);
    assert!(up.iter().all(|&v| v == 0.0), "fused cummax");
    let keys = Tensor::<1, Int>::arange(0..n as i64, &device);
    let max = ints(sieve_burn::cummax(keys.clone() * 3 - 7, 0) + 7);
    assert!(
        max.iter().enumerate().all(|(i, &v)| v == 3 * i as i64),
        "fused int cummax"
    );
}

#[test]
fn empty_tensors_work() {
    let _serial = serial();
    for device in [Device::default(), Device::flex()] {
        for op in OPS {
            for dim in 0..3 {
                let x = Tensor::<3>::zeros([0, 5, 2], &device);
                assert_eq!(run(x, dim, op).dims(), [0, 5, 2]);
                let x = Tensor::<3, Int>::zeros([3, 0, 2], &device);
                assert_eq!(run(x, dim, op).dims(), [3, 0, 2]);
            }
        }
    }
    // And their gradients.
    let device = Device::default().autodiff();
    for op in OPS {
        let x = Tensor::<2>::zeros([4, 0], &device).require_grad();
        let grads = run_2(x.clone(), op).sum().backward();
        assert_eq!(
            x.grad(&grads).map(|g| g.dims()),
            Some([4, 0]),
            "{}",
            op.name()
        );
    }
}

fn run_2(x: Tensor<2>, op: ScanOp) -> Tensor<2> {
    match op {
        ScanOp::Prod => sieve_burn::cumprod(x, 1),
        ScanOp::Min => sieve_burn::cummin(x, 1),
        ScanOp::Max => sieve_burn::cummax(x, 1),
        ScanOp::Sum => sieve_burn::cumsum(x, 1),
    }
}

#[test]
#[should_panic(expected = "Operation: 'Cumprod'")]
fn bad_dim_names_cumprod() {
    let _ = sieve_burn::cumprod(Tensor::<2>::ones([2, 2], &Device::flex()), 2);
}

#[test]
#[should_panic(expected = "BoundsError: dimension -3 out of bounds: 0..2")]
fn bad_negative_dim_names_the_bounds() {
    let _ = sieve_burn::cummin(Tensor::<2>::ones([2, 2], &Device::flex()), -3);
}

#[test]
#[should_panic(expected = "Operation: 'Cummax'")]
fn bad_dim_names_cummax() {
    let _ = sieve_burn::cummax(Tensor::<2, Int>::ones([2, 2], &Device::flex()), 5);
}

// ---------------------------------------------------------------------------------------------
// Gradients

/// `d sum(cumprod(x) * w) / dx[i] = sum over j >= i of w[j] * prod(x[k], k <= j, k != i)`
/// along each lane, in f64 by that definition (O(n^2)), and the sum of the terms' magnitudes
/// (the scale of the rounding error).
fn cumprod_gradient(x: &[f32], w: &[f32], shape: &[usize], dim: usize) -> (Vec<f64>, Vec<f64>) {
    let mut grad = vec![0.0; x.len()];
    let mut scale = vec![0.0; x.len()];
    for lane in common::lanes(shape, dim).into_iter().map(|lane| lane.at) {
        for (i, &p) in lane.iter().enumerate() {
            for j in i..lane.len() {
                let product: f64 = (0..=j)
                    .filter(|&k| k != i)
                    .map(|k| x[lane[k]] as f64)
                    .product();
                let term = w[lane[j]] as f64 * product;
                grad[p] += term;
                scale[p] += term.abs();
            }
        }
    }
    (grad, scale)
}

/// Where each output of cummin/cummax along a lane comes from (PyTorch's indices: a NaN or a
/// value `<=` (min) / `>=` (max) the running one replaces it), and the gradient that sends
/// `w[j]` to output `j`'s source.
fn extreme_gradient(x: &[f32], w: &[f32], shape: &[usize], dim: usize, op: ScanOp) -> Vec<f32> {
    let mut grad = vec![0.0f32; x.len()];
    for lane in common::lanes(shape, dim).into_iter().map(|lane| lane.at) {
        let (mut best, mut source) = (f32::NAN, 0);
        for (j, &p) in lane.iter().enumerate() {
            let v = x[p];
            let better = match op {
                ScanOp::Min => v <= best,
                _ => v >= best,
            };
            if j == 0 || v.is_nan() || (!best.is_nan() && better) {
                (best, source) = (v, p);
            }
            grad[source] += w[p];
        }
    }
    grad
}

/// Lanes of cumprod's zero cases, one a row of `[7, 12]`: none, one in the middle, two, first,
/// last, first and last, all zeros.
fn zero_rows(rng: &mut StdRng) -> Vec<f32> {
    let zeros: [&[usize]; 7] = [
        &[],
        &[5],
        &[3, 8],
        &[0],
        &[11],
        &[0, 11],
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    ];
    let mut out = Vec::new();
    for at in zeros {
        for j in 0..12 {
            out.push(if at.contains(&j) { 0.0 } else { factor(rng) });
        }
    }
    out
}

/// A nonzero factor of magnitude 0.5..1.5 in eighths (exact; products stay moderate).
fn factor(rng: &mut StdRng) -> f32 {
    let v = rng.random_range(4..=12) as f32 / 8.0;
    if rng.random_bool(0.3) { -v } else { v }
}

fn weights(rng: &mut StdRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-3..=3) as f32).collect()
}

/// The gradient of `sum(op(x, dim) * w)` with respect to `x` on `device`.
fn gradient_of(
    device: &Device,
    x: &[f32],
    w: &[f32],
    shape: [usize; 3],
    dim: usize,
    op: ScanOp,
) -> Vec<f32> {
    let xt = float_tensor(x, shape, device).require_grad();
    let wt = float_tensor(w, shape, device);
    let grads = (run(xt.clone(), dim as i32, op) * wt).sum().backward();
    floats(xt.grad(&grads).expect("a gradient for x"))
}

fn check_cumprod_gradient(
    device: &Device,
    x: &[f32],
    w: &[f32],
    shape: [usize; 3],
    dim: usize,
    case: &str,
) {
    let got: Vec<f64> = gradient_of(device, x, w, shape, dim, ScanOp::Prod)
        .into_iter()
        .map(f64::from)
        .collect();
    let (want, scale) = cumprod_gradient(x, w, &shape, dim);
    common::assert_close(&got, &want, &scale, 1e-5, 1e-6, case);
}

fn cumprod_gradients_on(device: &Device, label: &str) {
    let (mut rng, _) = rng(&format!("cumprod_gradients ({label})"));
    // The zero cases along dim 2 (rows of [1, 7, 12]) and, transposed, along dim 0.
    let rows = zero_rows(&mut rng);
    let w = weights(&mut rng, rows.len());
    check_cumprod_gradient(
        device,
        &rows,
        &w,
        [1, 7, 12],
        2,
        &format!("{label}: zero rows"),
    );
    let mut columns = vec![0.0; rows.len()];
    let mut w_columns = vec![0.0; rows.len()];
    for r in 0..7 {
        for j in 0..12 {
            columns[j * 7 + r] = rows[r * 12 + j];
            w_columns[j * 7 + r] = w[r * 12 + j];
        }
    }
    check_cumprod_gradient(
        device,
        &columns,
        &w_columns,
        [12, 7, 1],
        0,
        &format!("{label}: zero columns"),
    );
    // Random zeros (lanes with none, one, several) along every dim.
    let shape = [5, 9, 6];
    let n: usize = shape.iter().product();
    let x: Vec<f32> = (0..n)
        .map(|_| {
            if rng.random_bool(0.12) {
                0.0
            } else {
                factor(&mut rng)
            }
        })
        .collect();
    let w = weights(&mut rng, n);
    for dim in 0..3 {
        check_cumprod_gradient(
            device,
            &x,
            &w,
            shape,
            dim,
            &format!("{label}: random zeros dim {dim}"),
        );
    }
}

#[test]
fn cumprod_gradient_is_exact_at_zeros_on_the_device() {
    let _serial = serial();
    cumprod_gradients_on(&Device::default().autodiff(), "device");
}

#[test]
fn cumprod_gradient_is_exact_at_zeros_on_flex() {
    cumprod_gradients_on(&Device::flex().autodiff(), "flex");
}

#[cfg(feature = "ndarray")]
#[test]
#[allow(deprecated)]
fn cumprod_gradient_is_exact_at_zeros_on_ndarray() {
    cumprod_gradients_on(&Device::ndarray().autodiff(), "ndarray");
}

/// Past the first zero the forward product may overflow to inf (here: 2^100 * 2^100) and
/// then meet a second zero (inf * 0 = NaN); neither the gradient before the first zero nor
/// the one at it may see that NaN (mathematically every product past the second zero is 0).
/// (Burn's own `cumprod` backward multiplies by 0/1 masks and gets NaN at every position.)
#[test]
fn cumprod_gradient_ignores_overflow_past_a_zero() {
    let _serial = serial();
    let device = Device::default().autodiff();
    let big = 2f32.powi(100);
    let x = [2.0, 3.0, 0.0, big, big, 0.0, 5.0];
    let w = [1.0; 7];
    let got = gradient_of(&device, &x, &w, [1, 1, 7], 2, ScanOp::Prod);
    // d/dx0 = 1 + 3 = 4, d/dx1 = 2, d/dx2 = 6 * (1 + big + big^2 (inf) + 0 + 0) = inf.
    assert_eq!(got[..2], [4.0, 2.0], "{got:?}");
    assert_eq!(got[2], f32::INFINITY, "{got:?}");
    assert_eq!(got[3..], [0.0; 4], "{got:?}");
}

fn extreme_gradients_on(device: &Device, label: &str) {
    let (mut rng, _) = rng(&format!("extreme_gradients ({label})"));
    for shape in [[4usize, 9, 6], [1, tile() + 1, 1]] {
        let n: usize = shape.iter().product();
        for op in [ScanOp::Min, ScanOp::Max] {
            let mut budget = 0;
            let x: Vec<f32> = (0..n)
                .map(|_| sample_f32(&mut rng, op, 0.05, 3.0 / n as f64, &mut budget))
                .collect();
            let w = weights(&mut rng, n);
            for dim in 0..3 {
                let got = gradient_of(device, &x, &w, shape, dim, op);
                let want = extreme_gradient(&x, &w, &shape, dim, op);
                assert_same(
                    &got,
                    &want,
                    &format!("{label}: {} gradient {shape:?} dim {dim}", op.name()),
                );
            }
        }
    }
    // By hand: ties go to the latest, a NaN takes every later gradient.
    let nan = f32::NAN;
    let x = [3.0, 1.0, 2.0, 1.0, nan, 0.0, nan, -1.0];
    let w = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];
    let got = gradient_of(device, &x, &w, [1, 1, 8], 2, ScanOp::Min);
    assert_eq!(
        got,
        [1.0, 6.0, 0.0, 8.0, 48.0, 0.0, 192.0, 0.0],
        "{label}: cummin by hand"
    );
}

#[test]
fn extreme_gradients_go_to_the_source_on_the_device() {
    let _serial = serial();
    extreme_gradients_on(&Device::default().autodiff(), "device");
}

#[test]
fn extreme_gradients_go_to_the_source_on_flex() {
    extreme_gradients_on(&Device::flex().autodiff(), "flex");
}

#[cfg(feature = "ndarray")]
#[test]
#[allow(deprecated)]
fn extreme_gradients_go_to_the_source_on_ndarray() {
    extreme_gradients_on(&Device::ndarray().autodiff(), "ndarray");
}
