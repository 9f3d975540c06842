//! sieve_burn's split ops (stable_partition, split_by_bit) through Burn's public API against
//! CPU references: densities 0, 0.001, 0.5, 1; every dim; views; Float and Int; negative keys
//! and the sign bit; empty tensors; gradients; the Flex fallback.

use crate::common;

use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use common::{assert_same, f32s, i64s, rng};
use rand::Rng;

fn bools<const D: usize>(t: Tensor<D, Bool>) -> Vec<bool> {
    t.into_data().iter::<bool>().collect()
}

/// CPU stable partition of a row-major `shape` along `dim`: values (as source positions in
/// the flat array), indices along `dim`, and counts (shape with `dim` = 1).
fn partition_reference(
    flags: &[bool],
    shape: &[usize],
    dim: usize,
) -> (Vec<usize>, Vec<i64>, Vec<i64>) {
    let len = shape[dim];
    let inner: usize = shape[dim + 1..].iter().product();
    let outer: usize = shape[..dim].iter().product();
    let n = flags.len();
    let mut source = vec![0; n];
    let mut indices = vec![0; n];
    let mut counts = vec![0; outer * inner];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * len + k) * inner + i;
            let order: Vec<usize> = (0..len)
                .filter(|&k| flags[at(k)])
                .chain((0..len).filter(|&k| !flags[at(k)]))
                .collect();
            for (slot, &k) in order.iter().enumerate() {
                source[at(slot)] = at(k);
                indices[at(slot)] = k as i64;
            }
            counts[o * inner + i] = (0..len).filter(|&k| flags[at(k)]).count() as i64;
        }
    }
    (source, indices, counts)
}

#[test]
fn stable_partition_every_dim_and_density() {
    let device = Device::default();
    let (mut rng, seed) = rng("stable_partition_every_dim_and_density");
    for shape in [[3usize, 33, 31], [2, 4097, 1], [1, 1, 1]] {
        let n: usize = shape.iter().product();
        for density in [0.0, 0.001, 0.5, 1.0] {
            let values: Vec<f32> = (0..n).map(|_| rng.random_range(-9.0..9.0)).collect();
            let flags: Vec<bool> = (0..n).map(|_| rng.random_bool(density)).collect();
            let x = Tensor::<3>::from_data(TensorData::new(values.clone(), shape), &device);
            let m = Tensor::<3, Bool>::from_data(TensorData::new(flags.clone(), shape), &device);
            for dim in 0..3 {
                let case = format!("seed {seed}: {shape:?} density {density} dim {dim}");
                let (v, i, c) = sieve_burn::stable_partition(x.clone(), m.clone(), dim);
                let (source, indices, counts) = partition_reference(&flags, &shape, dim);
                let want: Vec<f32> = source.iter().map(|&s| values[s]).collect();
                assert_same(&f32s(v), &want, &format!("{case}: values"));
                assert_same(&i64s(i), &indices, &format!("{case}: indices"));
                let mut count_shape = shape;
                count_shape[dim] = 1;
                assert_eq!(c.dims(), count_shape, "{case}: counts shape");
                assert_same(&i64s(c), &counts, &format!("{case}: counts"));
            }
        }
    }
}

#[test]
fn int_partition_of_views() {
    let device = Device::default();
    let (mut rng, seed) = rng("int_partition_of_views");
    let data: Vec<i32> = (0..6 * 40 * 9).collect();
    let base = Tensor::<3, Int>::from_data(TensorData::new(data, [6, 40, 9]), &device);
    let view = base.swap_dims(0, 2).narrow(1, 3, 31);
    let dims = view.dims();
    let logical = i64s(view.clone());
    let n = logical.len();
    let flags: Vec<bool> = (0..n).map(|_| rng.random_bool(0.5)).collect();
    let m = Tensor::<3, Bool>::from_data(TensorData::new(flags.clone(), dims), &device);
    for dim in 0..3 {
        let (v, i, _) = sieve_burn::stable_partition(view.clone(), m.clone(), dim);
        let (source, indices, _) = partition_reference(&flags, &dims, dim);
        let want: Vec<i64> = source.iter().map(|&s| logical[s]).collect();
        let case = format!("seed {seed}: view dim {dim}");
        assert_same(&i64s(v), &want, &format!("{case}: values"));
        assert_same(&i64s(i), &indices, &format!("{case}: indices"));
    }
}

#[test]
fn split_by_bit_matches_the_cpu() {
    let device = Device::default();
    let (mut rng, seed) = rng("split_by_bit_matches_the_cpu");
    let shape = [5usize, 1031];
    let n = shape[0] * shape[1];
    let keys: Vec<i32> = (0..n).map(|_| rng.random()).collect();
    let x = Tensor::<2, Int>::from_data(TensorData::new(keys.clone(), shape), &device);
    let width = 8 * x.dtype().size() as u32;
    let wide: Vec<i64> = i64s(x.clone());
    for bit in [0, 1, 13, width - 1] {
        let flags: Vec<bool> = wide.iter().map(|&k| (k >> bit) & 1 == 0).collect();
        for dim in 0..2 {
            let (v, i, c) = sieve_burn::split_by_bit(x.clone(), bit, dim);
            let (source, indices, counts) = partition_reference(&flags, &shape, dim);
            let want: Vec<i64> = source.iter().map(|&s| wide[s]).collect();
            let case = format!("seed {seed}: bit {bit} dim {dim}");
            assert_same(&i64s(v), &want, &format!("{case}: values"));
            assert_same(&i64s(i), &indices, &format!("{case}: indices"));
            assert_same(&i64s(c), &counts, &format!("{case}: counts"));
        }
    }
}

#[test]
#[should_panic(expected = "bit = 64 is out of range")]
fn bad_bit_is_named() {
    let device = Device::default();
    let _ = sieve_burn::split_by_bit(Tensor::<1, Int>::from_data([1, 2, 3], &device), 64, 0);
}

#[test]
fn empty_tensors_work() {
    let device = Device::default();
    let x = Tensor::<2>::zeros([0, 5], &device);
    let m = Tensor::<2, Bool>::empty([0, 5], &device);
    let (v, i, c) = sieve_burn::stable_partition(x, m, 1);
    assert_eq!((v.dims(), i.dims(), c.dims()), ([0, 5], [0, 5], [0, 1]));
    let x = Tensor::<2, Int>::zeros([3, 0], &device);
    let (v, _, c) = sieve_burn::split_by_bit(x, 0, 1);
    assert_eq!(v.dims(), [3, 0]);
    assert_eq!(i64s(c), vec![0, 0, 0]);
}

#[test]
fn partition_gradient_follows_the_permutation() {
    let device = Device::default().autodiff();
    let (mut rng, seed) = rng("partition_gradient_follows_the_permutation");
    let shape = [3usize, 500];
    let n = shape[0] * shape[1];
    let xs: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let ws: Vec<f32> = (0..n).map(|_| rng.random_range(-3..4) as f32).collect();
    let flags: Vec<bool> = (0..n).map(|_| rng.random_bool(0.5)).collect();
    for dim in 0..2 {
        let x = Tensor::<2>::from_data(TensorData::new(xs.clone(), shape), &device).require_grad();
        let m = Tensor::<2, Bool>::from_data(TensorData::new(flags.clone(), shape), &device);
        let w = Tensor::<2>::from_data(TensorData::new(ws.clone(), shape), &device);
        let (v, _, _) = sieve_burn::stable_partition(x.clone(), m, dim);
        let grads = (v * w).sum().backward();
        let got = f32s(x.grad(&grads).unwrap());
        // out[slot] = x[source[slot]]: d loss / d x[source[slot]] = w[slot].
        let (source, _, _) = partition_reference(&flags, &shape, dim);
        let mut want = vec![0.0f32; n];
        for (slot, &s) in source.iter().enumerate() {
            want[s] = ws[slot];
        }
        assert_same(&got, &want, &format!("seed {seed}: dim {dim}"));
    }
}

#[test]
fn flex_falls_back_to_stock_burn() {
    let device = Device::flex();
    let x = Tensor::<2>::from_data([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], &device);
    let m = x.clone().greater_elem(0.0);
    let (v, i, c) = sieve_burn::stable_partition(x, m.clone(), 1);
    assert_eq!(f32s(v), vec![1.0, 3.0, -2.0, 5.0, -4.0, -6.0]);
    assert_eq!(i64s(i), vec![0, 2, 1, 1, 0, 2]);
    assert_eq!(i64s(c), vec![2, 1]);
    assert_eq!(bools(m).len(), 6);
    let keys = Tensor::<1, Int>::from_data([5, 2, 7, 4, -1, 8], &device);
    let (v, i, c) = sieve_burn::split_by_bit(keys, 0, 0);
    assert_eq!(i64s(v), vec![2, 4, 8, 5, 7, -1]);
    assert_eq!(i64s(i), vec![1, 3, 5, 0, 2, 4]);
    assert_eq!(i64s(c), vec![3]);
}
