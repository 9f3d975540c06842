//! Issue 14, item 4: every backend. On NdArray (stock-op fallbacks, the same generic ones as
//! Flex's) every public op gives the CPU reference's answer, the same bits as on Flex and as
//! the kernels on the default device; gradients flow through Autodiff over NdArray; empty
//! shapes and exact 64-bit key order hold there too.
//!
//! Every op runs on one case (a `[3, 7, 5]` Float and Int tensor with NaN, +-0.0, +-inf and
//! heavy duplicates, a random mask) along every dim; its outputs are flattened to `i64`s
//! (floats as bits, NaN canonical) under a name, so one list compares against another.
#![cfg(feature = "ndarray")]
// Burn deprecates NdArray (and `Device::ndarray`) in favour of Flex; its users are still served.
#![allow(deprecated)]

use crate::common::{assert_same, first_k_along, lanes, rng, serial, special_f32};

use burn::tensor::{Bool, DType, Device, Int, Tensor, TensorData, try_read_sync};
use rand::Rng;
use sieve::sort::reference::SortKey;
use sieve_burn::{SieveKind, TopKOptions};

const SHAPE: [usize; 3] = [3, 7, 5];
/// The split's bits: the lowest, one inside the keys' range, the sign (of i32 and i64 alike
/// for keys this small).
const BITS: [u32; 3] = [0, 3, 31];

/// One case: the same values as Float and Int tensors, and a mask.
struct Case {
    floats: Vec<f32>,
    ints: Vec<i32>,
    mask: Vec<bool>,
}

fn case(test: &str) -> Case {
    let (mut rng, _) = rng(test);
    let n: usize = SHAPE.iter().product();
    Case {
        floats: (0..n).map(|_| special_f32(&mut rng)).collect(),
        ints: (0..n).map(|_| rng.random_range(-20..20)).collect(),
        mask: (0..n).map(|_| rng.random_bool(0.4)).collect(),
    }
}

/// Each op's outputs, flattened, under the op's name and arguments.
type Outputs = Vec<(String, Vec<i64>)>;

/// A value of an output, as compared: floats as bits with one NaN, integers as they are.
trait Value: SortKey + Copy + Default {
    fn flat(self) -> i64;
    /// [`Value::flat`] of a sum: -0.0 and +0.0 are one value (a tree sum and a running sum
    /// may differ in the sign of a zero, never in anything else on these inputs).
    fn flat_sum(self) -> i64;
    fn plus(self, other: Self) -> Self;
}

impl Value for f32 {
    fn flat(self) -> i64 {
        if self.is_nan() {
            f32::NAN.to_bits() as i64
        } else {
            self.to_bits() as i64
        }
    }
    fn flat_sum(self) -> i64 {
        if self == 0.0 { 0 } else { self.flat() }
    }
    fn plus(self, other: Self) -> Self {
        self + other
    }
}

impl Value for i32 {
    fn flat(self) -> i64 {
        self as i64
    }
    fn flat_sum(self) -> i64 {
        self as i64
    }
    fn plus(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
}

fn flat<const D: usize, K: SieveKind>(t: Tensor<D, K>) -> Vec<i64> {
    let data = t.into_data();
    if data.dtype().is_float() {
        data.iter::<f32>().map(Value::flat).collect()
    } else {
        data.iter::<i64>().collect()
    }
}

fn flat_sum<const D: usize, K: SieveKind>(t: Tensor<D, K>) -> Vec<i64> {
    let data = t.into_data();
    if data.dtype().is_float() {
        data.iter::<f32>().map(Value::flat_sum).collect()
    } else {
        data.iter::<i64>().collect()
    }
}

/// Pairs `(index, value)` of each lane of an output (`shape` along `dim`) ordered by index:
/// the unsorted top-k's set, whatever order a backend gave it in.
fn by_index(indices: &[i64], values: &[i64], shape: &[usize], dim: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(2 * indices.len());
    for lane in lanes(shape, dim) {
        let mut pairs: Vec<(i64, i64)> = lane.at.iter().map(|&p| (indices[p], values[p])).collect();
        pairs.sort_unstable();
        out.extend(pairs.into_iter().flat_map(|(i, v)| [i, v]));
    }
    out
}

fn ks(len: usize) -> [usize; 4] {
    [0, 1, 3, len]
}

// ---------------------------------------------------------------------------------------------
// Every op on a device

fn tensor<K: SieveKind, T: burn::tensor::Element>(values: &[T], device: &Device) -> Tensor<3, K> {
    Tensor::from_data(TensorData::new(values.to_vec(), SHAPE), device)
}

/// The ops of one tensor kind (`label` "f" or "i") on `x`.
fn kind_ops<K: SieveKind>(out: &mut Outputs, label: &str, x: Tensor<3, K>, mask: Tensor<3, Bool>) {
    let mut put = |name: String, values: Vec<i64>| out.push((format!("{label} {name}"), values));
    for dim in 0..3 {
        put(
            format!("cumsum {dim}"),
            flat_sum(sieve_burn::cumsum(x.clone(), dim)),
        );
        let (values, indices, counts) = sieve_burn::stable_partition(x.clone(), mask.clone(), dim);
        put(format!("stable_partition {dim}"), flat(values));
        put(format!("stable_partition indices {dim}"), flat(indices));
        put(format!("stable_partition counts {dim}"), flat(counts));

        put(
            format!("sort {dim}"),
            flat(sieve_burn::sort(x.clone(), dim)),
        );
        put(
            format!("sort_descending {dim}"),
            flat(sieve_burn::sort_descending(x.clone(), dim)),
        );
        let (values, indices) = sieve_burn::sort_with_indices(x.clone(), dim);
        put(format!("sort_with_indices {dim}"), flat(values));
        put(format!("sort_with_indices indices {dim}"), flat(indices));
        let (values, indices) = sieve_burn::sort_descending_with_indices(x.clone(), dim);
        put(format!("sort_descending_with_indices {dim}"), flat(values));
        put(
            format!("sort_descending_with_indices indices {dim}"),
            flat(indices),
        );
        put(
            format!("argsort {dim}"),
            flat(sieve_burn::argsort(x.clone(), dim)),
        );
        put(
            format!("argsort_descending {dim}"),
            flat(sieve_burn::argsort_descending(x.clone(), dim)),
        );

        for k in ks(SHAPE[dim]) {
            put(
                format!("topk {k} {dim}"),
                flat(sieve_burn::topk(x.clone(), k, dim)),
            );
            let (values, indices) = sieve_burn::topk_with_indices(x.clone(), k, dim);
            put(format!("topk_with_indices {k} {dim}"), flat(values));
            put(
                format!("topk_with_indices indices {k} {dim}"),
                flat(indices),
            );
            put(
                format!("argtopk {k} {dim}"),
                flat(sieve_burn::argtopk(x.clone(), k, dim)),
            );
            let (values, indices) = sieve_burn::bottomk_with_indices(x.clone(), k, dim);
            put(format!("bottomk_with_indices {k} {dim}"), flat(values));
            put(
                format!("bottomk_with_indices indices {k} {dim}"),
                flat(indices),
            );
            let options = TopKOptions {
                largest: false,
                sorted: false,
                ..TopKOptions::default()
            };
            let (values, indices) = sieve_burn::topk_with_options(x.clone(), k, dim, options);
            let mut shape = SHAPE;
            shape[dim] = k;
            put(
                format!("topk_with_options unsorted smallest {k} {dim}"),
                by_index(&flat(indices), &flat(values), &shape, dim),
            );
        }
    }
    put(
        "mask_select".into(),
        flat(sieve_burn::mask_select(x.clone(), mask.clone())),
    );
    let selected = try_read_sync(sieve_burn::mask_select_async(x.clone(), mask.clone()))
        .expect("mask_select_async resolves on this device");
    put("mask_select_async".into(), flat(selected));
    let (values, count) = sieve_burn::mask_select_padded(x.clone(), mask.clone());
    put("mask_select_padded".into(), flat(values));
    put("mask_select_padded count".into(), flat(count));
    let rows = [SHAPE[0] * SHAPE[1], SHAPE[2]];
    let (values, counts) = sieve_burn::compact_rows(x.reshape(rows), mask.reshape(rows));
    put("compact_rows".into(), flat(values));
    put("compact_rows counts".into(), flat(counts));
}

/// Every public op of sieve_burn on `device`.
fn run_every_op(device: &Device, case: &Case) -> Outputs {
    let mut out = Outputs::new();
    let mask = Tensor::<3, Bool>::from_data(TensorData::new(case.mask.clone(), SHAPE), device);
    kind_ops(
        &mut out,
        "f",
        tensor::<burn::tensor::Float, _>(&case.floats, device),
        mask.clone(),
    );
    let keys = tensor::<Int, _>(&case.ints, device);
    kind_ops(&mut out, "i", keys.clone(), mask.clone());
    for dim in 0..3 {
        for bit in BITS {
            let (values, indices, counts) = sieve_burn::split_by_bit(keys.clone(), bit, dim);
            out.push((format!("split_by_bit {bit} {dim}"), flat(values)));
            out.push((format!("split_by_bit indices {bit} {dim}"), flat(indices)));
            out.push((format!("split_by_bit counts {bit} {dim}"), flat(counts)));
        }
    }
    out.push(("argwhere".into(), flat(sieve_burn::argwhere(mask.clone()))));
    let coordinates = try_read_sync(sieve_burn::argwhere_async(mask.clone()))
        .expect("argwhere_async resolves on this device");
    out.push(("argwhere_async".into(), flat(coordinates)));
    let per_dim =
        |coordinates: Vec<Tensor<1, Int>>| coordinates.into_iter().flat_map(flat).collect();
    out.push(("nonzero".into(), per_dim(sieve_burn::nonzero(mask.clone()))));
    let coordinates = try_read_sync(sieve_burn::nonzero_async(mask))
        .expect("nonzero_async resolves on this device");
    out.push(("nonzero_async".into(), per_dim(coordinates)));
    out
}

// ---------------------------------------------------------------------------------------------
// The same outputs on the CPU

/// A stable partition of each lane along `dim`: selected first, then the rest, each in order.
fn partition<T: Value>(data: &[T], keep: &[bool], dim: usize) -> [Vec<i64>; 3] {
    let mut values = vec![0; data.len()];
    let mut indices = vec![0; data.len()];
    let mut counts = vec![0; data.len() / SHAPE[dim]];
    for lane in lanes(&SHAPE, dim) {
        let at = &lane.at;
        let order: Vec<usize> = (0..at.len())
            .filter(|&j| keep[at[j]])
            .chain((0..at.len()).filter(|&j| !keep[at[j]]))
            .collect();
        for (slot, &j) in order.iter().enumerate() {
            values[at[slot]] = data[at[j]].flat();
            indices[at[slot]] = j as i64;
        }
        counts[lane.out(1, 0)] = at.iter().filter(|&&p| keep[p]).count() as i64;
    }
    [values, indices, counts]
}

fn reference_kind<T: Value>(out: &mut Outputs, label: &str, data: &[T], mask: &[bool]) {
    let mut put = |name: String, values: Vec<i64>| out.push((format!("{label} {name}"), values));
    let pick = |source: &[usize]| source.iter().map(|&s| data[s].flat()).collect::<Vec<i64>>();
    for dim in 0..3 {
        let mut sums = vec![0; data.len()];
        for lane in lanes(&SHAPE, dim) {
            let at = &lane.at;
            let mut acc = data[at[0]];
            for (j, &p) in at.iter().enumerate() {
                if j > 0 {
                    acc = acc.plus(data[p]);
                }
                sums[p] = acc.flat_sum();
            }
        }
        put(format!("cumsum {dim}"), sums);
        let [values, indices, counts] = partition(data, mask, dim);
        put(format!("stable_partition {dim}"), values);
        put(format!("stable_partition indices {dim}"), indices);
        put(format!("stable_partition counts {dim}"), counts);

        let len = SHAPE[dim];
        let (up, up_source) = first_k_along(data, &SHAPE, dim, len, false);
        let (down, down_source) = first_k_along(data, &SHAPE, dim, len, true);
        put(format!("sort {dim}"), pick(&up_source));
        put(format!("sort_descending {dim}"), pick(&down_source));
        put(format!("sort_with_indices {dim}"), pick(&up_source));
        put(format!("sort_with_indices indices {dim}"), up.clone());
        put(
            format!("sort_descending_with_indices {dim}"),
            pick(&down_source),
        );
        put(
            format!("sort_descending_with_indices indices {dim}"),
            down.clone(),
        );
        put(format!("argsort {dim}"), up);
        put(format!("argsort_descending {dim}"), down);

        for k in ks(len) {
            let (top, top_source) = first_k_along(data, &SHAPE, dim, k, true);
            let (bottom, bottom_source) = first_k_along(data, &SHAPE, dim, k, false);
            put(format!("topk {k} {dim}"), pick(&top_source));
            put(format!("topk_with_indices {k} {dim}"), pick(&top_source));
            put(format!("topk_with_indices indices {k} {dim}"), top.clone());
            put(format!("argtopk {k} {dim}"), top);
            put(
                format!("bottomk_with_indices {k} {dim}"),
                pick(&bottom_source),
            );
            put(
                format!("bottomk_with_indices indices {k} {dim}"),
                bottom.clone(),
            );
            let mut shape = SHAPE;
            shape[dim] = k;
            put(
                format!("topk_with_options unsorted smallest {k} {dim}"),
                by_index(&bottom, &pick(&bottom_source), &shape, dim),
            );
        }
    }
    let selected: Vec<i64> = (0..data.len())
        .filter(|&p| mask[p])
        .map(|p| data[p].flat())
        .collect();
    let count = selected.len();
    put("mask_select".into(), selected.clone());
    put("mask_select_async".into(), selected.clone());
    let zero = T::default().flat();
    let mut padded = selected;
    padded.resize(data.len(), zero);
    put("mask_select_padded".into(), padded);
    put("mask_select_padded count".into(), vec![count as i64]);
    let width = SHAPE[2];
    let (mut rows, mut counts) = (Vec::new(), Vec::new());
    for row in 0..data.len() / width {
        let at = row * width..(row + 1) * width;
        let kept: Vec<i64> = at.filter(|&p| mask[p]).map(|p| data[p].flat()).collect();
        counts.push(kept.len() as i64);
        rows.extend_from_slice(&kept);
        rows.resize(rows.len() + width - kept.len(), zero);
    }
    put("compact_rows".into(), rows);
    put("compact_rows counts".into(), counts);
}

fn reference(case: &Case) -> Outputs {
    let mut out = Outputs::new();
    reference_kind(&mut out, "f", &case.floats, &case.mask);
    reference_kind(&mut out, "i", &case.ints, &case.mask);
    for dim in 0..3 {
        for bit in BITS {
            let zero: Vec<bool> = case.ints.iter().map(|&v| (v >> bit) & 1 == 0).collect();
            let [values, indices, counts] = partition(&case.ints, &zero, dim);
            out.push((format!("split_by_bit {bit} {dim}"), values));
            out.push((format!("split_by_bit indices {bit} {dim}"), indices));
            out.push((format!("split_by_bit counts {bit} {dim}"), counts));
        }
    }
    let trues: Vec<usize> = (0..case.mask.len()).filter(|&p| case.mask[p]).collect();
    let coordinate = |p: usize, d: usize| {
        let inner: usize = SHAPE[d + 1..].iter().product();
        ((p / inner) % SHAPE[d]) as i64
    };
    let rows: Vec<i64> = trues
        .iter()
        .flat_map(|&p| (0..3).map(move |d| coordinate(p, d)))
        .collect();
    out.push(("argwhere".into(), rows.clone()));
    out.push(("argwhere_async".into(), rows));
    let per_dim: Vec<i64> = (0..3)
        .flat_map(|d| trues.iter().map(move |&p| coordinate(p, d)))
        .collect();
    out.push(("nonzero".into(), per_dim.clone()));
    out.push(("nonzero_async".into(), per_dim));
    out
}

/// Compares two op lists entry by entry, naming the op and the first differing element.
fn assert_outputs(got: &Outputs, want: &Outputs, case: &str) {
    let names = |o: &Outputs| o.iter().map(|(name, _)| name.clone()).collect::<Vec<_>>();
    assert_eq!(names(got), names(want), "{case}: the ops compared");
    for ((name, got), (_, want)) in got.iter().zip(want) {
        assert_same(got, want, &format!("{case}: {name}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Tests

/// Every op on `device` against the CPU references, on the case `test` seeds.
fn gives_the_references_answers(device: &Device, test: &str) {
    let case = case(test);
    assert_outputs(&run_every_op(device, &case), &reference(&case), test);
}

#[test]
fn ndarray_gives_the_cpu_references_answers() {
    gives_the_references_answers(
        &Device::ndarray(),
        "ndarray_gives_the_cpu_references_answers",
    );
}

#[test]
fn flex_gives_the_cpu_references_answers() {
    gives_the_references_answers(&Device::flex(), "flex_gives_the_cpu_references_answers");
}

/// LibTorch (its CPU device) through the same stock fallbacks. Only with the root package's
/// `tch` feature, which needs libtorch at build time (torch-sys: `LIBTORCH` or
/// `LIBTORCH_USE_PYTORCH`), so CI does not build it.
#[cfg(feature = "tch")]
#[test]
fn libtorch_gives_the_cpu_references_answers() {
    gives_the_references_answers(
        &Device::libtorch(),
        "libtorch_gives_the_cpu_references_answers",
    );
}

/// The stock fallback (NdArray) and the kernels (the default device) agree bit for bit.
#[test]
fn ndarray_matches_the_kernels() {
    let _serial = serial();
    let case = case("ndarray_matches_the_kernels");
    let kernels = run_every_op(&Device::default(), &case);
    assert_outputs(
        &run_every_op(&Device::ndarray(), &case),
        &kernels,
        "ndarray vs kernels",
    );
}

/// Gradients through Autodiff over NdArray: cumsum's is the reversed cumsum of the output's
/// gradient, mask_select's lands on the selected positions, the sort's and top-k's on the
/// source of each output.
#[test]
fn ndarray_autodiff_gradients() {
    let device = Device::ndarray().autodiff();
    let case = case("ndarray_autodiff_gradients");
    let n = case.floats.len();
    let (_, source) = first_k_along(&case.ints, &SHAPE, 1, 3, true);
    let weights: Vec<f32> = (0..n).map(|p| (p % 7) as f32 - 3.0).collect();
    let x = tensor::<burn::tensor::Float, _>(
        &case.ints.iter().map(|&v| v as f32).collect::<Vec<_>>(),
        &device,
    )
    .require_grad();
    let w = tensor::<burn::tensor::Float, _>(&weights, &device);
    let mask = Tensor::<3, Bool>::from_data(TensorData::new(case.mask.clone(), SHAPE), &device);
    let count = case.mask.iter().filter(|&&m| m).count();
    let selected_w =
        Tensor::<1>::from_data(TensorData::new(weights[..count].to_vec(), [count]), &device);
    let mut top_shape = SHAPE;
    top_shape[1] = 3;
    let top_w: Vec<f32> = (0..source.len()).map(|s| s as f32).collect();
    let loss = (sieve_burn::cumsum(x.clone(), 2) * w.clone()).sum()
        + (sieve_burn::mask_select(x.clone(), mask) * selected_w).sum()
        + (sieve_burn::topk(x.clone(), 3, 1)
            * Tensor::<3>::from_data(TensorData::new(top_w.clone(), top_shape), &device))
        .sum();
    let grads = loss.backward();
    let got: Vec<f32> = x
        .grad(&grads)
        .expect("a gradient for x")
        .into_data()
        .iter::<f32>()
        .collect();

    let mut want = vec![0.0f32; n];
    for lane in lanes(&SHAPE, 2) {
        let mut acc = 0.0;
        for &p in lane.at.iter().rev() {
            acc += weights[p];
            want[p] += acc;
        }
    }
    for (slot, p) in (0..n).filter(|&p| case.mask[p]).enumerate() {
        want[p] += weights[slot];
    }
    for (out, &p) in source.iter().enumerate() {
        want[p] += top_w[out];
    }
    assert_same(
        &got,
        &want,
        "ndarray autodiff: cumsum + mask_select + topk gradient",
    );
}

/// soundness.rs's checks, on NdArray: every op on `[0]`, `[3, 0]` and `[0, 4]`.
#[test]
fn ndarray_serves_empty_shapes() {
    crate::soundness::empty_shapes_on(&Device::ndarray(), "ndarray");
}

/// NdArray's fallback, like Flex's, orders i64 keys that differ only past 2^53 (f64 would tie
/// them) exactly.
#[test]
fn ndarray_orders_i64_keys_past_2_pow_53_exactly() {
    let device = Device::ndarray();
    for base in [1i64 << 60, -(1i64 << 60), i64::MAX - 3] {
        let keys = crate::soundness::past_f64(base);
        let x =
            Tensor::<1, Int>::from_data(TensorData::new(keys.clone(), [5]), (&device, DType::I64));
        assert_eq!(x.dtype(), DType::I64, "the keys stay i64");
        let wide: Vec<i128> = keys.iter().map(|&k| i128::from(k)).collect();
        crate::soundness::check_exact_order(x, &wide, &format!("ndarray i64 base {base}"));
    }
}
