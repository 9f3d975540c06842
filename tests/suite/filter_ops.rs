//! sieve_burn's filter ops (mask_select, mask_select_padded, compact_rows, argwhere,
//! nonzero) through Burn's public API against CPU references: densities 0, 0.001, 0.5 and 1;
//! sizes across tile boundaries; ranks 1 to 3; views; Float and Int; empty tensors;
//! gradients; the Flex fallback; fused neighbours.

use crate::common;

use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use common::{assert_same, f32s, i64s, panic_message, rng};
use rand::{Rng, rngs::StdRng};

const DENSITIES: [f64; 4] = [0.0, 0.001, 0.5, 1.0];

fn random_mask(rng: &mut StdRng, n: usize, density: f64) -> Vec<bool> {
    (0..n).map(|_| rng.random_bool(density)).collect()
}

fn bools<const D: usize>(t: Tensor<D, Bool>) -> Vec<bool> {
    t.into_data().iter::<bool>().collect()
}

/// Row-major coordinates of the true elements of a `shape` mask.
fn coordinates(mask: &[bool], shape: &[usize]) -> Vec<i64> {
    let mut out = Vec::new();
    for (i, _) in mask.iter().enumerate().filter(|(_, m)| **m) {
        let mut rest = i;
        let mut coords = vec![0i64; shape.len()];
        for d in (0..shape.len()).rev() {
            coords[d] = (rest % shape[d]) as i64;
            rest /= shape[d];
        }
        out.extend(coords);
    }
    out
}

#[test]
fn mask_select_matches_the_cpu() {
    let device = Device::default();
    let (mut rng, seed) = rng("mask_select_matches_the_cpu");
    let shapes: [&[usize]; 5] = [&[1], &[4097], &[3, 33, 31], &[2, 65_537], &[7, 1, 13]];
    for shape in shapes {
        let n: usize = shape.iter().product();
        for density in DENSITIES {
            let values: Vec<f32> = (0..n).map(|_| rng.random_range(-9.0..9.0)).collect();
            let mask = random_mask(&mut rng, n, density);
            let want: Vec<f32> = (0..n).filter(|&i| mask[i]).map(|i| values[i]).collect();
            let case = format!("seed {seed}: shape {shape:?} density {density}");
            let got = match shape.len() {
                1 => {
                    let x = Tensor::<1>::from_data(TensorData::new(values.clone(), [n]), &device);
                    let m = Tensor::<1, Bool>::from_data(TensorData::new(mask, [n]), &device);
                    f32s(sieve_burn::mask_select(x, m))
                }
                2 => {
                    let s = [shape[0], shape[1]];
                    let x = Tensor::<2>::from_data(TensorData::new(values.clone(), s), &device);
                    let m = Tensor::<2, Bool>::from_data(TensorData::new(mask, s), &device);
                    f32s(sieve_burn::mask_select(x, m))
                }
                _ => {
                    let s = [shape[0], shape[1], shape[2]];
                    let x = Tensor::<3>::from_data(TensorData::new(values.clone(), s), &device);
                    let m = Tensor::<3, Bool>::from_data(TensorData::new(mask, s), &device);
                    f32s(sieve_burn::mask_select(x, m))
                }
            };
            assert_same(&got, &want, &case);
        }
    }
}

#[test]
fn int_mask_select_and_padded_form() {
    let device = Device::default();
    let (mut rng, seed) = rng("int_mask_select_and_padded_form");
    let shape = [5usize, 997];
    let n = shape[0] * shape[1];
    let values: Vec<i32> = (0..n).map(|_| rng.random_range(-1000..1000)).collect();
    for density in DENSITIES {
        let mask = random_mask(&mut rng, n, density);
        let want: Vec<i64> = (0..n)
            .filter(|&i| mask[i])
            .map(|i| values[i] as i64)
            .collect();
        let x = Tensor::<2, Int>::from_data(TensorData::new(values.clone(), shape), &device);
        let m = Tensor::<2, Bool>::from_data(TensorData::new(mask, shape), &device);
        let case = format!("seed {seed}: density {density}");
        assert_same(
            &i64s(sieve_burn::mask_select(x.clone(), m.clone())),
            &want,
            &case,
        );
        let (padded, count) = sieve_burn::mask_select_padded(x, m);
        let mut want_padded = want.clone();
        want_padded.resize(n, 0);
        assert_same(&i64s(padded), &want_padded, &format!("{case}: padded"));
        assert_eq!(i64s(count), vec![want.len() as i64], "{case}: count");
    }
}

#[test]
fn views_are_selected_in_logical_order() {
    let device = Device::default();
    let (mut rng, seed) = rng("views_are_selected_in_logical_order");
    let data: Vec<f32> = (0..6 * 40 * 9).map(|i| i as f32).collect();
    let base = Tensor::<3>::from_data(TensorData::new(data, [6, 40, 9]), &device);
    let views = [
        ("permuted", base.clone().permute([2, 0, 1])),
        ("narrowed", base.clone().narrow(1, 3, 31)),
        (
            "swapped+narrowed",
            base.clone().swap_dims(0, 2).narrow(0, 1, 7),
        ),
    ];
    for (name, view) in views {
        let dims = view.dims();
        let logical = f32s(view.clone());
        let mask = random_mask(&mut rng, logical.len(), 0.5);
        // The mask is a view too: a transposed tensor read back in logical order.
        let mask_t = Tensor::<3, Bool>::from_data(
            TensorData::new(mask.clone(), [dims[2], dims[1], dims[0]]),
            &device,
        )
        .permute([2, 1, 0]);
        let mask_logical = bools(mask_t.clone());
        let want: Vec<f32> = (0..logical.len())
            .filter(|&i| mask_logical[i])
            .map(|i| logical[i])
            .collect();
        let got = f32s(sieve_burn::mask_select(view, mask_t));
        assert_same(&got, &want, &format!("seed {seed}: {name}"));
    }
}

#[test]
fn compact_rows_matches_the_cpu() {
    let device = Device::default();
    let (mut rng, seed) = rng("compact_rows_matches_the_cpu");
    for (rows, len) in [(1, 1), (3, 31), (64, 33), (2, 4097), (5, 16_411)] {
        for density in DENSITIES {
            let n = rows * len;
            let values: Vec<f32> = (0..n).map(|_| rng.random_range(-9.0..9.0)).collect();
            let mask = random_mask(&mut rng, n, density);
            let mut want = vec![0.0f32; n];
            let mut want_counts = Vec::new();
            for r in 0..rows {
                let kept: Vec<f32> = (0..len)
                    .filter(|&i| mask[r * len + i])
                    .map(|i| values[r * len + i])
                    .collect();
                want[r * len..r * len + kept.len()].copy_from_slice(&kept);
                want_counts.push(kept.len() as i64);
            }
            let x = Tensor::<2>::from_data(TensorData::new(values, [rows, len]), &device);
            let m = Tensor::<2, Bool>::from_data(TensorData::new(mask, [rows, len]), &device);
            let (got, counts) = sieve_burn::compact_rows(x, m);
            let case = format!("seed {seed}: [{rows}, {len}] density {density}");
            assert_same(&f32s(got), &want, &case);
            assert_eq!(i64s(counts), want_counts, "{case}: counts");
        }
    }
}

#[test]
fn argwhere_and_nonzero_every_rank() {
    let device = Device::default();
    let (mut rng, seed) = rng("argwhere_and_nonzero_every_rank");
    for density in DENSITIES {
        let case = format!("seed {seed}: density {density}");
        // Rank 1.
        let mask = random_mask(&mut rng, 4099, density);
        let t = Tensor::<1, Bool>::from_data(TensorData::new(mask.clone(), [4099]), &device);
        let got = sieve_burn::argwhere(t.clone());
        let want = coordinates(&mask, &[4099]);
        assert_eq!(got.dims(), [want.len(), 1], "{case}");
        assert_same(&i64s(got), &want, &format!("{case}: rank 1"));
        // Rank 3, odd sizes.
        let shape = [3usize, 33, 31];
        let mask = random_mask(&mut rng, shape.iter().product(), density);
        let t = Tensor::<3, Bool>::from_data(TensorData::new(mask.clone(), shape), &device);
        let want = coordinates(&mask, &shape);
        let got = sieve_burn::argwhere(t.clone());
        assert_eq!(got.dims(), [want.len() / 3, 3], "{case}");
        assert_same(&i64s(got), &want, &format!("{case}: rank 3"));
        let per_dim = sieve_burn::nonzero(t);
        if want.is_empty() {
            assert!(
                per_dim.is_empty(),
                "{case}: nonzero of nothing is empty, as in Burn"
            );
        } else {
            assert_eq!(per_dim.len(), 3);
            for (d, tensor) in per_dim.into_iter().enumerate() {
                let want_d: Vec<i64> = want.iter().skip(d).step_by(3).copied().collect();
                assert_same(&i64s(tensor), &want_d, &format!("{case}: nonzero dim {d}"));
            }
        }
        // Rank 4, and a permuted view of it (coordinates in the view's own order).
        let shape = [2usize, 3, 5, 7];
        let mask = random_mask(&mut rng, shape.iter().product(), density);
        let t = Tensor::<4, Bool>::from_data(TensorData::new(mask.clone(), shape), &device);
        let got = sieve_burn::argwhere(t.clone());
        let want = coordinates(&mask, &shape);
        assert_eq!(got.dims(), [want.len() / 4, 4], "{case}");
        assert_same(&i64s(got), &want, &format!("{case}: rank 4"));
        let view = t.permute([3, 1, 0, 2]);
        let vshape = [7usize, 3, 2, 5];
        let logical: Vec<bool> = (0..mask.len())
            .map(|i| {
                let (a, b, c, d) = (i / 30, i / 10 % 3, i / 5 % 2, i % 5);
                // View index (a, b, c, d) is source (c, b, d, a).
                mask[((c * 3 + b) * 5 + d) * 7 + a]
            })
            .collect();
        let want = coordinates(&logical, &vshape);
        assert_same(
            &i64s(sieve_burn::argwhere(view)),
            &want,
            &format!("{case}: a permuted view"),
        );
    }
}

#[test]
fn agrees_with_stock_burn() {
    let device = Device::default();
    let (mut rng, seed) = rng("agrees_with_stock_burn");
    let shape = [17usize, 300];
    let n = shape[0] * shape[1];
    let values: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mask = random_mask(&mut rng, n, 0.3);
    let x = Tensor::<2>::from_data(TensorData::new(values, shape), &device);
    let m = Tensor::<2, Bool>::from_data(TensorData::new(mask, shape), &device);
    assert_same(
        &f32s(sieve_burn::mask_select(x.clone(), m.clone())),
        &f32s(x.mask_select(m.clone())),
        &format!("seed {seed}: mask_select"),
    );
    assert_same(
        &i64s(sieve_burn::argwhere(m.clone())),
        &i64s(m.argwhere()),
        &format!("seed {seed}: argwhere"),
    );
}

#[test]
fn empty_tensors_work() {
    let device = Device::default();
    let x = Tensor::<2>::zeros([0, 5], &device);
    let m = Tensor::<2, Bool>::empty([0, 5], &device);
    assert_eq!(sieve_burn::mask_select(x.clone(), m.clone()).dims(), [0]);
    let (padded, count) = sieve_burn::mask_select_padded(x.clone(), m.clone());
    assert_eq!(padded.dims(), [0]);
    assert_eq!(i64s(count), vec![0]);
    let (rows, counts) = sieve_burn::compact_rows(x, m.clone());
    assert_eq!(rows.dims(), [0, 5]);
    assert_eq!(counts.dims(), [0]);
    assert_eq!(sieve_burn::argwhere(m).dims(), [0, 2]);
    let none = Tensor::<2, Bool>::from_data([[false, false], [false, false]], &device);
    assert_eq!(sieve_burn::argwhere(none.clone()).dims(), [0, 2]);
    assert!(sieve_burn::nonzero(none).is_empty());
    let (rows, counts) = sieve_burn::compact_rows(
        Tensor::<2>::zeros([3, 0], &device),
        Tensor::<2, Bool>::empty([3, 0], &device),
    );
    assert_eq!(rows.dims(), [3, 0]);
    assert_eq!(i64s(counts), vec![0, 0, 0]);
}

/// An op's name and a call of it.
type NamedCall<'a> = (&'static str, Box<dyn Fn() + 'a>);

/// Every op that takes a mask names the op and both shapes when they differ, before anything
/// is queued.
#[test]
fn mismatched_mask_is_named() {
    let device = Device::default();
    let x = || Tensor::<2>::ones([2, 3], &device);
    let m = || Tensor::<2, Bool>::from_data([[true, false], [true, true]], &device);
    let calls: [NamedCall; 5] = [
        (
            "mask_select",
            Box::new(|| drop(sieve_burn::mask_select(x(), m()))),
        ),
        (
            "mask_select_padded",
            Box::new(|| drop(sieve_burn::mask_select_padded(x(), m()))),
        ),
        (
            "compact_rows",
            Box::new(|| drop(sieve_burn::compact_rows(x(), m()))),
        ),
        (
            "stable_partition",
            Box::new(|| drop(sieve_burn::stable_partition(x(), m(), 1))),
        ),
        (
            "mask_select_async",
            Box::new(|| {
                drop(burn::tensor::try_read_sync(sieve_burn::mask_select_async(
                    x(),
                    m(),
                )))
            }),
        ),
    ];
    for (op, call) in calls {
        let message = panic_message(call).unwrap_or_else(|| panic!("{op} took the wrong mask"));
        assert!(
            // The async twin names the op it serves.
            message.starts_with(&format!("{}: mask shape", op.trim_end_matches("_async")))
                && message.contains("[2, 2]")
                && message.contains("must equal the input shape")
                && message.contains("[2, 3]"),
            "{op}: {message}"
        );
    }
}

#[test]
fn gradient_lands_on_selected_positions() {
    let device = Device::default().autodiff();
    let (mut rng, seed) = rng("gradient_lands_on_selected_positions");
    let shape = [4usize, 1000];
    let n = shape[0] * shape[1];
    let xs: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mask = random_mask(&mut rng, n, 0.4);
    let count = mask.iter().filter(|&&m| m).count();
    let ws: Vec<f32> = (0..n).map(|_| rng.random_range(-3..4) as f32).collect();
    // d loss / d x[i] = w[slot(i)] when selected (slot = rank among selected), else 0.
    let mut want = vec![0.0f32; n];
    let mut slot = 0;
    for i in 0..n {
        if mask[i] {
            want[i] = ws[slot];
            slot += 1;
        }
    }
    let m = Tensor::<2, Bool>::from_data(TensorData::new(mask, shape), &device);
    // Exact-size form.
    let x = Tensor::<2>::from_data(TensorData::new(xs.clone(), shape), &device).require_grad();
    let w = Tensor::<1>::from_data(TensorData::new(ws[..count].to_vec(), [count]), &device);
    let loss = (sieve_burn::mask_select(x.clone(), m.clone()) * w).sum() + x.clone().sum() * 0.0;
    let grads = loss.backward();
    let got = f32s(x.grad(&grads).unwrap());
    assert_same(&got, &want, &format!("seed {seed}: mask_select gradient"));
    // Padded form: padding slots get weights too, which must reach nothing.
    let x = Tensor::<2>::from_data(TensorData::new(xs, shape), &device).require_grad();
    let w = Tensor::<1>::from_data(TensorData::new(ws, [n]), &device);
    let (padded, _) = sieve_burn::mask_select_padded(x.clone(), m);
    let grads = (padded * w).sum().backward();
    let got = f32s(x.grad(&grads).unwrap());
    assert_same(
        &got,
        &want,
        &format!("seed {seed}: mask_select_padded gradient"),
    );
    // Nothing selected: an empty result, whose gradient reaches nothing.
    let x = Tensor::<2>::from_data(TensorData::new(xs_zero(n), shape), &device).require_grad();
    let none = Tensor::<2, Bool>::from_data(TensorData::new(vec![false; n], shape), &device);
    let selected = sieve_burn::mask_select(x.clone(), none);
    assert_eq!(selected.dims(), [0]);
    let grads = (selected.sum() + x.clone().sum() * 0.0).backward();
    assert_same(
        &f32s(x.grad(&grads).unwrap()),
        &vec![0.0; n],
        "nothing selected: gradient",
    );
}

fn xs_zero(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

#[test]
fn fused_neighbours_feed_and_read_the_op() {
    let device = Device::default();
    let n = 70_001;
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = Tensor::<1>::from_data(TensorData::new(data, [n]), &device);
    // The mask and the values are lazy elementwise results; the output feeds another one.
    let mask = x.clone().remainder_scalar(3.0).equal_elem(0.0);
    let selected = sieve_burn::mask_select(x * 2.0, mask) + 1.0;
    let got = f32s(selected);
    let want: Vec<f32> = (0..n).step_by(3).map(|i| (2 * i + 1) as f32).collect();
    assert_same(&got, &want, "fused");
}

#[test]
fn flex_falls_back_to_stock_burn() {
    let device = Device::flex();
    let x = Tensor::<2>::from_data([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], &device);
    let m = x.clone().greater_elem(0.0);
    assert_eq!(
        f32s(sieve_burn::mask_select(x.clone(), m.clone())),
        vec![1.0, 3.0, 4.0, 5.0]
    );
    let (rows, counts) = sieve_burn::compact_rows(x.clone(), m.clone());
    assert_eq!(f32s(rows), vec![1.0, 3.0, 0.0, 4.0, 5.0, 0.0]);
    assert_eq!(i64s(counts), vec![2, 2]);
    assert_eq!(i64s(sieve_burn::argwhere(m)), vec![0, 0, 0, 2, 1, 0, 1, 1]);
    let xi = Tensor::<1, Int>::from_data([5, 6, 7], &device);
    let mi = Tensor::<1, Bool>::from_data([false, true, true], &device);
    let (padded, count) = sieve_burn::mask_select_padded(xi, mi);
    assert_eq!(i64s(padded), vec![6, 7, 0]);
    assert_eq!(i64s(count), vec![2]);
}

/// The gradient test in three threads at once, 30 times each: with Burn ops of other threads
/// beside it, the "nothing selected" gradient once came back as stale memory (a `float_cat` of
/// the empty output gradient, now not read; 5 runs of 8 failed on lavapipe before the change,
/// 0 of 14 after).
#[test]
fn gradient_of_nothing_selected_beside_other_threads() {
    let threads: Vec<_> = (0..3)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..30 {
                    gradient_lands_on_selected_positions();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a gradient thread failed");
    }
}
