//! sieve_burn's top-k ops (topk, topk_with_indices, argtopk, bottomk_with_indices,
//! topk_with_options) through Burn's public API against the first k of a stable CPU sort in
//! PyTorch's order: every dim, views, Float (NaN, +-0.0, +-inf, heavy duplicates) and Int,
//! k = 0, 1, n-1, n, every strategy, unsorted output (same set), empty tensors, gradients,
//! bad k, the Flex fallback.

use crate::common;

use burn::tensor::{Device, Int, Tensor, TensorData};
use common::{assert_same, bits, check_first_k, first_k_along, i64s, rng, special_f32};
use rand::Rng;
use sieve::topk::TopkStrategy;
use sieve_burn::TopKOptions;

#[test]
fn float_topk_every_dim_k_and_direction() {
    let device = Device::default();
    let (mut rng, seed) = rng("float_topk_every_dim_k_and_direction");
    for shape in [[3usize, 33, 5], [2, 1500, 1], [1, 1, 1]] {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|_| special_f32(&mut rng)).collect();
        let x = Tensor::<3>::from_data(TensorData::new(data.clone(), shape), &device);
        for dim in 0..3 {
            let len = shape[dim];
            let mut ks = vec![0, 1, len / 2, len.saturating_sub(1), len];
            ks.dedup();
            for k in ks {
                for largest in [true, false] {
                    let case = format!("seed {seed}: {shape:?} dim {dim} k {k} largest {largest}");
                    let (indices, want) = check_first_k(&x, &data, &shape, dim, k, largest, &case);
                    if largest {
                        let values = sieve_burn::topk(x.clone(), k, dim);
                        assert_same(&bits(values), &want, &format!("{case}: topk"));
                        let args = sieve_burn::argtopk(x.clone(), k, dim);
                        assert_same(&i64s(args), &indices, &format!("{case}: argtopk"));
                    }
                }
            }
        }
    }
}

/// Every strategy through `topk_with_options`, sorted and not (unsorted: the same set, so
/// the indices compared as sorted lists per row), on an Int view.
#[test]
fn every_strategy_on_int_views() {
    let device = Device::default();
    let (mut rng, seed) = rng("every_strategy_on_int_views");
    let data: Vec<i32> = (0..6 * 40 * 9).map(|_| rng.random_range(-5..5)).collect();
    let base = Tensor::<3, Int>::from_data(TensorData::new(data, [6, 40, 9]), &device);
    let view = base.swap_dims(0, 2).narrow(1, 3, 31);
    let dims = view.dims();
    let logical = i64s(view.clone());
    for strategy in TopkStrategy::ALL {
        for dim in 0..3 {
            let k = dims[dim] / 3 + 1;
            for sorted in [true, false] {
                let options = TopKOptions {
                    largest: true,
                    sorted,
                    strategy,
                };
                let case = format!("seed {seed}: {strategy:?} dim {dim} k {k} sorted {sorted}");
                let (indices, source) = first_k_along(&logical, &dims, dim, k, true);
                let (values, got) = sieve_burn::topk_with_options(view.clone(), k, dim, options);
                let (mut got, mut values) = (i64s(got), i64s(values));
                let mut want_values: Vec<i64> = source.iter().map(|&s| logical[s]).collect();
                let mut want = indices;
                if !sorted {
                    // The same set per output row: compare (index, value) pairs sorted.
                    let pairs = |ix: &mut Vec<i64>, vs: &mut Vec<i64>| {
                        let mut p: Vec<(i64, i64)> =
                            ix.iter().copied().zip(vs.iter().copied()).collect();
                        p.sort();
                        (*ix, *vs) = p.into_iter().unzip();
                    };
                    pairs(&mut got, &mut values);
                    pairs(&mut want, &mut want_values);
                }
                assert_same(&got, &want, &format!("{case}: indices"));
                assert_same(&values, &want_values, &format!("{case}: values"));
            }
        }
    }
}

#[test]
fn empty_tensors_work() {
    let device = Device::default();
    let x = Tensor::<2>::zeros([0, 5], &device);
    assert_eq!(sieve_burn::topk(x, 3, 1).dims(), [0, 3]);
    let x = Tensor::<2, Int>::zeros([3, 0], &device);
    assert_eq!(sieve_burn::topk_with_indices(x, 0, 1).1.dims(), [3, 0]);
}

#[test]
fn topk_gradient_lands_on_the_selected_positions() {
    let device = Device::default().autodiff();
    let (mut rng, seed) = rng("topk_gradient_lands_on_the_selected_positions");
    let shape = [3usize, 200];
    let n = shape[0] * shape[1];
    let k = 17;
    let xs: Vec<f32> = (0..n).map(|_| rng.random_range(-4i32..4) as f32).collect();
    for dim in 0..2 {
        let k = k.min(shape[dim]);
        let mut out_shape = shape;
        out_shape[dim] = k;
        let m = out_shape[0] * out_shape[1];
        let ws: Vec<f32> = (0..m).map(|_| rng.random_range(-3..4) as f32).collect();
        let x = Tensor::<2>::from_data(TensorData::new(xs.clone(), shape), &device).require_grad();
        let w = Tensor::<2>::from_data(TensorData::new(ws.clone(), out_shape), &device);
        let grads = (sieve_burn::topk(x.clone(), k, dim) * w).sum().backward();
        let got: Vec<f32> = x.grad(&grads).unwrap().into_data().iter::<f32>().collect();
        let (_, source) = first_k_along(&xs, &shape, dim, k, true);
        let mut want = vec![0.0f32; n];
        for (slot, &s) in source.iter().enumerate() {
            want[s] = ws[slot];
        }
        assert_same(&got, &want, &format!("seed {seed}: dim {dim}"));
    }
}

#[test]
#[should_panic(expected = "invalid argument `k` = 6: expected 0..=5")]
fn k_past_the_row_is_named() {
    let device = Device::default();
    let _ = sieve_burn::topk(Tensor::<2>::ones([2, 5], &device), 6, 1);
}

#[test]
fn flex_falls_back_to_the_stable_sort() {
    let device = Device::flex();
    let x = Tensor::<1>::from_data([1.0, f32::NAN, -0.0, 0.0, -1.0, 1.0], &device);
    let (values, indices) = sieve_burn::topk_with_indices(x.clone(), 3, 0);
    assert_eq!(i64s(indices), vec![1, 0, 5]);
    let v: Vec<f32> = values.into_data().iter::<f32>().collect();
    assert!(v[0].is_nan());
    assert_eq!(v[1..], [1.0, 1.0]);
    assert_eq!(
        i64s(sieve_burn::bottomk_with_indices(x, 2, 0).1),
        vec![4, 2]
    );
}

/// The public op at its default tuning on every row length up to 300 (and the lengths of the
/// H200 hang report): every one-row-cube shape the default `Auto` picks (rank by counting's
/// units x keys-per-unit blueprints change at 33, 65, 129, 257 keys), with the minima bound's
/// `k` (1), the full rank's (53, and `len`), and rows that are not a multiple of anything.
/// Through CUDA, rows of 129..=256 keys never returned (issue 13): this is its regression
/// test, run on every runtime the GPU check covers.
#[test]
fn default_tuning_at_every_short_row_length() {
    let device = Device::default();
    let (mut rng, seed) = rng("default_tuning_at_every_short_row_length");
    let mut shapes: Vec<[usize; 2]> = (1..=300).map(|len| [3, len]).collect();
    shapes.extend([
        [1, 255],
        [220, 255],
        [220, 256],
        [1, 1000],
        [2, 1024],
        [2, 1025],
    ]);
    for shape in shapes {
        let n = shape[0] * shape[1];
        let data: Vec<f32> = (0..n).map(|_| special_f32(&mut rng)).collect();
        let x = Tensor::<2>::from_data(TensorData::new(data.clone(), shape), &device);
        let len = shape[1];
        let mut ks = vec![1, 10.min(len), 53.min(len), 64.min(len), len];
        ks.dedup();
        for k in ks {
            let case = format!("seed {seed}: {shape:?} k {k}");
            check_first_k(&x, &data, &shape, 1, k, true, &case);
        }
    }
}

/// The public op at default tunings on a few long rows, which the one-cube-per-row radix
/// select cuts into chunks on a device with more multiprocessors than rows (each chunk's top-k
/// sorted and merged, or past the row cube's limit in many chunks selected again): chunk
/// boundaries that fall inside runs of equal values, rows in ascending and descending order
/// (with ties), rows of few values or of one value with a few outliers (the minima bound's
/// tied rows), and `k` past a chunk's share of the row.
/// [40, 33 000]: cut in two only where the device
/// reports more than 40 multiprocessors, or none (wgpu: up to 128 cubes, `27-g`).
/// [1, 300 007]: past the one-cube-per-row limit, cut into 18 chunks for small `k` (selected
/// again over their candidates) and 6 at `k` = 20,000 (merged).
#[test]
fn default_tuning_on_few_long_rows() {
    let device = Device::default();
    let (mut rng, seed) = rng("default_tuning_on_few_long_rows");
    for (shape, order) in [
        ([1usize, 70_001], "specials"),
        ([2, 40_000], "specials"),
        ([2, 40_000], "sorted"),
        ([2, 40_000], "reversed"),
        ([2, 40_000], "tied"),
        ([2, 40_000], "outliers"),
        ([3, 33_333], "specials"),
        ([40, 33_000], "specials"),
        ([1, 300_007], "specials"),
        ([1, 300_007], "tied"),
    ] {
        let n = shape[0] * shape[1];
        // Specials, and runs of one value long enough to cross a chunk boundary; or rows in
        // ascending or descending order with runs of ties (the orders that mislead the bounds).
        let data: Vec<f32> = (0..n)
            .map(|i| match order {
                "sorted" => (i % shape[1] / 3) as f32 - 100.0,
                "reversed" => (shape[1] - i % shape[1]) as f32 * 0.25,
                // 16 values (quantized scores): the minima bound's tied rows.
                "tied" => rng.random_range(0..16) as f32 * 0.5,
                // One common value with a few keys on either side anywhere in the row (the
                // last position too): tied rows with ~40 keys that outrank the ties.
                "outliers" if rng.random_range(0..512) == 0 || i % shape[1] == shape[1] - 1 => {
                    rng.random_range(-2.0f32..2.0)
                }
                "outliers" => 1.0,
                _ if (i / 5000) % 3 == 1 => 1.5,
                _ => special_f32(&mut rng),
            })
            .collect();
        let x = Tensor::<2>::from_data(TensorData::new(data.clone(), shape), &device);
        for k in [1, 50, 1000, 20_000] {
            for largest in [true, false] {
                let case = format!("seed {seed}: {shape:?} {order} k {k} largest {largest}");
                check_first_k(&x, &data, &shape, 1, k, largest, &case);
            }
        }
    }
}

/// Rows past the one-cube-per-row limit (2^17 keys at default tunings) through the public ops
/// at default tunings: cut into chunks no longer than it where a row's candidates fit a row
/// of the row cube (`k` = 1, 1000 and 20,000: 8 or 6 chunks, merged, where the chunks have
/// a bound to try: `TopkTuning::row_long_unbounded`), the device-wide select for
/// larger `k` (70,000); specials with runs of one value, sorted and reversed rows
/// (the orders that mislead the bounds), Float and Int, both directions, `sorted: false` (the
/// same set), the transposed view along dim 0, and `kthvalue` / `median` over such rows.
#[test]
fn default_tuning_on_rows_past_the_row_cube() {
    let device = Device::default();
    let (mut rng, seed) = rng("default_tuning_on_rows_past_the_row_cube");
    let len = 140_001usize;
    let shape = [3usize, len];
    let data: Vec<f32> = (0..3 * len)
        .map(|i| match i / len {
            0 if (i / 7000) % 3 == 1 => 1.5,
            0 => special_f32(&mut rng),
            // Ascending, then descending: the sample's tiles hold the row's extremes.
            1 => (i % len) as f32 * 0.25 - 9000.0,
            _ => (len - i % len) as f32 * -0.5,
        })
        .collect();
    let flat: Vec<u32> = data.iter().map(|v| v.to_bits()).collect();
    let x = Tensor::<2>::from_data(TensorData::new(data.clone(), shape), &device);
    let ints: Vec<i32> = (0..len as i32).rev().map(|v| v / 3).collect();
    let xi = Tensor::<2, Int>::from_data(TensorData::new(ints.clone(), [1, len]), &device);
    for k in [1, 1000, 20_000, 70_000] {
        for largest in [true, false] {
            let case = format!("seed {seed}: {shape:?} k {k} largest {largest}");
            let (indices, want) = check_first_k(&x, &data, &shape, 1, k, largest, &case);

            // Unsorted: the same (index, value) pairs per row.
            let options = TopKOptions {
                largest,
                sorted: false,
                ..TopKOptions::default()
            };
            let (values, got) = sieve_burn::topk_with_options(x.clone(), k, 1, options);
            let (values, got) = (bits(values), i64s(got));
            for r in 0..shape[0] {
                let row = r * k..(r + 1) * k;
                let mut have: Vec<(i64, u32)> = got[row.clone()]
                    .iter()
                    .copied()
                    .zip(values[row.clone()].iter().copied())
                    .collect();
                let mut wanted: Vec<(i64, u32)> = indices[row.clone()]
                    .iter()
                    .copied()
                    .zip(want[row].iter().copied())
                    .collect();
                have.sort_unstable();
                wanted.sort_unstable();
                assert_same(&have, &wanted, &format!("{case}: unsorted, row {r}"));
            }

            // Int, reversed with runs of three.
            let (indices, source) = first_k_along(&ints, &[1, len], 1, k, largest);
            let want: Vec<i64> = source.iter().map(|&s| ints[s] as i64).collect();
            let (values, got) = if largest {
                sieve_burn::topk_with_indices(xi.clone(), k, 1)
            } else {
                sieve_burn::bottomk_with_indices(xi.clone(), k, 1)
            };
            assert_same(&i64s(values), &want, &format!("{case}: int values"));
            assert_same(&i64s(got), &indices, &format!("{case}: int indices"));
        }
    }
    // The transposed view, along dim 0.
    let t = x.clone().swap_dims(0, 1);
    let tdata: Vec<f32> = (0..len)
        .flat_map(|j| (0..3).map(move |r| (r, j)))
        .map(|(r, j)| data[r * len + j])
        .collect();
    let case = format!("seed {seed}: transposed, dim 0");
    check_first_k(&t, &tdata, &[len, 3], 0, 1000, true, &case);
    // Order statistics: the k-th smallest (1-based) along the row, ties to the lower index,
    // and the lower median.
    for (kth, name) in [(70_000usize, "kthvalue"), ((len - 1) / 2 + 1, "median")] {
        let (indices, source) = first_k_along(&data, &shape, 1, kth, false);
        let (values, got) = if name == "median" {
            sieve_burn::median(x.clone(), 1)
        } else {
            sieve_burn::kthvalue(x.clone(), kth, 1)
        };
        let (values, got) = (bits(values), i64s(got));
        for r in 0..shape[0] {
            let last = r * kth + kth - 1;
            let (mut value, mut index) = (flat[source[last]], indices[last]);
            // As torch's, a median of a lane holding a NaN is its first NaN.
            let first_nan = data[r * len..(r + 1) * len].iter().position(|v| v.is_nan());
            if let (Some(j), "median") = (first_nan, name) {
                (value, index) = (flat[r * len + j], j as i64);
            }
            let case = format!("seed {seed}: {name} row {r}");
            assert_eq!(values[r], value, "{case}: value");
            assert_eq!(got[r], index, "{case}: index");
        }
    }
}
