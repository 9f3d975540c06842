//! Tensor-level functions with Burn's names: what a model calls.

use burn::backend::{Dispatch, DispatchTensor};
use burn::tensor::{Bool, Float, Int, IntDType, Shape, Tensor, kind::Basic, try_read_sync};

use crate::SieveOps;

/// Tensor kinds sieve's numeric ops accept (Float and Int), routing each to its backend op.
pub trait SieveKind: Basic {
    #[doc(hidden)]
    fn cumsum(x: DispatchTensor, dim: usize) -> DispatchTensor;
    #[doc(hidden)]
    fn compact(
        x: DispatchTensor,
        mask: DispatchTensor,
        per_row: bool,
        pad: bool,
        index_dtype: IntDType,
    ) -> (DispatchTensor, DispatchTensor);
    #[doc(hidden)]
    fn prefix(x: DispatchTensor, len: usize) -> DispatchTensor;
}

impl SieveKind for Float {
    fn cumsum(x: DispatchTensor, dim: usize) -> DispatchTensor {
        <Dispatch as SieveOps>::sieve_float_cumsum(x, dim)
    }
    fn compact(
        x: DispatchTensor,
        mask: DispatchTensor,
        per_row: bool,
        pad: bool,
        index_dtype: IntDType,
    ) -> (DispatchTensor, DispatchTensor) {
        <Dispatch as SieveOps>::sieve_float_compact(x, mask, per_row, pad, index_dtype)
    }
    fn prefix(x: DispatchTensor, len: usize) -> DispatchTensor {
        <Dispatch as SieveOps>::sieve_float_prefix(x, len)
    }
}

impl SieveKind for Int {
    fn cumsum(x: DispatchTensor, dim: usize) -> DispatchTensor {
        <Dispatch as SieveOps>::sieve_int_cumsum(x, dim)
    }
    fn compact(
        x: DispatchTensor,
        mask: DispatchTensor,
        per_row: bool,
        pad: bool,
        index_dtype: IntDType,
    ) -> (DispatchTensor, DispatchTensor) {
        <Dispatch as SieveOps>::sieve_int_compact(x, mask, per_row, pad, index_dtype)
    }
    fn prefix(x: DispatchTensor, len: usize) -> DispatchTensor {
        <Dispatch as SieveOps>::sieve_int_prefix(x, len)
    }
}

/// Inclusive running sum along `dim`: `out[.., i, ..] = sum(x[.., 0..=i, ..])`, like Burn's
/// `Tensor::cumsum` and `torch.cumsum`, on the device in O(n) (one or two passes over the
/// data). Any dim, any layout (views are read through a contiguous copy only when needed).
///
/// Floats sum in their own precision (f16 in f32), in a fixed order: the same input gives the
/// same bits on every run. Ints wrap on overflow. Differentiable: the gradient is the
/// reversed cumsum of the output gradient.
///
/// # Panics
/// If `dim >= D`.
pub fn cumsum<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: usize) -> Tensor<D, K> {
    assert!(
        dim < D,
        "cumsum: dim = {dim} is out of range for a tensor of rank {D} (expected 0..{D})"
    );
    Tensor::from_dispatch(K::cumsum(x.into_dispatch(), dim))
}

/// The device's default index dtype (Burn's setting), which every index and count output uses.
fn index_dtype<const D: usize, K: Basic>(x: &Tensor<D, K>) -> IntDType {
    x.device().settings().int_dtype
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
/// `Tensor::mask_select` and `torch.masked_select`: on the device in one pass over the input
/// (two where cubes have no forward progress), and one read of the 4-byte count to size the
/// result. Float and Int; any rank; views. Differentiable for Float (the gradient lands on
/// the selected positions, zero elsewhere). Use [`mask_select_padded`] where a graph must not
/// wait for the device.
///
/// # Panics
/// If `mask`'s shape differs from `x`'s.
pub fn mask_select<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    mask: Tensor<D, Bool>,
) -> Tensor<1, K> {
    try_read_sync(mask_select_async(x, mask))
        .expect("mask_select: the count could not be read synchronously; use mask_select_async")
}

/// [`mask_select`] that awaits the count read instead of blocking (for wasm and async code).
pub async fn mask_select_async<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    mask: Tensor<D, Bool>,
) -> Tensor<1, K> {
    check_mask_shape("mask_select", &x.shape(), &mask.shape());
    let it = index_dtype(&x);
    let (values, count) = K::compact(x.into_dispatch(), mask.into_dispatch(), false, false, it);
    let values = Tensor::<1, K>::from_dispatch(values);
    let n = read_count(Tensor::from_dispatch(count)).await;
    first(values, n)
}

/// The first `n` elements of a compaction's output, without copying them where the backend
/// can (Burn's `narrow` copies on the cube backends, and refuses length 0).
fn first<K: SieveKind>(t: Tensor<1, K>, n: usize) -> Tensor<1, K> {
    Tensor::from_dispatch(K::prefix(t.into_dispatch(), n))
}

/// [`mask_select`] without waiting for the device: the selected values first, in row-major
/// order, then zeros up to `x`'s element count; and the count as a `[1]` Int tensor. Shapes
/// never depend on data, so graphs (and Fusion) keep flowing.
///
/// # Panics
/// If `mask`'s shape differs from `x`'s.
pub fn mask_select_padded<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    mask: Tensor<D, Bool>,
) -> (Tensor<1, K>, Tensor<1, Int>) {
    check_mask_shape("mask_select_padded", &x.shape(), &mask.shape());
    let it = index_dtype(&x);
    let (values, count) = K::compact(x.into_dispatch(), mask.into_dispatch(), false, true, it);
    (Tensor::from_dispatch(values), Tensor::from_dispatch(count))
}

/// Per-row compaction without waiting for the device: row `r` of the result holds the
/// elements of `x[r]` where `mask[r]` is true, in order, then zeros; the counts are `[rows]`.
/// To gather something else by the same mask (boxes by their scores, say), compact
/// `Tensor::arange` rows the same way and use the result as indices.
///
/// # Panics
/// If `mask`'s shape differs from `x`'s.
pub fn compact_rows<K: SieveKind>(
    x: Tensor<2, K>,
    mask: Tensor<2, Bool>,
) -> (Tensor<2, K>, Tensor<1, Int>) {
    check_mask_shape("compact_rows", &x.shape(), &mask.shape());
    let it = index_dtype(&x);
    let (values, counts) = K::compact(x.into_dispatch(), mask.into_dispatch(), true, true, it);
    (Tensor::from_dispatch(values), Tensor::from_dispatch(counts))
}

/// The coordinates of the true elements of `mask`, one row per element in row-major order,
/// `[count, D]`, like Burn's `Tensor::argwhere` and `torch.argwhere`. One pass over the mask
/// and one read of the count; Int of the device's default int dtype.
pub fn argwhere<const D: usize>(mask: Tensor<D, Bool>) -> Tensor<2, Int> {
    try_read_sync(argwhere_async(mask))
        .expect("argwhere: the count could not be read synchronously; use argwhere_async")
}

/// [`argwhere`] that awaits the count read instead of blocking.
pub async fn argwhere_async<const D: usize>(mask: Tensor<D, Bool>) -> Tensor<2, Int> {
    let shape = mask.shape();
    let it = index_dtype(&mask);
    let (positions, count) = <Dispatch as SieveOps>::sieve_bool_argwhere(mask.into_dispatch(), it);
    let n = read_count(Tensor::from_dispatch(count)).await;
    let positions = first(Tensor::<1, Int>::from_dispatch(positions), n);
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
pub fn nonzero<const D: usize>(mask: Tensor<D, Bool>) -> Vec<Tensor<1, Int>> {
    try_read_sync(nonzero_async(mask))
        .expect("nonzero: the count could not be read synchronously; use nonzero_async")
}

/// [`nonzero`] that awaits the count read instead of blocking.
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
