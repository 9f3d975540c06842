//! `sieve_burn` ops through Burn's public API (Dispatch -> Fusion -> CubeBackend, Autodiff,
//! Flex fallback) against CPU references: every dim, views, Int and Float, empty tensors,
//! gradients.

use crate::common;

use burn::tensor::{Device, Int, Tensor, TensorData};
use common::rng;
use rand::Rng;

/// CPU cumsum of a row-major `shape` along `dim`, in f64.
fn reference(data: &[f64], shape: &[usize], dim: usize) -> (Vec<f64>, Vec<f64>) {
    let len = shape[dim];
    let inner: usize = shape[dim + 1..].iter().product();
    let outer: usize = shape[..dim].iter().product();
    let mut out = vec![0.0; data.len()];
    let mut scale = vec![0.0; data.len()];
    for o in 0..outer {
        for i in 0..inner {
            let (mut acc, mut mag) = (0.0, 0.0);
            for k in 0..len {
                let at = (o * len + k) * inner + i;
                acc += data[at];
                mag += data[at].abs();
                out[at] = acc;
                scale[at] = mag;
            }
        }
    }
    (out, scale)
}

fn float_data(t: Tensor<3>) -> Vec<f64> {
    t.into_data().iter::<f32>().map(|x| x as f64).collect()
}

#[test]
fn float_cumsum_every_dim_matches_the_cpu() {
    let device = Device::default();
    let (mut rng, _) = rng("float_cumsum_every_dim_matches_the_cpu");
    for shape in [[3usize, 5, 7], [2, 33, 4097], [1, 1, 1], [70_000, 2, 1]] {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let wide: Vec<f64> = data.iter().map(|&x| x as f64).collect();
        let x = Tensor::<3>::from_data(TensorData::new(data, shape), &device);
        for dim in 0..3 {
            let got = float_data(sieve_burn::cumsum(x.clone(), dim));
            let (want, scale) = reference(&wide, &shape, dim);
            common::assert_close(
                &got,
                &want,
                &scale,
                1e-5,
                1e-6,
                &format!("shape {shape:?} dim {dim}"),
            );
        }
    }
}

#[test]
fn int_cumsum_every_dim_is_exact() {
    let device = Device::default();
    let (mut rng, _) = rng("int_cumsum_every_dim_is_exact");
    let shape = [4usize, 65_537, 3];
    let n: usize = shape.iter().product();
    let data: Vec<i32> = (0..n).map(|_| rng.random_range(-50..50)).collect();
    let x = Tensor::<3, Int>::from_data(TensorData::new(data.clone(), shape), &device);
    for dim in 0..3 {
        let got: Vec<i64> = sieve_burn::cumsum(x.clone(), dim)
            .into_data()
            .iter::<i64>()
            .collect();
        let (want, _) = reference(
            &data.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            &shape,
            dim,
        );
        let want: Vec<i64> = want.into_iter().map(|v| v as i64).collect();
        common::assert_same(&got, &want, &format!("int dim {dim}"));
    }
}

#[test]
fn views_are_read_in_logical_order() {
    let device = Device::default();
    let (mut rng, _) = rng("views_are_read_in_logical_order");
    let data: Vec<f32> = (0..6 * 40 * 9)
        .map(|_| rng.random_range(-4..4) as f32)
        .collect();
    let base = Tensor::<3>::from_data(TensorData::new(data, [6, 40, 9]), &device);
    // A permuted view, a narrowed view (offset into the buffer) and a transposed narrow.
    let views = [
        ("permuted", base.clone().permute([2, 0, 1])),
        ("narrowed", base.clone().narrow(1, 3, 31)),
        (
            "swapped+narrowed",
            base.clone().swap_dims(0, 2).narrow(0, 1, 7),
        ),
    ];
    for (name, view) in views {
        let shape: Vec<usize> = view.dims().to_vec();
        // The logical values, read back in row-major order.
        let logical: Vec<f64> = float_data(view.clone());
        for dim in 0..3 {
            let got = float_data(sieve_burn::cumsum(view.clone(), dim));
            let (want, _) = reference(&logical, &shape, dim);
            // Small integers: exact in any order.
            assert_eq!(got, want, "{name} dim {dim}");
        }
    }
}

#[test]
fn ones_past_65535_and_fused_neighbours() {
    let device = Device::default();
    let n = 1 << 16;
    let ones = Tensor::<1>::ones([n], &device);
    // Fused neighbours on both sides: the op must see its input and feed its output in order.
    let y = sieve_burn::cumsum(ones * 2.0 - 1.0, 0) + 1.0;
    let got: Vec<f32> = y.into_data().iter::<f32>().collect();
    assert_eq!(got[n - 1], n as f32 + 1.0);
    assert!(got.iter().enumerate().all(|(i, &v)| v == i as f32 + 2.0));
}

#[test]
fn empty_tensors_work() {
    let device = Device::default();
    for dim in 0..2 {
        let x = Tensor::<2>::zeros([0, 5], &device);
        assert_eq!(sieve_burn::cumsum(x, dim).dims(), [0, 5]);
        let x = Tensor::<2, Int>::zeros([3, 0], &device);
        assert_eq!(sieve_burn::cumsum(x, dim).dims(), [3, 0]);
    }
}

#[test]
#[should_panic(expected = "BoundsError: dimension 2 out of bounds: 0..2")]
fn bad_dim_is_named() {
    let device = Device::default();
    let _ = sieve_burn::cumsum(Tensor::<2>::ones([2, 2], &device), 2);
}

#[test]
fn gradient_is_the_reversed_cumsum() {
    let device = Device::default().autodiff();
    let (mut rng, _) = rng("gradient_is_the_reversed_cumsum");
    let shape = [3usize, 1000, 2];
    let n: usize = shape.iter().product();
    let xs: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let ws: Vec<f32> = (0..n).map(|_| rng.random_range(-3..3) as f32).collect();
    for dim in 0..3 {
        let x = Tensor::<3>::from_data(TensorData::new(xs.clone(), shape), &device).require_grad();
        let w = Tensor::<3>::from_data(TensorData::new(ws.clone(), shape), &device);
        let loss = (sieve_burn::cumsum(x.clone(), dim) * w).sum();
        let grads = loss.backward();
        let got: Vec<f64> = x
            .grad(&grads)
            .unwrap()
            .into_data()
            .iter::<f32>()
            .map(|v| v as f64)
            .collect();
        // d loss / d x[j] = sum of w[i] over i >= j along dim: a reversed cumsum of w.
        let len = shape[dim];
        let inner: usize = shape[dim + 1..].iter().product();
        let mut want = vec![0.0f64; n];
        for o in 0..n / (len * inner) {
            for i in 0..inner {
                let mut acc = 0.0;
                for k in (0..len).rev() {
                    let at = (o * len + k) * inner + i;
                    acc += ws[at] as f64;
                    want[at] = acc;
                }
            }
        }
        assert_eq!(got, want, "gradient along dim {dim}");
    }
}

#[test]
fn flex_falls_back_to_stock_burn() {
    let device = Device::flex();
    let x = Tensor::<2>::from_data([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], &device);
    let y: Vec<f32> = sieve_burn::cumsum(x, 1).into_data().iter::<f32>().collect();
    assert_eq!(y, vec![1.0, 3.0, 6.0, 4.0, 9.0, 15.0]);
    let x = Tensor::<1, Int>::from_data([3, -1, 4, 1, -5], &device);
    let y: Vec<i64> = sieve_burn::cumsum(x, 0).into_data().iter::<i64>().collect();
    assert_eq!(y, vec![3, 2, 6, 7, 2]);
}
