//! sieve_burn's sort ops (sort, sort_descending, sort_with_indices,
//! sort_descending_with_indices, argsort, argsort_descending) through Burn's public API against
//! a stable CPU sort in PyTorch's order: every dim, views, Float (NaN, +-0.0, +-inf, heavy
//! duplicates) and Int, short rows (one cube) and long ones (LSD passes), empty tensors,
//! gradients, the Flex fallback.

use crate::common;

use burn::tensor::{Device, Int, Tensor, TensorData};
use common::{assert_same, bits, first_k_along, i64s, rng, special_f32};
use rand::Rng;
use sieve::sort::reference::SortKey;

/// Stable permutation of a row-major `shape` along `dim`, as indices along `dim`, and the
/// flat source of each output element: the first `len` of the sort.
fn reference<T: SortKey>(
    data: &[T],
    shape: &[usize],
    dim: usize,
    descending: bool,
) -> (Vec<i64>, Vec<usize>) {
    first_k_along(data, shape, dim, shape[dim], descending)
}

#[test]
fn float_sorts_every_dim_both_directions() {
    let device = Device::default();
    let (mut rng, seed) = rng("float_sorts_every_dim_both_directions");
    for shape in [[3usize, 33, 31], [2, 5000, 1], [1, 1, 1]] {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|_| special_f32(&mut rng)).collect();
        let flat: Vec<u32> = data.iter().map(|v| v.to_bits()).collect();
        let x = Tensor::<3>::from_data(TensorData::new(data.clone(), shape), &device);
        for dim in 0..3 {
            for descending in [false, true] {
                let case = format!("seed {seed}: {shape:?} dim {dim} descending {descending}");
                let (indices, source) = reference(&data, &shape, dim, descending);
                let want: Vec<u32> = source.iter().map(|&s| flat[s]).collect();
                let (values, got_indices) = if descending {
                    sieve_burn::sort_descending_with_indices(x.clone(), dim)
                } else {
                    sieve_burn::sort_with_indices(x.clone(), dim)
                };
                assert_same(&bits(values), &want, &format!("{case}: values"));
                assert_same(&i64s(got_indices), &indices, &format!("{case}: indices"));
                let values = if descending {
                    sieve_burn::sort_descending(x.clone(), dim)
                } else {
                    sieve_burn::sort(x.clone(), dim)
                };
                assert_same(&bits(values), &want, &format!("{case}: sort"));
                let args = if descending {
                    sieve_burn::argsort_descending(x.clone(), dim)
                } else {
                    sieve_burn::argsort(x.clone(), dim)
                };
                assert_same(&i64s(args), &indices, &format!("{case}: argsort"));
            }
        }
    }
}

#[test]
fn int_sorts_and_views() {
    let device = Device::default();
    let (mut rng, seed) = rng("int_sorts_and_views");
    let data: Vec<i32> = (0..6 * 40 * 9).map(|_| rng.random_range(-20..20)).collect();
    let base = Tensor::<3, Int>::from_data(TensorData::new(data, [6, 40, 9]), &device);
    let view = base.swap_dims(0, 2).narrow(1, 3, 31);
    let dims = view.dims();
    let logical = i64s(view.clone());
    for dim in 0..3 {
        for descending in [false, true] {
            let (indices, source) = reference(&logical, &dims, dim, descending);
            let want: Vec<i64> = source.iter().map(|&s| logical[s]).collect();
            let (values, got) = if descending {
                sieve_burn::sort_descending_with_indices(view.clone(), dim)
            } else {
                sieve_burn::sort_with_indices(view.clone(), dim)
            };
            let case = format!("seed {seed}: view dim {dim} descending {descending}");
            assert_same(&i64s(values), &want, &format!("{case}: values"));
            assert_same(&i64s(got), &indices, &format!("{case}: indices"));
        }
    }
}

#[test]
fn long_rows_take_the_lsd_passes() {
    let device = Device::default();
    let (mut rng, seed) = rng("long_rows_take_the_lsd_passes");
    let n = 100_003;
    let data: Vec<f32> = (0..n).map(|_| special_f32(&mut rng)).collect();
    let flat: Vec<u32> = data.iter().map(|v| v.to_bits()).collect();
    let x = Tensor::<1>::from_data(TensorData::new(data.clone(), [n]), &device);
    for descending in [false, true] {
        let (indices, source) = reference(&data, &[n], 0, descending);
        let want: Vec<u32> = source.iter().map(|&s| flat[s]).collect();
        let (values, got) = if descending {
            sieve_burn::sort_descending_with_indices(x.clone(), 0)
        } else {
            sieve_burn::sort_with_indices(x.clone(), 0)
        };
        let case = format!("seed {seed}: descending {descending}");
        assert_same(&bits(values), &want, &format!("{case}: values"));
        assert_same(&i64s(got), &indices, &format!("{case}: indices"));
    }
}

#[test]
fn empty_tensors_work() {
    let device = Device::default();
    let x = Tensor::<2>::zeros([0, 5], &device);
    assert_eq!(sieve_burn::sort(x.clone(), 1).dims(), [0, 5]);
    assert_eq!(sieve_burn::argsort(x, 0).dims(), [0, 5]);
    let x = Tensor::<2, Int>::zeros([3, 0], &device);
    assert_eq!(sieve_burn::sort_with_indices(x, 1).1.dims(), [3, 0]);
}

#[test]
fn sort_gradient_follows_the_permutation() {
    let device = Device::default().autodiff();
    let (mut rng, seed) = rng("sort_gradient_follows_the_permutation");
    let shape = [3usize, 500];
    let n = shape[0] * shape[1];
    let xs: Vec<f32> = (0..n).map(|_| rng.random_range(-4i32..4) as f32).collect();
    let ws: Vec<f32> = (0..n).map(|_| rng.random_range(-3..4) as f32).collect();
    for dim in 0..2 {
        let x = Tensor::<2>::from_data(TensorData::new(xs.clone(), shape), &device).require_grad();
        let w = Tensor::<2>::from_data(TensorData::new(ws.clone(), shape), &device);
        let grads = (sieve_burn::sort_descending(x.clone(), dim) * w)
            .sum()
            .backward();
        let got: Vec<f32> = x.grad(&grads).unwrap().into_data().iter::<f32>().collect();
        let (_, source) = reference(&xs, &shape, dim, true);
        let mut want = vec![0.0f32; n];
        for (slot, &s) in source.iter().enumerate() {
            want[s] = ws[slot];
        }
        assert_same(&got, &want, &format!("seed {seed}: dim {dim}"));
    }
}

#[test]
#[should_panic(expected = "BoundsError: dimension 2 out of bounds: 0..2")]
fn bad_dim_is_named() {
    let device = Device::default();
    let _ = sieve_burn::sort(Tensor::<2>::ones([2, 2], &device), 2);
}

#[test]
fn flex_falls_back_stably() {
    let device = Device::flex();
    let x = Tensor::<1>::from_data([1.0, f32::NAN, -0.0, 0.0, -1.0, 1.0], &device);
    let (values, indices) = sieve_burn::sort_with_indices(x.clone(), 0);
    assert_eq!(i64s(indices), vec![4, 2, 3, 0, 5, 1]);
    let v: Vec<f32> = values.into_data().iter::<f32>().collect();
    assert_eq!(v[..5], [-1.0, -0.0, 0.0, 1.0, 1.0]);
    assert!(v[5].is_nan());
    assert_eq!(
        i64s(sieve_burn::argsort_descending(x, 0)),
        vec![1, 0, 5, 2, 3, 4]
    );
}

/// Sorts of 2^20 elements or more are dispatched as they are called (`Device::flush`), with
/// Fusion's queue around them: the op that makes the input is queued before the sort, and
/// the one that reads its outputs after. Both directions, Float and Int, every output form.
#[test]
fn large_sorts_dispatched_at_once_keep_their_neighbours() {
    let device = Device::default();
    let (mut rng, seed) = rng("large_sorts_dispatched_at_once_keep_their_neighbours");
    let shape = [2usize, (1 << 19) + 3];
    let n = shape[0] * shape[1];
    let base: Vec<f32> = (0..n).map(|_| special_f32(&mut rng)).collect();
    // The input as the queued op makes it (x + 0.0 keeps every bit but -0.0, which it makes
    // +0.0, and NaN payloads, which the comparisons below do not look at).
    let data: Vec<f32> = base.iter().map(|&v| v + 0.0).collect();
    let flat: Vec<u32> = data.iter().map(|v| v.to_bits()).collect();
    let ints: Vec<i32> = (0..n).map(|_| rng.random_range(-50..50)).collect();
    for descending in [false, true] {
        let case = format!("seed {seed}: {shape:?} descending {descending}");
        let (indices, source) = reference(&data, &shape, 1, descending);
        let x = Tensor::<2>::from_data(TensorData::new(base.clone(), shape), &device) + 0.0;
        let (values, got) = if descending {
            sieve_burn::sort_descending_with_indices(x.clone(), 1)
        } else {
            sieve_burn::sort_with_indices(x.clone(), 1)
        };
        // Read through an op queued after the sort (x * 1.0 keeps every bit but NaN payloads).
        let got_bits = bits(values * 1.0);
        let want: Vec<u32> = source.iter().map(|&s| flat[s]).collect();
        let nan = |b: &u32| (*b & 0x7FFF_FFFF) > 0x7F80_0000;
        assert_eq!(got_bits.len(), want.len(), "{case}: values");
        for (i, (g, w)) in got_bits.iter().zip(&want).enumerate() {
            assert!(
                g == w || (nan(g) && nan(w)),
                "{case}: value {i}: {g:#x} for {w:#x}"
            );
        }
        assert_same(
            &i64s(got + 1),
            &indices.iter().map(|i| i + 1).collect::<Vec<_>>(),
            &case,
        );
        let args = if descending {
            sieve_burn::argsort_descending(x.clone(), 1)
        } else {
            sieve_burn::argsort(x, 1)
        };
        assert_same(&i64s(args), &indices, &format!("{case}: argsort"));

        let (_, int_source) = reference(&ints, &shape, 1, descending);
        let xi = Tensor::<2, Int>::from_data(TensorData::new(ints.clone(), shape), &device) + 0;
        let sorted = if descending {
            sieve_burn::sort_descending(xi, 1)
        } else {
            sieve_burn::sort(xi, 1)
        };
        let want: Vec<i64> = int_source.iter().map(|&s| ints[s] as i64 * 2).collect();
        assert_same(&i64s(sorted * 2), &want, &format!("{case}: int sort"));
    }
}
