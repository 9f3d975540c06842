//! Dims as Burn takes them: every sieve_burn op with a `dim` takes any integer type and
//! negative dims (counting from the end), on the cube backend and on Flex's fallback, giving
//! exactly the positive dim's result (and Burn's own op's, where Burn has the op); and an
//! out-of-range dim, positive or negative, panics with the message Burn's op gives.

use crate::common;

use burn::tensor::{AsIndex, Device, Int, Tensor, TensorData};
use common::{bits, i64s, panic_message, rng};
use rand::Rng;
use rand::seq::SliceRandom;
use sieve_burn::TopKOptions;

/// One output of an op: its shape and its elements (floats as bits), compared exactly.
type Output = (Vec<usize>, Vec<i64>);

fn float<const D: usize>(t: Tensor<D>) -> Output {
    (
        t.dims().to_vec(),
        bits(t).into_iter().map(i64::from).collect(),
    )
}

fn int<const D: usize>(t: Tensor<D, Int>) -> Output {
    (t.dims().to_vec(), i64s(t))
}

/// The `k` of the top-k ops: every dim of the test shapes is longer (Burn's `argtopk` asserts
/// `k < len`).
const K: usize = 2;

/// Every sieve_burn op that takes a dim, run at `dim` on `x` (Float), its Int twin and a mask
/// of it; each output named.
fn sieve_outputs<const D: usize>(x: &Tensor<D>, dim: impl AsIndex) -> Vec<(&'static str, Output)> {
    let half = x.shape().num_elements() as f32 / 2.0;
    let mask = x.clone().greater_equal_elem(half);
    let keys = x.clone().int();
    let (values, indices, counts) = sieve_burn::stable_partition(x.clone(), mask, dim);
    let (bit_values, bit_indices, bit_counts) = sieve_burn::split_by_bit(keys.clone(), 1, dim);
    let (sorted, sorted_order) = sieve_burn::sort_with_indices(x.clone(), dim);
    let (down, down_order) = sieve_burn::sort_descending_with_indices(x.clone(), dim);
    let (top, top_indices) = sieve_burn::topk_with_indices(x.clone(), K, dim);
    let (bottom, bottom_indices) = sieve_burn::bottomk_with_indices(x.clone(), K, dim);
    let options = TopKOptions {
        sorted: false,
        ..TopKOptions::default()
    };
    let (unsorted, unsorted_indices) = sieve_burn::topk_with_options(x.clone(), K, dim, options);
    vec![
        ("cumsum", float(sieve_burn::cumsum(x.clone(), dim))),
        ("cumsum (Int)", int(sieve_burn::cumsum(keys.clone(), dim))),
        ("stable_partition values", float(values)),
        ("stable_partition indices", int(indices)),
        ("stable_partition counts", int(counts)),
        ("split_by_bit values", int(bit_values)),
        ("split_by_bit indices", int(bit_indices)),
        ("split_by_bit counts", int(bit_counts)),
        ("sort", float(sieve_burn::sort(x.clone(), dim))),
        (
            "sort_descending",
            float(sieve_burn::sort_descending(x.clone(), dim)),
        ),
        ("sort_with_indices values", float(sorted)),
        ("sort_with_indices indices", int(sorted_order)),
        ("sort_descending_with_indices values", float(down)),
        ("sort_descending_with_indices indices", int(down_order)),
        ("argsort", int(sieve_burn::argsort(x.clone(), dim))),
        (
            "argsort_descending",
            int(sieve_burn::argsort_descending(x.clone(), dim)),
        ),
        ("topk", float(sieve_burn::topk(x.clone(), K, dim))),
        ("topk_with_indices values", float(top)),
        ("topk_with_indices indices", int(top_indices)),
        ("argtopk", int(sieve_burn::argtopk(x.clone(), K, dim))),
        ("bottomk_with_indices values", float(bottom)),
        ("bottomk_with_indices indices", int(bottom_indices)),
        ("topk_with_options values", float(unsorted)),
        ("topk_with_options indices", int(unsorted_indices)),
    ]
}

/// Burn's own ops of the same names at `dim`, named as in [`sieve_outputs`].
fn burn_outputs<const D: usize>(x: &Tensor<D>, dim: impl AsIndex) -> Vec<(&'static str, Output)> {
    let (sorted, sorted_order) = x.clone().sort_with_indices(dim);
    let (down, down_order) = x.clone().sort_descending_with_indices(dim);
    let (top, top_indices) = x.clone().topk_with_indices(K, dim);
    vec![
        ("cumsum", float(x.clone().cumsum(dim))),
        ("cumsum (Int)", int(x.clone().int().cumsum(dim))),
        ("sort", float(x.clone().sort(dim))),
        ("sort_descending", float(x.clone().sort_descending(dim))),
        ("sort_with_indices values", float(sorted)),
        ("sort_with_indices indices", int(sorted_order)),
        ("sort_descending_with_indices values", float(down)),
        ("sort_descending_with_indices indices", int(down_order)),
        ("argsort", int(x.clone().argsort(dim))),
        ("argsort_descending", int(x.clone().argsort_descending(dim))),
        ("topk", float(x.clone().topk(K, dim))),
        ("topk_with_indices values", float(top)),
        ("topk_with_indices indices", int(top_indices)),
        ("argtopk", int(x.clone().argtopk(K, dim))),
    ]
}

/// On a `shape` tensor of distinct small integers (so every sort, top-k and sum has one exact
/// answer), dim `d - D` (an i64) gives what dim `d` (a usize) gives, and what Burn's ops give
/// at `d - D`.
fn negative_dims_match<const D: usize>(device: &Device, shape: [usize; D], test: &str) {
    let (mut rng, seed) = rng(test);
    let n = shape.iter().product();
    let mut data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    data.shuffle(&mut rng);
    let x = Tensor::<D>::from_data(TensorData::new(data, shape), device);
    for d in 0..D {
        let negative = d as i64 - D as i64;
        let case = format!("seed {seed}: {shape:?}, dim {negative} against dim {d}");
        let want = sieve_outputs(&x, d);
        let got = sieve_outputs(&x, negative);
        assert_eq!(got.len(), want.len());
        for ((name, got), (_, want)) in got.iter().zip(&want) {
            assert_eq!(got, want, "{case}: {name}");
        }
        for (name, burn) in burn_outputs(&x, negative) {
            let (_, ours) = want
                .iter()
                .find(|(ours, _)| *ours == name)
                .unwrap_or_else(|| panic!("{name} is among sieve_outputs"));
            assert_eq!(ours, &burn, "{case}: {name} against Burn's");
        }
    }
}

fn negative_dims_match_at_every_rank(device: &Device, test: &str) {
    negative_dims_match(device, [5], test);
    negative_dims_match(device, [3, 4], test);
    negative_dims_match(device, [3, 4, 5], test);
}

#[test]
fn negative_dims_count_from_the_end_on_the_cube_backend() {
    let _device = common::serial();
    negative_dims_match_at_every_rank(
        &Device::default(),
        "negative_dims_count_from_the_end_on_the_cube_backend",
    );
}

#[test]
fn negative_dims_count_from_the_end_on_flex() {
    negative_dims_match_at_every_rank(&Device::flex(), "negative_dims_count_from_the_end_on_flex");
}

/// For every op Burn has too, sieve's panic for an out-of-range dim is Burn's, word for word
/// (Burn's helper that writes it is crate-private, so sieve writes the same words).
#[test]
fn out_of_range_dims_panic_with_burns_own_message() {
    let device = Device::flex();
    let x = Tensor::<2>::from_data([[3.0, 1.0, 2.0], [6.0, 5.0, 4.0]], &device);
    let keys = x.clone().int();
    for dim in [2i64, 3, -3, -4] {
        let cases: [(&str, Option<String>, Option<String>); 14] = [
            (
                "cumprod",
                panic_message(|| drop(sieve_burn::cumprod(x.clone(), dim))),
                panic_message(|| drop(x.clone().cumprod(dim))),
            ),
            (
                "cummin",
                panic_message(|| drop(sieve_burn::cummin(x.clone(), dim))),
                panic_message(|| drop(x.clone().cummin(dim))),
            ),
            (
                "cummax (Int)",
                panic_message(|| drop(sieve_burn::cummax(keys.clone(), dim))),
                panic_message(|| drop(keys.clone().cummax(dim))),
            ),
            (
                "cumsum",
                panic_message(|| drop(sieve_burn::cumsum(x.clone(), dim))),
                panic_message(|| drop(x.clone().cumsum(dim))),
            ),
            (
                "cumsum (Int)",
                panic_message(|| drop(sieve_burn::cumsum(keys.clone(), dim))),
                panic_message(|| drop(keys.clone().cumsum(dim))),
            ),
            (
                "sort",
                panic_message(|| drop(sieve_burn::sort(x.clone(), dim))),
                panic_message(|| drop(x.clone().sort(dim))),
            ),
            (
                "sort_descending",
                panic_message(|| drop(sieve_burn::sort_descending(x.clone(), dim))),
                panic_message(|| drop(x.clone().sort_descending(dim))),
            ),
            (
                "sort_with_indices",
                panic_message(|| drop(sieve_burn::sort_with_indices(x.clone(), dim))),
                panic_message(|| drop(x.clone().sort_with_indices(dim))),
            ),
            (
                "sort_descending_with_indices",
                panic_message(|| drop(sieve_burn::sort_descending_with_indices(x.clone(), dim))),
                panic_message(|| drop(x.clone().sort_descending_with_indices(dim))),
            ),
            (
                "argsort",
                panic_message(|| drop(sieve_burn::argsort(x.clone(), dim))),
                panic_message(|| drop(x.clone().argsort(dim))),
            ),
            (
                "argsort_descending",
                panic_message(|| drop(sieve_burn::argsort_descending(x.clone(), dim))),
                panic_message(|| drop(x.clone().argsort_descending(dim))),
            ),
            (
                "topk",
                panic_message(|| drop(sieve_burn::topk(x.clone(), 1, dim))),
                panic_message(|| drop(x.clone().topk(1, dim))),
            ),
            (
                "topk_with_indices",
                panic_message(|| drop(sieve_burn::topk_with_indices(x.clone(), 1, dim))),
                panic_message(|| drop(x.clone().topk_with_indices(1, dim))),
            ),
            (
                "argtopk",
                panic_message(|| drop(sieve_burn::argtopk(x.clone(), 1, dim))),
                panic_message(|| drop(x.clone().argtopk(1, dim))),
            ),
        ];
        for (op, ours, burns) in cases {
            let burns = burns.unwrap_or_else(|| panic!("Burn's {op} took dim {dim}"));
            assert!(
                burns.contains(&format!("dimension {dim} out of bounds: 0..2")),
                "{op}, dim {dim}: Burn's message changed: {burns}"
            );
            assert_eq!(ours, Some(burns), "{op}, dim {dim}");
        }
    }
}

/// Tests that `$call` panics with `$expected` (Burn's words) before anything runs; `x` is a
/// `[2, 3]` Float tensor on the default device, `mask` a mask of its shape, `keys` an Int one.
macro_rules! refuses {
    ($($test:ident: $expected:literal => |$x:ident, $mask:ident, $keys:ident| $call:expr;)*) => {$(
        #[test]
        #[should_panic(expected = $expected)]
        #[allow(unused_variables)]
        fn $test() {
            let device = Device::default();
            let $x = Tensor::<2>::ones([2, 3], &device);
            let $mask = $x.clone().greater_elem(0.5);
            let $keys = Tensor::<2, Int>::ones([2, 3], &device);
            let _ = $call;
        }
    )*};
}

refuses! {
    cumsum_dim_2: "Operation: 'Cumsum'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::cumsum(x, 2);
    cumsum_dim_minus_3: "Operation: 'Cumsum'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::cumsum(keys, -3);
    stable_partition_dim_2: "Operation: 'Stable Partition'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::stable_partition(x, mask, 2);
    stable_partition_dim_minus_3: "Operation: 'Stable Partition'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::stable_partition(x, mask, -3);
    split_by_bit_dim_2: "Operation: 'Split By Bit'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::split_by_bit(keys, 0, 2);
    split_by_bit_dim_minus_3: "Operation: 'Split By Bit'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::split_by_bit(keys, 0, -3);
    sort_dim_2: "Operation: 'Sort'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::sort(x, 2);
    sort_dim_minus_3: "Operation: 'Sort'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::sort(x, -3);
    sort_descending_dim_2: "Operation: 'Sort Descending'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::sort_descending(x, 2);
    sort_descending_dim_minus_3: "Operation: 'Sort Descending'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::sort_descending(x, -3);
    sort_with_indices_dim_2: "Operation: 'Sort With Indices'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::sort_with_indices(x, 2);
    sort_with_indices_dim_minus_3: "Operation: 'Sort With Indices'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::sort_with_indices(x, -3);
    sort_descending_with_indices_dim_2: "Operation: 'Sort Descending With Indices'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::sort_descending_with_indices(x, 2);
    sort_descending_with_indices_dim_minus_3: "Operation: 'Sort Descending With Indices'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::sort_descending_with_indices(keys, -3);
    argsort_dim_2: "Operation: 'Argsort'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::argsort(x, 2);
    argsort_dim_minus_3: "Operation: 'Argsort'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::argsort(x, -3);
    argsort_descending_dim_2: "Operation: 'Argsort Descending'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::argsort_descending(x, 2);
    argsort_descending_dim_minus_3: "Operation: 'Argsort Descending'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::argsort_descending(x, -3);
    topk_dim_2: "Operation: 'Top K'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::topk(x, 1, 2);
    topk_dim_minus_3: "Operation: 'Top K'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::topk(x, 1, -3);
    topk_with_indices_dim_2: "Operation: 'Top K With Indices'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::topk_with_indices(x, 1, 2);
    topk_with_indices_dim_minus_3: "Operation: 'Top K With Indices'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::topk_with_indices(keys, 1, -3);
    argtopk_dim_2: "Operation: 'Argtopk'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::argtopk(x, 1, 2);
    argtopk_dim_minus_3: "Operation: 'Argtopk'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::argtopk(x, 1, -3);
    bottomk_with_indices_dim_2: "Operation: 'Bottom K With Indices'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::bottomk_with_indices(x, 1, 2);
    bottomk_with_indices_dim_minus_3: "Operation: 'Bottom K With Indices'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::bottomk_with_indices(x, 1, -3);
    topk_with_options_dim_2: "Operation: 'Top K With Options'\n  Reason:\n    1. BoundsError: dimension 2 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::topk_with_options(x, 1, 2, TopKOptions::default());
    topk_with_options_dim_minus_3: "Operation: 'Top K With Options'\n  Reason:\n    1. BoundsError: dimension -3 out of bounds: 0..2 \n"
        => |x, mask, keys| sieve_burn::topk_with_options(x, 1, -3, TopKOptions::default());
}

/// Outputs along every dim of rank-3 tensors with dims of size 1 (contiguous and transposed
/// views) fed to fused ops beside other sieve outputs and views, as `median` does: each op's
/// values chosen by a mask from a narrowed `cumsum` along the same dim, against the values
/// gathered back by its indices (times 2, plus 1), and its indices masked; the same as the
/// outputs read on their own, at Fusion's first run of the sequence (op by op) and its fused
/// repeat. sieve's outputs along a dim that is not last are views of the rows' layout, which
/// Burn 0.22's fused kernels have misread (`median` of a `[2, n, 1]` view: session 39;
/// `[n, 1]` seen as `[1, n]`: session 33). Without session 39's `restore_axes` strides this
/// fails at `median` along dim 0 of `[2, 600, 1]` (lavapipe); the chain written here passed
/// there for the other ops, so it guards more layouts than it is known to break.
#[test]
fn outputs_along_a_dim_feed_fused_ops_as_read() {
    let _serial = common::serial();
    let device = Device::default();
    let (mut rng, seed) = rng("outputs_along_a_dim_feed_fused_ops_as_read");
    let n = 600;
    // A base shape and the dims swapped to view it (if any).
    type Layout = ([usize; 3], Option<(usize, usize)>);
    let layouts: [Layout; 8] = [
        ([2, n, 1], None),
        ([n, 2, 1], Some((0, 1))),
        ([1, n, 2], None),
        ([2, n, 1], Some((0, 2))),
        ([n, 1, 2], None),
        ([1, 2, n], Some((0, 2))),
        ([2, 1, n], None),
        ([n, 1, 2], Some((1, 2))),
    ];
    type Op = fn(Tensor<3>, usize) -> (Tensor<3>, Tensor<3, Int>);
    let ops: [(&str, Op); 5] = [
        ("sort_with_indices", |t, d| {
            sieve_burn::sort_with_indices(t, d)
        }),
        ("topk_with_indices k=1", |t, d| {
            sieve_burn::topk_with_indices(t, 1, d)
        }),
        ("bottomk_with_indices k=2", |t, d| {
            let k = 2.min(t.dims()[d]);
            sieve_burn::bottomk_with_indices(t, k, d as isize)
        }),
        ("kthvalue k=1", |t, d| sieve_burn::kthvalue(t, 1, d)),
        ("median", |t, d| sieve_burn::median(t, d)),
    ];
    for (base, swap) in layouts {
        let x: Vec<f32> = (0..2 * n)
            .map(|_| rng.random_range(-8i32..8) as f32)
            .collect();
        let view = || {
            let t = Tensor::<3>::from_data(TensorData::new(x.clone(), base), &device);
            match swap {
                Some((a, b)) => t.swap_dims(a, b),
                None => t,
            }
        };
        let dims = view().dims();
        for dim in 0..3 {
            for (name, op) in ops {
                let case = format!(
                    "{name} dim {dim} of {dims:?} (base {base:?}, swap {swap:?}, seed {seed})"
                );
                let (values, indices) = op(view(), dim);
                let shape = values.dims();
                let (want_v, want_i) = (bits(values), i64s(indices));
                let (len, out) = (dims[dim], shape[dim]);
                let sums = || sieve_burn::cumsum(view(), dim).narrow(dim, len - out, out);
                let want_c = bits(sums());
                for round in 0..2 {
                    let (values, indices) = op(view(), dim);
                    let mask = sums().lower_elem(0.0);
                    let back = view()
                        .gather(dim, indices.clone())
                        .mul_scalar(2.0)
                        .add_scalar(1.0);
                    let got_v = bits(values.mask_where(mask.clone(), back));
                    let got_i = i64s(indices.mask_fill(mask, -1));
                    let masked = |i: usize| f32::from_bits(want_c[i]) < 0.0;
                    let wrong = (0..got_v.len())
                        .filter(|&i| {
                            let v = f32::from_bits(want_v[i]);
                            let (v, j) = if masked(i) {
                                (2.0 * v + 1.0, -1)
                            } else {
                                (v, want_i[i])
                            };
                            got_v[i] != v.to_bits() || got_i[i] != j
                        })
                        .count();
                    assert_eq!(
                        wrong,
                        0,
                        "{case}, round {round}: elements wrong of {}",
                        got_v.len()
                    );
                }
            }
        }
    }
}
