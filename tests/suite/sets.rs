//! Set operations and order statistics (`sieve_burn::{unique, unique_with, unique_consecutive,
//! searchsorted, bucketize, kthvalue, median}`, issue 17) against CPU references in sieve's
//! order (`SortKey::order`: NaNs equal and last, -0.0 == +0.0), f32 and i32 (unique and the
//! order statistics also f64, f16, i64 and u32; views, rank 3 along every dim), on the test
//! device at default tunings and on Flex: random data with many ties, NaNs, both zeros,
//! infinities, sorted and reversed inputs, lengths across the compaction and sort tiles,
//! empty tensors; and the gradient of `kthvalue`/`median` (it goes to the chosen element).

use crate::common::{i64s, panic_message, rng, serial};

use burn::tensor::{DType, Device, Int, Tensor, TensorData};
use rand::Rng;
use sieve::sort::reference::{SortKey, sort_rows};
use sieve_burn::SieveKind;
use std::cmp::Ordering;

fn same<T: SortKey>(a: &T, b: &T) -> bool {
    T::order(a, b) == Ordering::Equal
}

/// (values, inverse, counts) of `torch.unique(sorted=True)` in sieve's order; each value is
/// its group's first element in input order.
pub(crate) fn unique_reference<T: SortKey + Copy>(x: &[T]) -> (Vec<T>, Vec<i64>, Vec<i64>) {
    let order = sort_rows(x, 1, x.len(), false);
    let (mut values, mut counts) = (Vec::new(), Vec::new());
    let mut inverse = vec![0i64; x.len()];
    for (slot, &i) in order.iter().enumerate() {
        if slot == 0 || !same(&x[order[slot - 1]], &x[i]) {
            values.push(x[i]);
            counts.push(0);
        }
        *counts.last_mut().unwrap() += 1;
        inverse[i] = values.len() as i64 - 1;
    }
    (values, inverse, counts)
}

pub(crate) fn consecutive_reference<T: SortKey + Copy>(x: &[T]) -> (Vec<T>, Vec<i64>, Vec<i64>) {
    let (mut values, mut counts, mut inverse) = (Vec::new(), Vec::new(), Vec::new());
    for (i, v) in x.iter().enumerate() {
        if i == 0 || !same(&x[i - 1], v) {
            values.push(*v);
            counts.push(0);
        }
        *counts.last_mut().unwrap() += 1;
        inverse.push(values.len() as i64 - 1);
    }
    (values, inverse, counts)
}

/// Elements of `sorted` less than `v` (or not greater, `right`) in sieve's order.
pub(crate) fn search_reference<T: SortKey>(sorted: &[T], v: &T, right: bool) -> i64 {
    // (The sequence is sorted in that order: the count is where the predicate turns.)
    sorted.partition_point(|s| match T::order(s, v) {
        Ordering::Less => true,
        Ordering::Equal => right,
        Ordering::Greater => false,
    }) as i64
}

trait Elem: SortKey + Copy + std::fmt::Debug + burn::tensor::Element + bytemuck::Pod {
    type Kind: SieveKind;
    const DTYPE: DType;
    fn draw(rng: &mut rand::rngs::StdRng) -> Self;
    fn bits(self) -> u64;
    fn is_nan(self) -> bool;
}

impl Elem for f32 {
    type Kind = burn::tensor::Float;
    const DTYPE: DType = DType::F32;
    fn draw(rng: &mut rand::rngs::StdRng) -> f32 {
        match rng.random_range(0..20) {
            0 => f32::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => f32::INFINITY,
            4 => f32::NEG_INFINITY,
            5 => f32::from_bits(0x7fc0_1234), // another NaN payload
            _ => rng.random_range(-6..6) as f32 * 0.5,
        }
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}

impl Elem for i32 {
    type Kind = Int;
    const DTYPE: DType = DType::I32;
    fn draw(rng: &mut rand::rngs::StdRng) -> i32 {
        match rng.random_range(0..10) {
            0 => i32::MIN,
            1 => i32::MAX,
            _ => rng.random_range(-20..20),
        }
    }
    fn bits(self) -> u64 {
        self as u32 as u64
    }
    fn is_nan(self) -> bool {
        false
    }
}

impl Elem for f64 {
    type Kind = burn::tensor::Float;
    const DTYPE: DType = DType::F64;
    fn draw(rng: &mut rand::rngs::StdRng) -> f64 {
        match rng.random_range(0..20) {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => f64::INFINITY,
            4 => f64::NEG_INFINITY,
            5 => f64::from_bits(0x7ff8_0000_1234_0000), // another NaN payload
            // Equal in their top 32 bits: the key's low word decides.
            6 => 1.0 + f64::EPSILON * rng.random_range(1..4) as f64,
            _ => rng.random_range(-6..6) as f64 * 0.5,
        }
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

impl Elem for half::f16 {
    type Kind = burn::tensor::Float;
    const DTYPE: DType = DType::F16;
    fn draw(rng: &mut rand::rngs::StdRng) -> half::f16 {
        match rng.random_range(0..20) {
            0 => half::f16::NAN,
            1 => half::f16::NEG_ZERO,
            2 => half::f16::ZERO,
            3 => half::f16::INFINITY,
            4 => half::f16::NEG_INFINITY,
            5 => half::f16::from_bits(0x7e12), // another NaN payload
            _ => half::f16::from_f32(rng.random_range(-6..6) as f32 * 0.5),
        }
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    fn is_nan(self) -> bool {
        half::f16::is_nan(self)
    }
}

impl Elem for i64 {
    type Kind = Int;
    const DTYPE: DType = DType::I64;
    fn draw(rng: &mut rand::rngs::StdRng) -> i64 {
        match rng.random_range(0..10) {
            0 => i64::MIN,
            1 => i64::MAX,
            // Equal in their low 32 bits: the key's high word decides.
            2 => (rng.random_range(-2i64..2) << 32) | 7,
            _ => rng.random_range(-20..20),
        }
    }
    fn bits(self) -> u64 {
        self as u64
    }
    fn is_nan(self) -> bool {
        false
    }
}

impl Elem for u32 {
    type Kind = Int;
    const DTYPE: DType = DType::U32;
    fn draw(rng: &mut rand::rngs::StdRng) -> u32 {
        match rng.random_range(0..10) {
            0 => 0,
            1 => u32::MAX,
            2 => 1 << 31,
            _ => rng.random_range(0..40),
        }
    }
    fn bits(self) -> u64 {
        self as u64
    }
    fn is_nan(self) -> bool {
        false
    }
}

fn tensor<T: Elem>(v: &[T], device: &Device) -> Tensor<1, T::Kind> {
    Tensor::from_data(TensorData::new(v.to_vec(), [v.len()]), (device, T::DTYPE))
}

fn read<T: Elem>(t: Tensor<1, T::Kind>) -> Vec<T> {
    t.into_data()
        .convert::<T>()
        .try_into_vec::<T>()
        .expect("values")
}

fn assert_same_bits<T: Elem>(got: &[T], want: &[T], case: &str) {
    let g: Vec<u64> = got.iter().map(|v| v.bits()).collect();
    let w: Vec<u64> = want.iter().map(|v| v.bits()).collect();
    assert_eq!(g, w, "{case}: got {got:?}, expected {want:?}");
}

fn inputs<T: Elem>(rng: &mut rand::rngs::StdRng) -> Vec<(String, Vec<T>)> {
    let mut out = Vec::new();
    for len in [0usize, 1, 2, 7, 129, 1000, 4097] {
        let random: Vec<T> = (0..len).map(|_| T::draw(rng)).collect();
        let mut sorted = random.clone();
        sorted.sort_by(T::order);
        let mut reversed = sorted.clone();
        reversed.reverse();
        let all_equal = vec![random.first().copied().unwrap_or_else(|| T::draw(rng)); len];
        out.push((format!("random [{len}]"), random));
        out.push((format!("sorted [{len}]"), sorted));
        out.push((format!("reversed [{len}]"), reversed));
        out.push((format!("all equal [{len}]"), all_equal));
    }
    out
}

fn check_unique<T: Elem>(device: &Device, test: &str) {
    let (mut rng, _) = rng(test);
    for (case, x) in inputs::<T>(&mut rng) {
        let case = format!("{test} {device:?} {}: {case}", std::any::type_name::<T>());
        let want = unique_reference(&x);
        let got = sieve_burn::unique_with(tensor(&x, device), true, true);
        assert_same_bits(
            &read::<T>(got.values),
            &want.0,
            &format!("{case}: unique values"),
        );
        assert_eq!(i64s(got.inverse.unwrap()), want.1, "{case}: unique inverse");
        assert_eq!(i64s(got.counts.unwrap()), want.2, "{case}: unique counts");
        assert_same_bits(
            &read::<T>(sieve_burn::unique(tensor(&x, device))),
            &want.0,
            &format!("{case}: unique alone"),
        );
        let counted = sieve_burn::unique_with(tensor(&x, device), false, true);
        assert!(counted.inverse.is_none());
        assert_same_bits(
            &read::<T>(counted.values),
            &want.0,
            &format!("{case}: counted values"),
        );
        assert_eq!(
            i64s(counted.counts.unwrap()),
            want.2,
            "{case}: counts without inverse"
        );
        let want = consecutive_reference(&x);
        let got = sieve_burn::unique_consecutive(tensor(&x, device), true, true);
        assert_same_bits(
            &read::<T>(got.values),
            &want.0,
            &format!("{case}: consecutive values"),
        );
        assert_eq!(
            i64s(got.inverse.unwrap()),
            want.1,
            "{case}: consecutive inverse"
        );
        assert_eq!(
            i64s(got.counts.unwrap()),
            want.2,
            "{case}: consecutive counts"
        );
        // Values alone take the compaction by run starts (no mask made).
        let alone = sieve_burn::unique_consecutive(tensor(&x, device), false, false);
        assert_same_bits(
            &read::<T>(alone.values),
            &want.0,
            &format!("{case}: consecutive values alone"),
        );
    }
    // The inverse keeps the input's shape.
    let x = Tensor::<2, T::Kind>::from_data(
        TensorData::new(
            (0..12).map(|_| T::draw(&mut rng)).collect::<Vec<T>>(),
            [3, 4],
        ),
        (device, T::DTYPE),
    );
    let flat: Vec<T> = read::<T>(x.clone().reshape([12]));
    // A permuted view: grouped in its own (logical) row-major order, the inverse in its shape.
    let view = x.clone().swap_dims(0, 1);
    let logical: Vec<T> = read::<T>(view.clone().reshape([12]));
    let want = unique_reference(&logical);
    let got = sieve_burn::unique_with(view.clone(), true, true);
    assert_same_bits(
        &read::<T>(got.values),
        &want.0,
        &format!("{test}: view values"),
    );
    let inverse = got.inverse.unwrap();
    assert_eq!(inverse.dims(), [4, 3], "{test}: view inverse shape");
    assert_eq!(i64s(inverse), want.1, "{test}: view inverse");
    assert_eq!(i64s(got.counts.unwrap()), want.2, "{test}: view counts");
    let want = consecutive_reference(&logical);
    let got = sieve_burn::unique_consecutive(view, true, false);
    assert_same_bits(
        &read::<T>(got.values),
        &want.0,
        &format!("{test}: view runs"),
    );
    assert_eq!(
        i64s(got.inverse.unwrap()),
        want.1,
        "{test}: view runs inverse"
    );
    let got = sieve_burn::unique_with(x, true, false);
    assert!(got.counts.is_none());
    let inverse = got.inverse.unwrap();
    assert_eq!(inverse.dims(), [3, 4], "{test}: inverse shape");
    assert_eq!(
        i64s(inverse),
        unique_reference(&flat).1,
        "{test}: [3, 4] inverse"
    );
}

fn check_search<T: Elem>(device: &Device, test: &str) {
    let (mut rng, _) = rng(test);
    // Past 2048 keys a cube's splitters stand for blocks of 2, 3, ... keys (the last block
    // shorter); past 2048 queries a cube's span; 5000 spans three cubes, the last in part.
    // The last two: runs of a few distinct keys, equal across many blocks and splitters.
    let shapes = [0usize, 1, 5, 300, 2047, 2048, 2049, 9001, 70_000]
        .map(|m| (m, 0usize))
        .into_iter()
        .chain([(9001, 3), (70_000, 5)]);
    for (m, distinct) in shapes {
        let pool: Vec<T> = (0..distinct).map(|_| T::draw(&mut rng)).collect();
        let mut sorted: Vec<T> = (0..m)
            .map(|_| match distinct {
                0 => T::draw(&mut rng),
                d => pool[rng.random_range(0..d)],
            })
            .collect();
        sorted.sort_by(T::order);
        for n in [0usize, 1, 33, 1500, 5000] {
            let mut queries: Vec<T> = (0..n).map(|_| T::draw(&mut rng)).collect();
            // Queries equal to sequence elements (ties on both sides).
            for q in queries.iter_mut().step_by(3) {
                if m > 0 {
                    *q = sorted[rng.random_range(0..m)];
                }
            }
            for right in [false, true] {
                let case = format!(
                    "{test} {device:?} {}: [{m}] sequence ({distinct} distinct, 0: any), {n} \
                     queries, right={right}",
                    std::any::type_name::<T>()
                );
                let want: Vec<i64> = queries
                    .iter()
                    .map(|q| search_reference(&sorted, q, right))
                    .collect();
                let got = sieve_burn::searchsorted(
                    tensor(&sorted, device),
                    tensor(&queries, device),
                    right,
                );
                assert_eq!(i64s(got), want, "{case}: searchsorted");
                let got =
                    sieve_burn::bucketize(tensor(&queries, device), tensor(&sorted, device), right);
                assert_eq!(i64s(got), want, "{case}: bucketize");
            }
        }
    }
    // Queries of any shape keep it.
    let sorted: Vec<T> = {
        let mut s: Vec<T> = (0..10).map(|_| T::draw(&mut rng)).collect();
        s.sort_by(T::order);
        s
    };
    let q: Vec<T> = (0..6).map(|_| T::draw(&mut rng)).collect();
    let queries =
        Tensor::<2, T::Kind>::from_data(TensorData::new(q.clone(), [2, 3]), (device, T::DTYPE));
    let got = sieve_burn::searchsorted(tensor(&sorted, device), queries, false);
    assert_eq!(got.dims(), [2, 3]);
    let want: Vec<i64> = q
        .iter()
        .map(|v| search_reference(&sorted, v, false))
        .collect();
    assert_eq!(i64s(got), want, "{test}: [2, 3] queries");
    // Views: the sequence a slice of a longer sorted tensor (an offset into its buffer), the
    // queries a transposed tensor (read in its logical order).
    let long: Vec<T> = {
        let mut s: Vec<T> = (0..4000).map(|_| T::draw(&mut rng)).collect();
        s.sort_by(T::order);
        s
    };
    let slice = &long[1000..3001];
    let q: Vec<T> = (0..60).map(|_| T::draw(&mut rng)).collect();
    let queries =
        Tensor::<2, T::Kind>::from_data(TensorData::new(q.clone(), [6, 10]), (device, T::DTYPE));
    let got = sieve_burn::searchsorted(
        tensor(&long, device).narrow(0, 1000, 2001),
        queries.transpose(),
        true,
    );
    assert_eq!(got.dims(), [10, 6]);
    let want: Vec<i64> = (0..60)
        .map(|i| search_reference(slice, &q[(i % 6) * 10 + i / 6], true))
        .collect();
    assert_eq!(i64s(got), want, "{test}: views");
}

fn check_order_statistics<T: Elem>(device: &Device, test: &str) {
    let (mut rng, _) = rng(test);
    // Rows past rank by counting's (the in-cube sort, the one-cube-per-row select).
    for (rows, len) in [
        (1usize, 1usize),
        (3, 2),
        (4, 7),
        (2, 129),
        (5, 1000),
        (2, 5000),
        (1, 40_000),
    ] {
        let x: Vec<T> = (0..rows * len).map(|_| T::draw(&mut rng)).collect();
        let order = sort_rows(&x, rows, len, false);
        let t = || {
            Tensor::<2, T::Kind>::from_data(
                TensorData::new(x.clone(), [rows, len]),
                (device, T::DTYPE),
            )
        };
        let case = format!(
            "{test} {device:?} {}: [{rows}, {len}]",
            std::any::type_name::<T>()
        );
        for k in [1, len.min(50), len.min(300), len.div_ceil(2), len] {
            let (values, indices) = sieve_burn::kthvalue(t(), k, 1);
            assert_eq!(values.dims(), [rows, 1]);
            let want_i: Vec<i64> = (0..rows).map(|r| order[r * len + k - 1] as i64).collect();
            let want_v: Vec<T> = (0..rows).map(|r| x[r * len + want_i[r] as usize]).collect();
            assert_eq!(i64s(indices), want_i, "{case}: kthvalue k={k} indices");
            assert_same_bits(
                &read::<T>(values.reshape([rows])),
                &want_v,
                &format!("{case}: kthvalue k={k}"),
            );
        }
        // Median: rank (len - 1) / 2, or the lane's first NaN.
        let (values, indices) = sieve_burn::median(t(), -1);
        let want_i: Vec<i64> = (0..rows)
            .map(|r| {
                let lane = &x[r * len..(r + 1) * len];
                match lane.iter().position(|v| v.is_nan()) {
                    Some(nan) => nan as i64,
                    None => order[r * len + (len - 1) / 2] as i64,
                }
            })
            .collect();
        let want_v: Vec<T> = (0..rows).map(|r| x[r * len + want_i[r] as usize]).collect();
        assert_eq!(i64s(indices), want_i, "{case}: median indices");
        assert_same_bits(
            &read::<T>(values.reshape([rows])),
            &want_v,
            &format!("{case}: median"),
        );
        // Along dim 0 (a view): the same as the transposed rows.
        let (values, _) = sieve_burn::median(t().transpose(), 0);
        assert_eq!(values.dims(), [1, rows]);
        assert_same_bits(
            &read::<T>(values.reshape([rows])),
            &want_v,
            &format!("{case}: median dim 0"),
        );
        // Lanes of one element (along dim 0 of `[1, len]`), each its own median, NaN or not:
        // the sort's output there is a transposed view, which Burn 0.22's fused kernels
        // misread beside the expanded positions `median` once used.
        let row = x[..len].to_vec();
        let single = Tensor::<2, T::Kind>::from_data(
            TensorData::new(row.clone(), [1, len]),
            (device, T::DTYPE),
        );
        let (values, indices) = sieve_burn::median(single, 0);
        assert_same_bits(
            &read::<T>(values.reshape([len])),
            &row,
            &format!("{case}: median of one-element lanes"),
        );
        assert_eq!(
            i64s(indices),
            vec![0; len],
            "{case}: median of one-element lanes"
        );
    }
    // Rank 3, along every dim (negative too).
    let shape = [3usize, 4, 5];
    let x: Vec<T> = (0..60).map(|_| T::draw(&mut rng)).collect();
    for dim in [-1isize, 0, 1] {
        let d = dim.rem_euclid(3) as usize;
        let t =
            Tensor::<3, T::Kind>::from_data(TensorData::new(x.clone(), shape), (device, T::DTYPE));
        let k = 2;
        let (values, indices) = sieve_burn::kthvalue(t, k, dim);
        let mut dims = shape;
        dims[d] = 1;
        assert_eq!(values.dims(), dims, "{test}: kthvalue dim {dim} shape");
        let n = 60 / shape[d];
        let (mut want_i, mut want_v) = (vec![0i64; n], vec![x[0]; n]);
        for lane in crate::common::lanes(&shape, d) {
            let row: Vec<T> = lane.at.iter().map(|&p| x[p]).collect();
            let j = sort_rows(&row, 1, row.len(), false)[k - 1];
            want_i[lane.out(1, 0)] = j as i64;
            want_v[lane.out(1, 0)] = row[j];
        }
        let case = format!(
            "{test} {device:?} {}: kthvalue [3, 4, 5] dim {dim}",
            std::any::type_name::<T>()
        );
        assert_eq!(i64s(indices.reshape([n])), want_i, "{case}: indices");
        assert_same_bits(&read::<T>(values.reshape([n])), &want_v, &case);
    }
}

#[test]
fn unique_and_unique_consecutive_match_the_reference() {
    let _device = serial();
    for device in [Device::default(), Device::flex()] {
        check_unique::<f32>(&device, "unique");
        check_unique::<i32>(&device, "unique");
        check_unique::<f64>(&device, "unique");
        check_unique::<half::f16>(&device, "unique");
        check_unique::<i64>(&device, "unique");
        check_unique::<u32>(&device, "unique");
    }
}

/// The raw search at other tunings (1 / 3 / 8 / 32 queries a unit, few splitters, small cubes) against the reference: empty, one-key and odd sequences, ties, NaN, -0.0,
/// queries not filling a cube, both `right`s, f32 and i32.
#[test]
fn searchsorted_tunings_match_the_reference() {
    let _device = serial();
    let client = sieve_burn::cube_client(&Device::default()).expect("a CubeCL test device");
    let caps = sieve::DeviceCaps::of(&client);
    let (mut rng, seed) = rng("searchsorted_tunings_match_the_reference");
    let base = sieve::search::SearchTuning::for_device(&caps);
    let tunings = [
        sieve::search::SearchTuning {
            queries_per_unit: 8,
            ..base
        },
        sieve::search::SearchTuning {
            queries_per_unit: 3,
            max_splitters: 64,
            ..base
        },
        sieve::search::SearchTuning {
            queries_per_unit: 1,
            ..base
        },
        sieve::search::SearchTuning {
            queries_per_unit: 32,
            units_per_cube: caps.cube_units(64),
            ..base
        },
    ];
    let pool = [f32::NAN, -0.0, 0.0, 1.5, -1.5, f32::INFINITY, 2.0, 3.0];
    for keys in [0usize, 1, 2, 5, 1000, 4099, 70000] {
        let mut sorted: Vec<f32> = (0..keys)
            .map(|i| {
                if i % 3 == 0 {
                    pool[rng.random_range(0..pool.len())]
                } else {
                    rng.random_range(-4.0f32..4.0)
                }
            })
            .collect();
        sorted.sort_by(SortKey::order);
        let queries: Vec<f32> = (0..3001)
            .map(|i| match (i % 4, keys) {
                (0, k) if k > 0 => sorted[rng.random_range(0..k)],
                (1, _) => pool[rng.random_range(0..pool.len())],
                _ => rng.random_range(-5.0f32..5.0),
            })
            .collect();
        // The same draws as i32 (NaN as i32::MAX), ties included.
        let to_ints = |v: &[f32]| -> Vec<i32> {
            v.iter()
                .map(|&v| {
                    if v.is_nan() {
                        i32::MAX
                    } else {
                        (v * 3.0) as i32
                    }
                })
                .collect()
        };
        let int_queries = to_ints(&queries);
        let mut int_sorted = to_ints(&sorted);
        int_sorted.sort();
        for tuning in tunings {
            for right in [false, true] {
                let case = format!("seed {seed}: {keys} keys, {tuning:?}, right={right}");
                let want: Vec<i64> = queries
                    .iter()
                    .map(|q| search_reference(&sorted, q, right))
                    .collect();
                assert_eq!(
                    raw_search(&client, &sorted, &queries, sieve::Dtype::F32, right, tuning),
                    want,
                    "{case}: f32"
                );
                let want: Vec<i64> = int_queries
                    .iter()
                    .map(|q| search_reference(&int_sorted, q, right))
                    .collect();
                assert_eq!(
                    raw_search(
                        &client,
                        &int_sorted,
                        &int_queries,
                        sieve::Dtype::I32,
                        right,
                        tuning
                    ),
                    want,
                    "{case}: i32"
                );
            }
        }
    }
}

/// One raw `searchsorted_with` into i32 positions, read back as i64.
fn raw_search<T: bytemuck::Pod>(
    client: &cubecl::prelude::Client,
    sorted: &[T],
    queries: &[T],
    dtype: sieve::Dtype,
    right: bool,
    tuning: sieve::search::SearchTuning,
) -> Vec<i64> {
    let keys = crate::common::upload(client, sorted);
    let asked = crate::common::upload(client, queries);
    let out = crate::common::poisoned(client, queries.len(), -7i32);
    sieve::search::searchsorted_with(
        client,
        sieve::search::SearchIo {
            sorted: &keys,
            queries: &asked,
            dtype,
            out: &out,
            index_dtype: sieve::Dtype::I32,
        },
        sorted.len(),
        queries.len(),
        right,
        tuning,
    )
    .expect("a valid search");
    crate::common::download::<i32>(client, out, queries.len())
        .into_iter()
        .map(i64::from)
        .collect()
}

/// `unique` between fused element-wise ops (Fusion records the run-start op's output shapes
/// before it runs: values `[n]`, positions `[n]` or `[0]`, count `[1]`): its input made by
/// fused ops, its outputs fed to more.
#[test]
fn unique_between_fused_ops() {
    let _device = serial();
    let device = Device::default();
    let raw: Vec<f32> = (0..4099).map(|i| ((i * 7919) % 97) as f32 - 40.0).collect();
    let x = Tensor::<1>::from_data(TensorData::new(raw.clone(), [raw.len()]), &device);
    let made: Vec<f32> = raw.iter().map(|v| v * 2.0 + 1.0).collect();
    let want = unique_reference(&made);
    let got = sieve_burn::unique_with(x.mul_scalar(2.0).add_scalar(1.0), true, true);
    let values: Vec<f32> = got
        .values
        .sub_scalar(1.0)
        .into_data()
        .iter::<f32>()
        .collect();
    let want_values: Vec<f32> = want.0.iter().map(|v| v - 1.0).collect();
    assert_eq!(
        values, want_values,
        "unique of fused input, fed to a fused op"
    );
    assert_eq!(
        i64s(got.inverse.unwrap().add_scalar(1)),
        want.1.iter().map(|g| g + 1).collect::<Vec<_>>()
    );
    assert_eq!(
        i64s(got.counts.unwrap().mul_scalar(2)),
        want.2.iter().map(|c| c * 2).collect::<Vec<_>>()
    );
    let alone: Vec<f32> = sieve_burn::unique(
        Tensor::<1>::from_data(TensorData::new(raw.clone(), [raw.len()]), &device).neg(),
    )
    .neg()
    .into_data()
    .iter::<f32>()
    .collect();
    let mut want_alone = unique_reference(&raw.iter().map(|v| -v).collect::<Vec<f32>>()).0;
    want_alone.iter_mut().for_each(|v| *v = -*v);
    assert_eq!(alone, want_alone, "unique alone between fused negations");
}

#[test]
fn searchsorted_and_bucketize_match_the_reference() {
    let _device = serial();
    for device in [Device::default(), Device::flex()] {
        check_search::<f32>(&device, "searchsorted");
        check_search::<i32>(&device, "searchsorted");
        check_search::<f64>(&device, "searchsorted");
        check_search::<half::f16>(&device, "searchsorted");
        check_search::<i64>(&device, "searchsorted");
        check_search::<u32>(&device, "searchsorted");
    }
}

/// 64-bit keys take the kernel's two-word path; the raw entry point refuses bad calls.
#[test]
fn searchsorted_of_64_bit_keys_and_bad_raw_calls() {
    let _device = serial();
    for device in [Device::default(), Device::flex()] {
        let sorted: Vec<i64> = vec![i64::MIN, -5, 0, 0, 1 << 40, (1 << 40) + 1, i64::MAX];
        let queries: Vec<i64> = vec![0, 1 << 40, i64::MIN, i64::MAX, 7, -6, (1 << 32) - 1];
        let t = |v: &Vec<i64>| {
            Tensor::<1, Int>::from_data(
                TensorData::new(v.clone(), [v.len()]),
                (&device, burn::tensor::DType::I64),
            )
        };
        for right in [false, true] {
            let want: Vec<i64> = queries
                .iter()
                .map(|q| search_reference(&sorted, q, right))
                .collect();
            let got = i64s(sieve_burn::searchsorted(t(&sorted), t(&queries), right));
            assert_eq!(got, want, "{device:?} i64 keys, right={right}");
        }
    }
    let client = sieve_burn::cube_client(&Device::default()).expect("a CubeCL test device");
    let words = client.create_from_slice(bytemuck::cast_slice(&[1.0f32, 2.0, 3.0]));
    let out = client.empty(4 * 3);
    let raw = |index_dtype, keys, queries| {
        sieve::search::searchsorted(
            &client,
            sieve::search::SearchIo {
                sorted: &words,
                queries: &words,
                dtype: sieve::Dtype::F32,
                out: &out,
                index_dtype,
            },
            keys,
            queries,
            false,
        )
        .map_err(|e| e.to_string())
    };
    assert!(raw(sieve::Dtype::I32, 3, 3).is_ok());
    let e = raw(sieve::Dtype::F32, 3, 3).unwrap_err();
    assert!(
        e.contains("`io.index_dtype` = f32: expected i32, u32 or i64"),
        "{e}"
    );
    let e = raw(sieve::Dtype::I32, 4, 3).unwrap_err();
    assert!(e.contains("`io.sorted`"), "{e}");
    let e = raw(sieve::Dtype::I32, 3, 4).unwrap_err();
    assert!(e.contains("`io.queries`"), "{e}");
}

#[test]
fn kthvalue_and_median_match_the_reference() {
    let _device = serial();
    for device in [Device::default(), Device::flex()] {
        check_order_statistics::<f32>(&device, "order statistics");
        check_order_statistics::<i32>(&device, "order statistics");
        check_order_statistics::<f64>(&device, "order statistics");
        check_order_statistics::<half::f16>(&device, "order statistics");
        check_order_statistics::<i64>(&device, "order statistics");
        check_order_statistics::<u32>(&device, "order statistics");
    }
}

#[test]
fn order_statistics_gradients_go_to_the_chosen_element() {
    let _device = serial();
    let device = Device::default().autodiff();
    let x = Tensor::<2>::from_data([[3.0, 1.0, 2.0, 2.0], [f32::NAN, 0.0, 1.0, 5.0]], &device)
        .require_grad();
    let (values, _) = sieve_burn::median(x.clone(), 1);
    let grads = (values * Tensor::<2>::from_data([[2.0], [3.0]], &device))
        .sum()
        .backward();
    let got: Vec<f32> = x.grad(&grads).unwrap().into_data().iter::<f32>().collect();
    // Row 0: the lower median is the first 2.0 (index 2); row 1: its NaN (index 0).
    assert_eq!(
        got,
        [0.0, 0.0, 2.0, 0.0, 3.0, 0.0, 0.0, 0.0],
        "median gradient"
    );
    let x = Tensor::<2>::from_data([[4.0, 1.0, 3.0]], &device).require_grad();
    let (values, indices) = sieve_burn::kthvalue(x.clone(), 2, 1);
    assert_eq!(i64s(indices), [2]);
    let grads = values.sum().backward();
    let got: Vec<f32> = x.grad(&grads).unwrap().into_data().iter::<f32>().collect();
    assert_eq!(got, [0.0, 0.0, 1.0], "kthvalue gradient");
    // `unique` on an Autodiff tensor: the same values, outside the graph (as torch.unique).
    let x =
        Tensor::<1>::from_data([2.0, f32::NAN, -0.0, 2.0, 0.0, f32::NAN], &device).require_grad();
    let got = sieve_burn::unique_with(x, true, true);
    let values: Vec<u32> = got
        .values
        .into_data()
        .iter::<f32>()
        .map(f32::to_bits)
        .collect();
    assert_eq!(
        values,
        [(-0.0f32).to_bits(), 2.0f32.to_bits(), f32::NAN.to_bits()],
        "unique on Autodiff"
    );
    assert_eq!(i64s(got.inverse.unwrap()), [1, 2, 0, 1, 0, 2]);
    assert_eq!(i64s(got.counts.unwrap()), [2, 2, 2]);
}

#[test]
fn bad_calls_get_clear_errors() {
    let _device = serial();
    let device = Device::default();
    let x = Tensor::<2>::zeros([2, 3], &device);
    let message = |f: &dyn Fn()| panic_message(f).expect("the call was accepted");
    let m = message(&|| drop(sieve_burn::kthvalue(x.clone(), 0, 1)));
    assert!(
        m.contains("kthvalue: invalid argument `k` = 0: expected 1..=3"),
        "{m}"
    );
    let m = message(&|| drop(sieve_burn::kthvalue(x.clone(), 4, 1)));
    assert!(m.contains("expected 1..=3"), "{m}");
    let m = message(&|| drop(sieve_burn::median(Tensor::<2>::zeros([2, 0], &device), 1)));
    assert!(
        m.contains("median: invalid argument `x`: dim 1 has length 0"),
        "{m}"
    );
    let m = message(&|| {
        drop(sieve_burn::kthvalue(
            Tensor::<2>::zeros([0, 5], &device),
            1,
            0,
        ))
    });
    assert!(
        m.contains("kthvalue: invalid argument `k` = 1: expected 1..=0"),
        "{m}"
    );
    // Dims out of range, both signs: Burn's words (its `median`'s own message; kthvalue, which
    // Burn lacks, names itself alike).
    for dim in [2isize, -3] {
        let m = message(&|| drop(sieve_burn::kthvalue(x.clone(), 1, dim)));
        let want = format!(
            "Operation: 'Kthvalue'\n  Reason:\n    1. BoundsError: dimension {dim} out of bounds: 0..2"
        );
        assert!(m.contains(&want), "{m}");
        let ours = message(&|| drop(sieve_burn::median(x.clone(), dim)));
        let burns = message(&|| drop(x.clone().median(dim)));
        assert_eq!(ours, burns, "median, dim {dim}");
    }
    // searchsorted's two tensors must share a dtype.
    let keys = Tensor::<1>::from_data(TensorData::new(vec![1.0f32, 2.0], [2]), &device);
    let queries = Tensor::<1>::from_data(TensorData::new(vec![1.5f64], [1]), (&device, DType::F64));
    let m = message(&|| {
        drop(sieve_burn::searchsorted(
            keys.clone(),
            queries.clone(),
            false,
        ))
    });
    assert!(
        m.contains("searchsorted: invalid argument `values`: dtype F64")
            && m.contains("expected the dtype of `sorted_sequence` (F32)"),
        "{m}"
    );
}

/// A lane's only NaN in its last place makes its median NaN, in lanes 65,535 and 131,071 long
/// (where Burn 0.22's `min_dim` drops a lane's last element on lavapipe).
#[test]
fn median_finds_a_nan_in_a_lanes_last_place() {
    let _device = serial();
    let device = Device::default();
    for len in [65_535usize, 131_071] {
        let mut x: Vec<f32> = (0..len).map(|j| (j % 1000) as f32).collect();
        x[len - 1] = f32::NAN;
        let t = Tensor::<2>::from_data(TensorData::new(x, [1, len]), &device);
        let (values, indices) = sieve_burn::median(t, 1);
        let v: Vec<f32> = values.into_data().iter::<f32>().collect();
        assert!(v[0].is_nan(), "[1, {len}]: median {v:?}, expected NaN");
        assert_eq!(
            i64s(indices),
            [len as i64 - 1],
            "[1, {len}]: the NaN's index"
        );
    }
}

/// `median` along dim 0 of a `[2, n, 1]` view (the transpose of `[n, 2, 1]`), NaN in a
/// quarter of the elements: `kthvalue`'s values there come back through a swap of dims 0 and 2
/// as a `[1, n, 1]` view, which Burn 0.22's fused `mask_where` (the NaN lanes) misread while
/// its dims of size 1 kept the swap's strides (`props::sets_property` on the H100 and
/// lavapipe, session 39: ~1,250 of 4,096 lanes wrong).
#[test]
fn median_of_a_rank_3_view_with_nans() {
    let _device = serial();
    let (mut rng, seed) = rng("median_of_a_rank_3_view_with_nans");
    let n = 4096;
    let pool = [
        f32::NAN,
        f32::from_bits(0x7f80_0001),
        -1e-45,
        1.0,
        -0.0,
        0.0,
        2.0,
        -3.0,
    ];
    let x: Vec<f32> = (0..2 * n)
        .map(|_| pool[rng.random_range(0..pool.len())])
        .collect();
    for device in [Device::default(), Device::flex()] {
        for _ in 0..2 {
            // Twice: Fusion runs a new sequence of ops op by op, then fuses its repeats.
            let base = Tensor::<3>::from_data(TensorData::new(x.clone(), [n, 2, 1]), &device);
            let (values, indices) = sieve_burn::median(base.swap_dims(0, 1), 0);
            assert_eq!(values.dims(), [1, n, 1]);
            let (values, indices) = (read::<f32>(values.reshape([n])), i64s(indices));
            for c in 0..n {
                let lane = [x[2 * c], x[2 * c + 1]];
                let want = match lane.iter().position(|v| v.is_nan()) {
                    Some(nan) => nan,
                    None => sort_rows(&lane, 1, 2, false)[0],
                };
                assert_eq!(
                    (values[c].to_bits(), indices[c]),
                    (lane[want].to_bits(), want as i64),
                    "median {device:?} (seed {seed}): lane {c} = {lane:?}"
                );
            }
        }
    }
}

/// One raw hash-path call (`sieve::distinct`, both steps) on `x` of `dtype` at `options`:
/// `None` where step one gave up (a count of 0), else the distinct values.
pub(crate) fn raw_distinct<T: bytemuck::Pod>(
    client: &cubecl::prelude::Client,
    x: &[T],
    dtype: sieve::Dtype,
    options: sieve::distinct::DistinctOptions,
) -> Option<Vec<T>> {
    use sieve::distinct::{DistinctIo, count_distinct, distinct_workspace};
    let values = crate::common::upload(client, x);
    let workspace =
        crate::common::poisoned(client, distinct_workspace(x.len(), options), 0x5A5A_5A5Au32);
    let io = DistinctIo {
        values: &values,
        value_dtype: dtype,
        workspace: &workspace,
    };
    let count = crate::common::poisoned(client, 1, -7i32);
    count_distinct(client, io, x.len(), &count, sieve::Dtype::I32, options).expect("step one");
    let m = crate::common::download::<i32>(client, count, 1)[0];
    assert!(m >= 0, "count {m}");
    if m == 0 {
        return None;
    }
    let m = m as usize;
    let out = crate::common::poisoned(client, m + 1, 0xDEAD_BEEFu32);
    sieve::distinct::write_distinct(client, io, x.len(), m, &out, options).expect("step two");
    let got = crate::common::download::<T>(client, out, m + 1);
    // Nothing written past the count.
    assert_eq!(
        bytemuck::cast_slice::<T, u32>(&got[m..]),
        [0xDEAD_BEEFu32],
        "a slot past the count was written"
    );
    Some(got[..m].to_vec())
}

/// `unique`'s hash path (`sieve::distinct`) against the reference through the raw API: each
/// group's first element kept (the NaN payload, the zero's sign, i32's -1 and u32's MAX: the
/// values whose bits are the empty slot's, set aside), at a 1024-slot table both where it
/// holds the values (at most 250 distinct among up to 20,000 elements, vectors of 4 and odd
/// lengths) and where it cannot (5,000 distinct: step one gives up, writing 0); and the
/// public op at default options across table sizes, where it may give up and sort instead
/// (3 x 2^20 distinct: the default table holds 2^22 slots), each time with the reference's
/// bits.
#[test]
fn unique_by_hashing_matches_the_reference() {
    let _device = serial();
    let client = crate::common::client();
    // A 1024-slot table; odd lengths (one element a vector) at 12 elements a unit, the others
    // at 4 (8 is the default, which the public op's rows below take).
    // The insert's grid by length: a cube a chunk (the default), or one or 16 cubes a
    // multiprocessor claiming chunks.
    let small = |len: usize| sieve::distinct::DistinctOptions {
        max_table_slots: 1024,
        elements_per_unit: if len % 2 == 1 { 12 } else { 4 },
        cubes_per_multiprocessor: [0, 1, 16][len % 3],
    };
    let (mut rng, _) = rng("unique_by_hashing");
    let nan_a = f32::from_bits(0x7fc0_1234);
    let nan_b = f32::from_bits(0xffff_ffff);
    for len in [1usize, 3, 4, 255, 1024, 4099, 20_000] {
        for distinct in [1usize, 7, 250] {
            let mut x: Vec<f32> = (0..len)
                .map(|_| match rng.random_range(0..40) {
                    0 => nan_a,
                    1 => nan_b,
                    2 => -0.0,
                    3 => 0.0,
                    _ => rng.random_range(0..distinct) as f32 - 3.5,
                })
                .collect();
            if len > 3 {
                // The first zero is -0.0 and the first NaN the all-ones pattern.
                x[1] = -0.0;
                x[2] = nan_b;
            }
            let case = format!("f32 [{len}], {distinct} distinct");
            let got = raw_distinct(&client, &x, sieve::Dtype::F32, small(len))
                .unwrap_or_else(|| panic!("{case}: the table gave up"));
            assert_same_bits(&got, &unique_reference(&x).0, &case);
            let ints: Vec<i32> = (0..len)
                .map(|_| rng.random_range(0..distinct) as i32 - 1)
                .collect();
            let got = raw_distinct(&client, &ints, sieve::Dtype::I32, small(len))
                .unwrap_or_else(|| panic!("i32 [{len}]: the table gave up"));
            assert_eq!(got, unique_reference(&ints).0, "i32 [{len}], {distinct}");
            let words: Vec<u32> = ints.iter().map(|&v| v as u32).collect();
            let got = raw_distinct(&client, &words, sieve::Dtype::U32, small(len))
                .unwrap_or_else(|| panic!("u32 [{len}]: the table gave up"));
            assert_eq!(got, unique_reference(&words).0, "u32 [{len}], {distinct}");
        }
    }
    // Options out of range are refused by name before anything launches.
    for (slots, epu, cubes, name) in [
        (1000, 8, 16, "max_table_slots"),
        (1024, 6, 16, "elements_per_unit"),
        (1024, 8, 65, "cubes_per_multiprocessor"),
    ] {
        let values = crate::common::upload(&client, &[1.0f32; 8]);
        let workspace = crate::common::poisoned(&client, 1 << 16, 0u32);
        let count = crate::common::poisoned(&client, 1, 0i32);
        let err = sieve::distinct::count_distinct(
            &client,
            sieve::distinct::DistinctIo {
                values: &values,
                value_dtype: sieve::Dtype::F32,
                workspace: &workspace,
            },
            8,
            &count,
            sieve::Dtype::I32,
            sieve::distinct::DistinctOptions {
                max_table_slots: slots,
                elements_per_unit: epu,
                cubes_per_multiprocessor: cubes,
            },
        )
        .expect_err("refused");
        assert!(err.to_string().contains(name), "{err}");
    }
    // Crowded tables (a 1024-slot table at 400 to 1000 distinct values: long runs of occupied
    // slots, wrapping past the table's end): each call either gives up or is exact.
    for (i, distinct) in [400i32, 600, 700, 1000].into_iter().enumerate() {
        let ints: Vec<i32> = (0..20_000)
            .map(|_| rng.random_range(0..distinct) * 7919)
            .collect();
        let options = sieve::distinct::DistinctOptions {
            cubes_per_multiprocessor: [0, 1, 16][i % 3],
            ..small(20_000)
        };
        if let Some(got) = raw_distinct(&client, &ints, sieve::Dtype::I32, options) {
            assert_eq!(
                got,
                unique_reference(&ints).0,
                "crowded, {distinct} distinct"
            );
        }
    }
    // More distinct values than slots: certain to give up, at each grid (5000, 5001, 5002).
    for len in 5000..5003 {
        let crowded: Vec<i32> = (0..len as i32).map(|i| i * 7).collect();
        assert!(
            raw_distinct(&client, &crowded, sieve::Dtype::I32, small(len)).is_none(),
            "{len} distinct values in 1024 slots"
        );
    }
    // Cubes that claim several chunks each (one cube a multiprocessor: 128 where the device
    // does not say; 300,000 elements are about 300 chunks of 1024), against a cube a chunk.
    let many: Vec<i32> = (0..300_000)
        .map(|_| rng.random_range(0..20_000) - 10_000)
        .collect();
    for cubes in [1, 0] {
        let options = sieve::distinct::DistinctOptions {
            max_table_slots: 1 << 17,
            elements_per_unit: 4,
            cubes_per_multiprocessor: cubes,
        };
        let got = raw_distinct(&client, &many, sieve::Dtype::I32, options)
            .unwrap_or_else(|| panic!("[300000], {cubes} cubes a multiprocessor: gave up"));
        assert_eq!(
            got,
            unique_reference(&many).0,
            "{cubes} cubes a multiprocessor"
        );
    }
    let device = Device::default();
    for (len, distinct) in [(70_000usize, 3u32), (300_000, 50_000), (3 << 20, 3 << 20)] {
        let x: Vec<f32> = (0..len)
            .map(|i| ((i as u32).wrapping_mul(2_654_435_761) % distinct) as f32)
            .collect();
        let case = format!("unique f32 [{len}], {distinct} distinct");
        assert_same_bits(
            &read::<f32>(sieve_burn::unique(tensor(&x, &device))),
            &unique_reference(&x).0,
            &case,
        );
    }
}
