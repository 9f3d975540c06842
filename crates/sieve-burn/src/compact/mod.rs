//! Compaction and the stable split, on `sieve::compact`: [`mask_select`], [`argwhere`],
//! [`nonzero`] (each with an `_async` twin), [`mask_select_padded`], [`compact_rows`],
//! [`stable_partition`], [`split_by_bit`]; and what `unique` is made of: the run starts, and
//! its hash path (`sieve::distinct`, whose table's slots this engine compacts).

// The generated `Dispatch` impl names the deprecated NdArray and LibTorch backends.
#![cfg_attr(any(feature = "ndarray", feature = "tch"), allow(deprecated))]

mod autodiff;
#[cfg(feature = "cube")]
mod cube;

use burn::backend::{
    Dispatch,
    tensor::{BoolTensor, IntTensor},
};
use burn::tensor::{AsIndex, Bool, Int, IntDType, Shape, Tensor, try_read_sync};

use crate::fallback;
use crate::tensor::*;
use crate::values::Values;

extension_trait! {
    /// Compaction, run starts and the stable split. One method per op, Float and Int operands
    /// as one [`Values`]; default bodies are the stock-Burn fallbacks (`fallback.rs`).
    pub trait CompactOps {
        /// Compaction with a static output shape. `per_row == false`: the whole tensor in
        /// row-major order, values `[numel]`, count `[1]`. `per_row == true`: `x` is `[rows, n]`,
        /// each row compacted on its own, values `[rows, n]`, counts `[rows]`. Survivors come
        /// first, in input order; after them zeros when `pad`, else unspecified values. Counts
        /// have dtype `index_dtype`. `mask` has `x`'s shape.
        #[fusion(meta = meta::compact)]
        fn sieve_compact(
            #[extension_type] x: Values<Self>,
            mask: BoolTensor<Self>,
            per_row: bool,
            pad: bool,
            index_dtype: IntDType,
        ) -> (Values<Self>, IntTensor<Self>) {
            // The fallback always pads (`pad == false` leaves the tail unspecified).
            let _ = pad;
            fallback::compact::<Self>(x, mask, per_row, index_dtype)
        }

        /// Step one of [`mask_select`]: the survivor count of the flat `x` by `mask` (same
        /// shape), `[1]` of `index_dtype`, and the workspace step two reads (its tiles'
        /// offsets). Nothing waits; the caller reads the count, then calls step two with it.
        #[fusion(meta = meta::count)]
        fn sieve_mask_select_count(
            #[extension_type] x: Values<Self>,
            mask: BoolTensor<Self>,
            index_dtype: IntDType,
        ) -> (IntTensor<Self>, IntTensor<Self>) {
            let _ = x;
            let count = fallback::mask_count::<Self>(mask, index_dtype);
            fallback::counted::<Self>(count, index_dtype)
        }

        /// Step two of [`mask_select`]: the elements of the flat `x` where `mask` is true,
        /// `[count]` (`count` being step one's), from step one's `workspace`.
        #[fusion(meta = meta::mask_select)]
        fn sieve_mask_select(
            #[extension_type] x: Values<Self>,
            mask: BoolTensor<Self>,
            workspace: IntTensor<Self>,
            count: usize,
            index_dtype: IntDType,
        ) -> Values<Self> {
            let _ = workspace;
            let (values, _) = fallback::compact::<Self>(x, mask, false, index_dtype);
            values.slice(&[fallback::prefix_slice(count)])
        }

        /// Step one of [`argwhere`]: the count of true elements of `mask`, `[1]` of
        /// `index_dtype`, and step two's workspace.
        #[fusion(meta = meta::argwhere_count)]
        fn sieve_argwhere_count(
            mask: BoolTensor<Self>,
            index_dtype: IntDType,
        ) -> (IntTensor<Self>, IntTensor<Self>) {
            let count = fallback::mask_count::<Self>(mask, index_dtype);
            fallback::counted::<Self>(count, index_dtype)
        }

        /// Step two of [`argwhere`]: the row-major positions of the true elements of `mask`,
        /// `[count]` of `index_dtype`.
        #[fusion(meta = meta::argwhere)]
        fn sieve_argwhere(
            mask: BoolTensor<Self>,
            workspace: IntTensor<Self>,
            count: usize,
            index_dtype: IntDType,
        ) -> IntTensor<Self> {
            let _ = workspace;
            let (positions, _) = fallback::argwhere::<Self>(mask, index_dtype);
            Self::int_slice(positions, &[fallback::prefix_slice(count)])
        }

        /// Step one of the run starts (`unique`): how many elements of the flat `x` start a
        /// run of equal elements (NaNs equal to each other, -0.0 equal to +0.0), `[1]` of
        /// `index_dtype`, and step two's workspace.
        #[fusion(meta = meta::count_runs)]
        fn sieve_run_starts_count(
            #[extension_type] x: Values<Self>,
            index_dtype: IntDType,
        ) -> (IntTensor<Self>, IntTensor<Self>) {
            let count = fallback::run_count::<Self>(x, index_dtype);
            fallback::counted::<Self>(count, index_dtype)
        }

        /// Step two of the run starts: the first element of every run, in order, `[count]`,
        /// and their row-major positions (`[count]` of `index_dtype` when `positions`, else
        /// `[0]`).
        #[fusion(meta = meta::run_starts)]
        fn sieve_run_starts(
            #[extension_type] x: Values<Self>,
            workspace: IntTensor<Self>,
            count: usize,
            positions: bool,
            index_dtype: IntDType,
        ) -> (Values<Self>, IntTensor<Self>) {
            let _ = workspace;
            let (values, at, _) = fallback::run_starts::<Self>(x, positions, index_dtype);
            let first = [fallback::prefix_slice(count)];
            let at = if positions { Self::int_slice(at, &first) } else { at };
            (values.slice(&first), at)
        }

        /// Step one of `unique`'s hash path (`sieve::distinct`): how many distinct values the
        /// flat `x` holds (sieve's order: NaNs one value, the zeros one), `[1]` of
        /// `index_dtype`, or 0 where the path gave up (a crowded table) or the backend has
        /// none (then the caller sorts); and step two's workspace.
        #[fusion(meta = meta::count_distinct)]
        fn sieve_distinct_count(
            #[extension_type] x: Values<Self>,
            index_dtype: IntDType,
        ) -> (IntTensor<Self>, IntTensor<Self>) {
            // No hash path: a count of 0 sends the caller to the sort.
            let device = x.device();
            let none = Self::int_zeros(Shape::new([1]), &device, index_dtype);
            fallback::counted::<Self>(none, index_dtype)
        }

        /// Step two of the hash path: the `count` distinct values of the flat `x` (step one's
        /// count, not 0), ascending, each group's first element in row order.
        #[fusion(meta = meta::distinct)]
        fn sieve_distinct(
            #[extension_type] x: Values<Self>,
            workspace: IntTensor<Self>,
            count: usize,
            index_dtype: IntDType,
        ) -> Values<Self> {
            // The fallback's step one sends every caller to the sort; this is what the sort
            // path gives, for a caller that comes with a count of its own.
            let _ = workspace;
            let n = x.shape().num_elements();
            let flat = x.reshape(Shape::new([n]));
            let sorted = fallback::sort_with_indices::<Self>(flat, 0, false, index_dtype).0;
            let (values, _, _) = fallback::run_starts::<Self>(sorted, false, index_dtype);
            values.slice(&[fallback::prefix_slice(count)])
        }

        /// Stable partition of every row along `dim`: the elements where `mask` is true first,
        /// then the rest, each in input order; their source indices along `dim`; and each row's
        /// selected count (size 1 along `dim`). Indices and counts have dtype `index_dtype`.
        #[fusion(meta = meta::partition)]
        fn sieve_partition(
            #[extension_type] x: Values<Self>,
            mask: BoolTensor<Self>,
            dim: usize,
            index_dtype: IntDType,
        ) -> (Values<Self>, IntTensor<Self>, IntTensor<Self>) {
            fallback::partition::<Self>(x, mask, dim, index_dtype)
        }

        /// The one-bit split along `dim`: keys whose bit `bit` is 0 first, then those where it is
        /// 1, each in input order; source indices; the per-row count of zeros (size 1 along `dim`).
        #[fusion(meta = meta::split_by_bit)]
        fn sieve_int_split_by_bit(
            keys: IntTensor<Self>,
            bit: u32,
            dim: usize,
            index_dtype: IntDType,
        ) -> (IntTensor<Self>, IntTensor<Self>, IntTensor<Self>) {
            fallback::split_by_bit::<Self>(keys, bit, dim, index_dtype)
        }
    }
}

/// Output specs of the ops with tuple outputs, for Fusion (which records them before the
/// kernel runs). They must match what the backends return; nothing checks it.
mod meta {
    use burn::backend::fusion::custom::TensorSpec;
    use burn::tensor::{IntDType, Shape};

    use super::{compact_shapes, counts_shape};
    use crate::values::ValuesMetadata;

    /// Compacted values (`x`'s dtype) and counts.
    pub(super) fn compact(
        x: &ValuesMetadata,
        _mask: &TensorSpec,
        per_row: &bool,
        _pad: &bool,
        index_dtype: &IntDType,
    ) -> (ValuesMetadata, TensorSpec) {
        let spec = x.spec();
        let (values, counts) = compact_shapes(&spec.shape, *per_row);
        (
            x.with(TensorSpec::new(values, spec.dtype)),
            TensorSpec::new(counts, (*index_dtype).into()),
        )
    }

    /// A counted compaction's workspace ([`super::counted_workspace_len`]) and its count
    /// `[1]`, both `index_dtype`.
    fn counted(elements: usize, runs: bool, index_dtype: &IntDType) -> (TensorSpec, TensorSpec) {
        let len = super::counted_workspace_len(elements, runs);
        (
            TensorSpec::new(Shape::new([len]), (*index_dtype).into()),
            TensorSpec::new(Shape::new([1]), (*index_dtype).into()),
        )
    }

    pub(super) fn count(
        x: &ValuesMetadata,
        _mask: &TensorSpec,
        index_dtype: &IntDType,
    ) -> (TensorSpec, TensorSpec) {
        counted(x.spec().shape.num_elements(), false, index_dtype)
    }

    pub(super) fn argwhere_count(
        mask: &TensorSpec,
        index_dtype: &IntDType,
    ) -> (TensorSpec, TensorSpec) {
        counted(mask.shape.num_elements(), false, index_dtype)
    }

    pub(super) fn count_runs(
        x: &ValuesMetadata,
        index_dtype: &IntDType,
    ) -> (TensorSpec, TensorSpec) {
        counted(x.spec().shape.num_elements(), true, index_dtype)
    }

    /// `[count]` of `x`'s kind and dtype.
    pub(super) fn mask_select(
        x: &ValuesMetadata,
        _mask: &TensorSpec,
        _workspace: &TensorSpec,
        count: &usize,
        _index_dtype: &IntDType,
    ) -> ValuesMetadata {
        x.with(TensorSpec::new(Shape::new([*count]), x.spec().dtype))
    }

    /// Positions `[count]`.
    pub(super) fn argwhere(
        _mask: &TensorSpec,
        _workspace: &TensorSpec,
        count: &usize,
        index_dtype: &IntDType,
    ) -> TensorSpec {
        TensorSpec::new(Shape::new([*count]), (*index_dtype).into())
    }

    /// Run starts' values `[count]` (`x`'s dtype) and positions (`[count]`, or `[0]` when not
    /// asked for).
    pub(super) fn run_starts(
        x: &ValuesMetadata,
        _workspace: &TensorSpec,
        count: &usize,
        positions: &bool,
        index_dtype: &IntDType,
    ) -> (ValuesMetadata, TensorSpec) {
        (
            x.with(TensorSpec::new(Shape::new([*count]), x.spec().dtype)),
            TensorSpec::new(
                Shape::new([if *positions { *count } else { 0 }]),
                (*index_dtype).into(),
            ),
        )
    }

    /// The hash path's workspace ([`super::distinct_workspace_len`]) and its count `[1]`.
    pub(super) fn count_distinct(
        x: &ValuesMetadata,
        index_dtype: &IntDType,
    ) -> (TensorSpec, TensorSpec) {
        let len = super::distinct_workspace_len(x.spec().shape.num_elements(), index_dtype);
        (
            TensorSpec::new(Shape::new([len]), (*index_dtype).into()),
            TensorSpec::new(Shape::new([1]), (*index_dtype).into()),
        )
    }

    /// The distinct values, `[count]` of `x`'s kind and dtype.
    pub(super) fn distinct(
        x: &ValuesMetadata,
        _workspace: &TensorSpec,
        count: &usize,
        _index_dtype: &IntDType,
    ) -> ValuesMetadata {
        x.with(TensorSpec::new(Shape::new([*count]), x.spec().dtype))
    }

    /// Partitioned values (`x`'s shape and dtype), indices (`x`'s shape) and counts (size 1 along
    /// `dim`).
    pub(super) fn partition(
        x: &ValuesMetadata,
        _mask: &TensorSpec,
        dim: &usize,
        index_dtype: &IntDType,
    ) -> (ValuesMetadata, TensorSpec, TensorSpec) {
        let (values, indices, counts) = split_specs(x.spec(), *dim, index_dtype);
        (x.with(values), indices, counts)
    }

    /// As [`partition`], for the one-bit split.
    pub(super) fn split_by_bit(
        keys: &TensorSpec,
        _bit: &u32,
        dim: &usize,
        index_dtype: &IntDType,
    ) -> (TensorSpec, TensorSpec, TensorSpec) {
        split_specs(keys, *dim, index_dtype)
    }

    fn split_specs(
        x: &TensorSpec,
        dim: usize,
        index_dtype: &IntDType,
    ) -> (TensorSpec, TensorSpec, TensorSpec) {
        (
            x.clone(),
            TensorSpec::new(x.shape.clone(), (*index_dtype).into()),
            TensorSpec::new(counts_shape(&x.shape, dim), (*index_dtype).into()),
        )
    }
}

fn check_mask_shape(op: &str, x: &Shape, mask: &Shape) {
    assert!(
        x == mask,
        "{op}: mask shape {mask:?} must equal the input shape {x:?}"
    );
}

/// Reads a `[1]` count: the one 4- or 8-byte device read a data-dependent size costs.
async fn read_count(count: Tensor<1, Int>) -> usize {
    let n: i64 = count
        .into_scalar_async::<i64>()
        .await
        .unwrap_or_else(|e| panic!("reading the survivor count failed: {e:?}"));
    n as usize
}

/// The elements of `x` where `mask` is true, in row-major order, like Burn's
/// `Tensor::mask_select` and `torch.masked_select`: on the device, the survivors counted, the
/// count read (the one wait), then written into a result of exactly that size (which holds
/// no more memory than it shows). Float and Int; any rank; views. Differentiable for Float (the gradient lands on
/// the selected positions, zero elsewhere). Use [`mask_select_padded`] where a graph must not
/// wait for the device.
///
/// # Panics
/// If `mask`'s shape differs from `x`'s.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let x = Tensor::<2>::from_data([[0.9, 0.2], [0.1, 0.8]], &device);
/// let picked = sieve_burn::mask_select(x.clone(), x.greater_elem(0.5));
/// assert_eq!(f(picked), [0.9, 0.8]);
/// ```
pub fn mask_select<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    mask: Tensor<D, Bool>,
) -> Tensor<1, K> {
    try_read_sync(mask_select_async(x, mask))
        .expect("mask_select: the count could not be read synchronously; use mask_select_async")
}

/// [`mask_select`] that awaits the count read instead of blocking (for wasm and async code).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// async fn large(x: Tensor<1>) -> Tensor<1> {
///     sieve_burn::mask_select_async(x.clone(), x.greater_elem(1.0)).await
/// }
/// let x = Tensor::<1>::from_data([2.0, 0.5, 3.0], &device);
/// // Any executor drives it; Burn's `try_read_sync` does on native backends.
/// let picked = burn::tensor::try_read_sync(large(x)).unwrap();
/// assert_eq!(f(picked), [2.0, 3.0]);
/// ```
pub async fn mask_select_async<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    mask: Tensor<D, Bool>,
) -> Tensor<1, K> {
    check_mask_shape("mask_select", &x.shape(), &mask.shape());
    check_served("mask_select", &x, DtypeUse::Values);
    let it = index_dtype(&x);
    let mask = mask.into_dispatch();
    let (workspace, count) =
        Dispatch::sieve_mask_select_count(operand(x.clone()), mask.clone(), it);
    let n = read_count(Tensor::from_dispatch(count)).await;
    from_values(Dispatch::sieve_mask_select(
        operand(x),
        mask,
        workspace,
        n,
        it,
    ))
}

/// The first element of every run of equal elements of `x` (NaNs equal, -0.0 == +0.0), in
/// order, and their positions in `x` when `positions`: a counted compaction by run starts
/// (one read of its count, outputs of exactly that size). Its caller (`sets::flat_groups`) has
/// refused a dtype the device lacks, naming the public op.
pub(crate) fn run_starts<K: SieveKind>(
    x: Tensor<1, K>,
    positions: bool,
) -> (Tensor<1, K>, Option<Tensor<1, Int>>) {
    let it = index_dtype(&x);
    let (workspace, count) = Dispatch::sieve_run_starts_count(operand(x.clone()), it);
    let n = try_read_sync(read_count(Tensor::from_dispatch(count)))
        .expect("unique: the count could not be read synchronously");
    let (values, at) = Dispatch::sieve_run_starts(operand(x), workspace, n, positions, it);
    let at = positions.then(|| Tensor::<1, Int>::from_dispatch(at));
    (from_values(values), at)
}

/// [`mask_select`] without waiting for the device: the selected values first, in row-major
/// order, then zeros up to `x`'s element count; and the count as a `[1]` Int tensor. Shapes
/// never depend on data, so graphs (and Fusion) keep flowing.
///
/// # Panics
/// If `mask`'s shape differs from `x`'s.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1>::from_data([2.0, 0.5, 3.0], &device);
/// let (values, count) = sieve_burn::mask_select_padded(x.clone(), x.greater_elem(1.0));
/// assert_eq!(f(values), [2.0, 3.0, 0.0]);
/// assert_eq!(i(count), [2]);
/// ```
pub fn mask_select_padded<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    mask: Tensor<D, Bool>,
) -> (Tensor<1, K>, Tensor<1, Int>) {
    check_mask_shape("mask_select_padded", &x.shape(), &mask.shape());
    check_served("mask_select_padded", &x, DtypeUse::Values);
    let it = index_dtype(&x);
    let (values, count) =
        Dispatch::sieve_compact(operand(x), mask.into_dispatch(), false, true, it);
    (from_values(values), Tensor::from_dispatch(count))
}

/// Per-row compaction without waiting for the device: row `r` of the result holds the
/// elements of `x[r]` where `mask[r]` is true, in order, then zeros; the counts are `[rows]`.
/// To gather something else by the same mask (boxes by their scores, say), compact
/// `Tensor::arange` rows the same way and use the result as indices.
///
/// # Panics
/// If `mask`'s shape differs from `x`'s.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<2>::from_data([[0.9, 0.2, 0.7], [0.1, 0.8, 0.3]], &device);
/// let (rows, counts) = sieve_burn::compact_rows(x.clone(), x.greater_elem(0.5));
/// let rows: Vec<f32> = rows.into_data().iter::<f32>().collect();
/// assert_eq!(rows, [0.9, 0.7, 0.0, 0.8, 0.0, 0.0]);
/// assert_eq!(i(counts), [2, 1]);
/// ```
pub fn compact_rows<K: SieveKind>(
    x: Tensor<2, K>,
    mask: Tensor<2, Bool>,
) -> (Tensor<2, K>, Tensor<1, Int>) {
    check_mask_shape("compact_rows", &x.shape(), &mask.shape());
    check_served("compact_rows", &x, DtypeUse::Values);
    let it = index_dtype(&x);
    let (values, counts) =
        Dispatch::sieve_compact(operand(x), mask.into_dispatch(), true, true, it);
    (from_values(values), Tensor::from_dispatch(counts))
}

/// The coordinates of the true elements of `mask`, one row per element in row-major order,
/// `[count, D]`, like Burn's `Tensor::argwhere` and `torch.argwhere`. One pass over the mask
/// and one read of the count; Int of the device's default int dtype.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let mask = Tensor::<2>::from_data([[1.0, 0.0], [0.0, 1.0]], &device).greater_elem(0.5);
/// let coords: Vec<i64> = sieve_burn::argwhere(mask).into_data().iter::<i64>().collect();
/// assert_eq!(coords, [0, 0, 1, 1]); // [[0, 0], [1, 1]]
/// ```
pub fn argwhere<const D: usize>(mask: Tensor<D, Bool>) -> Tensor<2, Int> {
    try_read_sync(argwhere_async(mask))
        .expect("argwhere: the count could not be read synchronously; use argwhere_async")
}

/// [`argwhere`] that awaits the count read instead of blocking.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let mask = Tensor::<1>::from_data([0.0, 1.0, 1.0], &device).greater_elem(0.5);
/// let coords = burn::tensor::try_read_sync(sieve_burn::argwhere_async(mask)).unwrap();
/// let coords: Vec<i64> = coords.into_data().iter::<i64>().collect();
/// assert_eq!(coords, [1, 2]); // [[1], [2]]
/// ```
pub async fn argwhere_async<const D: usize>(mask: Tensor<D, Bool>) -> Tensor<2, Int> {
    let shape = mask.shape();
    let it = index_dtype(&mask);
    let mask = mask.into_dispatch();
    let (workspace, count) = <Dispatch as CompactOps>::sieve_argwhere_count(mask.clone(), it);
    let n = read_count(Tensor::from_dispatch(count)).await;
    let positions =
        Tensor::<1, Int>::from_dispatch(Dispatch::sieve_argwhere(mask, workspace, n, it));
    if D == 1 || n == 0 {
        return positions.reshape([n, D]);
    }
    // Row-major position -> coordinates: coordinate d is (position / stride_d) % shape_d.
    let mut coordinates = Vec::with_capacity(D);
    let mut stride = shape.num_elements();
    for d in 0..D {
        stride /= shape[d].max(1);
        let c = positions.clone().div_scalar(stride.max(1) as i64);
        coordinates.push(c.remainder_scalar(shape[d].max(1) as i64).reshape([n, 1]));
    }
    Tensor::cat(coordinates, 1)
}

/// One Int tensor per dimension of `mask` with the coordinates of its true elements, like
/// Burn's `Tensor::nonzero` (and, like it, an empty `Vec` when nothing is true).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let mask = Tensor::<2>::from_data([[1.0, 0.0], [0.0, 1.0]], &device).greater_elem(0.5);
/// let [rows, cols]: [Tensor<1, Int>; 2] = sieve_burn::nonzero(mask).try_into().unwrap();
/// assert_eq!((i(rows), i(cols)), (vec![0, 1], vec![0, 1]));
/// ```
pub fn nonzero<const D: usize>(mask: Tensor<D, Bool>) -> Vec<Tensor<1, Int>> {
    try_read_sync(nonzero_async(mask))
        .expect("nonzero: the count could not be read synchronously; use nonzero_async")
}

/// [`nonzero`] that awaits the count read instead of blocking.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let mask = Tensor::<1>::from_data([0.0, 1.0, 1.0], &device).greater_elem(0.5);
/// let found = burn::tensor::try_read_sync(sieve_burn::nonzero_async(mask)).unwrap();
/// assert_eq!(i(found[0].clone()), [1, 2]);
/// ```
pub async fn nonzero_async<const D: usize>(mask: Tensor<D, Bool>) -> Vec<Tensor<1, Int>> {
    let coordinates = argwhere_async(mask).await;
    let [n, _] = coordinates.dims();
    if n == 0 {
        return Vec::new();
    }
    (0..D)
        .map(|d| coordinates.clone().narrow(1, d, 1).reshape([n]))
        .collect()
}

/// Stable partition along `dim`: in every row along `dim`, the elements where `mask` is true
/// first, then the others, **both in input order** (CUB's `DevicePartition` reverses the
/// rejected half; this does not). Returns the partitioned values, the source index of each
/// output element along `dim`, and each row's number of selected elements (size 1 along
/// `dim`). Float and Int; any dim; views. Differentiable for Float (the gradient is scattered
/// back through the permutation). No host read.
///
/// # Panics
/// If `dim` is not in `-D..D` (negative dims count from the end; Burn's message), or `mask`'s
/// shape differs from `x`'s.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1>::from_data([5.0, 1.0, 7.0, 2.0], &device);
/// let (values, indices, count) = sieve_burn::stable_partition(x.clone(), x.greater_elem(4.0), 0);
/// assert_eq!(f(values), [5.0, 7.0, 1.0, 2.0]); // selected first, then the rest, in order
/// assert_eq!(i(indices), [0, 2, 1, 3]);
/// assert_eq!(i(count), [2]);
/// ```
pub fn stable_partition<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    mask: Tensor<D, Bool>,
    dim: impl AsIndex,
) -> (Tensor<D, K>, Tensor<D, Int>, Tensor<D, Int>) {
    let dim = dim_index("Stable Partition", dim, D);
    check_mask_shape("stable_partition", &x.shape(), &mask.shape());
    check_served("stable_partition", &x, DtypeUse::Values);
    let it = index_dtype(&x);
    let (values, indices, counts) =
        Dispatch::sieve_partition(operand(x), mask.into_dispatch(), dim, it);
    (
        from_values(values),
        Tensor::from_dispatch(indices),
        Tensor::from_dispatch(counts),
    )
}

/// The one-bit split along `dim` (the radix sort's step): keys whose bit `bit` is 0 first,
/// then those where it is 1, both in input order; source indices along `dim`; and each row's
/// number of zeros (size 1 along `dim`). Bits are read from the two's-complement pattern.
///
/// # Panics
/// If `dim` is not in `-D..D` (negative dims count from the end; Burn's message), or `bit` is
/// not below the key dtype's width.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let keys = Tensor::<1, Int>::from_data([3, 2, 5, 4], &device);
/// let (keys, indices, zeros) = sieve_burn::split_by_bit(keys, 0, 0);
/// assert_eq!(i(keys), [2, 4, 3, 5]); // bit 0 clear first, in order
/// assert_eq!(i(indices), [1, 3, 0, 2]);
/// assert_eq!(i(zeros), [2]);
/// ```
pub fn split_by_bit<const D: usize>(
    keys: Tensor<D, Int>,
    bit: u32,
    dim: impl AsIndex,
) -> (Tensor<D, Int>, Tensor<D, Int>, Tensor<D, Int>) {
    let dim = dim_index("Split By Bit", dim, D);
    check_served("split_by_bit", &keys, DtypeUse::Values);
    let width = 8 * keys.dtype().size() as u32;
    assert!(
        bit < width,
        "split_by_bit: bit = {bit} is out of range for {:?} keys (expected 0..{width})",
        keys.dtype()
    );
    let it = index_dtype(&keys);
    let (values, indices, counts) =
        <Dispatch as CompactOps>::sieve_int_split_by_bit(keys.into_dispatch(), bit, dim, it);
    (
        Tensor::from_dispatch(values),
        Tensor::from_dispatch(indices),
        Tensor::from_dispatch(counts),
    )
}

/// Elements of a counted compaction's workspace for `len` elements, as Fusion declares it
/// (`meta::counted`) and the CubeCL op allocates it (`cube::Counted::count`):
/// `sieve::compact::counted_workspace` (enough at default tiles on any device), or
/// `counted_workspace_with_words` for run starts (`runs`), whose count pass leaves its flags
/// as words.
pub(crate) fn counted_workspace_len(len: usize, runs: bool) -> usize {
    if runs {
        sieve::compact::counted_workspace_with_words(len)
    } else {
        sieve::compact::counted_workspace(len)
    }
}

/// Elements of `index_dtype` that hold the hash path's workspace for `len` elements
/// (`sieve::distinct::distinct_workspace` words at the default options), as Fusion declares
/// it and the CubeCL op allocates it.
pub(crate) fn distinct_workspace_len(len: usize, index_dtype: &IntDType) -> usize {
    let words = sieve::distinct::distinct_workspace(len, Default::default());
    match index_dtype {
        IntDType::I64 | IntDType::U64 => words.div_ceil(2),
        _ => words,
    }
}

/// The distinct values of the flat `x` by the hash path, or `None` where it gave up or does
/// not serve `x` (a dtype other than f32, i32 and u32, or `u32::MAX` elements or more): then
/// the caller sorts. One count read. Its caller has refused a dtype the device lacks.
pub(crate) fn distinct<K: SieveKind>(x: Tensor<1, K>) -> Option<Tensor<1, K>> {
    let [n] = x.dims();
    let served = matches!(
        x.dtype(),
        burn::tensor::DType::F32 | burn::tensor::DType::I32 | burn::tensor::DType::U32
    );
    if !served || n == 0 || n >= u32::MAX as usize {
        return None;
    }
    let it = index_dtype(&x);
    let (workspace, count) = Dispatch::sieve_distinct_count(operand(x.clone()), it);
    let m = try_read_sync(read_count(Tensor::from_dispatch(count)))
        .expect("unique: the count could not be read synchronously");
    (m > 0).then(|| from_values(Dispatch::sieve_distinct(operand(x), workspace, m, it)))
}

/// Shapes of compacted values and counts for an input of `shape`.
pub(crate) fn compact_shapes(shape: &Shape, per_row: bool) -> (Shape, Shape) {
    if per_row {
        (shape.clone(), Shape::new([shape[0]]))
    } else {
        (Shape::new([shape.num_elements()]), Shape::new([1]))
    }
}

/// `shape` with `dim` reduced to 1: the per-row counts of a split along `dim`.
pub(crate) fn counts_shape(shape: &Shape, dim: usize) -> Shape {
    let mut counts = shape.clone();
    counts[dim] = 1;
    counts
}
