//! Tensor-level functions with Burn's names: what a model calls.

use burn::backend::{Dispatch, DispatchTensor};
use burn::tensor::{
    AsIndex, Bool, Float, Int, IntDType, Shape, Tensor, kind::Basic, try_read_sync,
};

use crate::SieveOps;
use crate::values::Values;
use sieve::scan::ScanOp;

/// Tensor kinds sieve's numeric ops accept (Float and Int): each is one [`Values`] variant,
/// the operand of the ops that serve both.
pub trait SieveKind: Basic {
    /// `x` as the ops' operand.
    #[doc(hidden)]
    fn values(x: DispatchTensor) -> Values<Dispatch>;
}

impl SieveKind for Float {
    fn values(x: DispatchTensor) -> Values<Dispatch> {
        Values::Float(x)
    }
}

impl SieveKind for Int {
    fn values(x: DispatchTensor) -> Values<Dispatch> {
        Values::Int(x)
    }
}

/// `x` as the ops' operand.
pub(crate) fn operand<const D: usize, K: SieveKind>(x: Tensor<D, K>) -> Values<Dispatch> {
    K::values(x.into_dispatch())
}

/// An op's value output as a tensor of the operand's kind.
pub(crate) fn from_values<const D: usize, K: SieveKind>(x: Values<Dispatch>) -> Tensor<D, K> {
    Tensor::from_dispatch(x.into_dispatch())
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
/// If `dim` is not in `-D..D` (negative dims count from the end; Burn's message).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1, Int>::from_data([1, 0, 2, 3], &device);
/// assert_eq!(i(sieve_burn::cumsum(x.clone(), 0)), [1, 1, 3, 6]);
/// assert_eq!(i(sieve_burn::cumsum(x, -1)), [1, 1, 3, 6]); // negative dims count from the end
/// ```
pub fn cumsum<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: impl AsIndex) -> Tensor<D, K> {
    let dim = dim_index("Cumsum", dim, D);
    check_served("cumsum", &x, DtypeUse::Values);
    from_values(Dispatch::sieve_cumulative(operand(x), dim, ScanOp::Sum))
}

/// Inclusive running product along `dim`: `out[.., i, ..] = x[.., 0, ..] * ... * x[.., i, ..]`,
/// like Burn's `Tensor::cumprod` and `torch.cumprod`, on the device in O(n) (the cumsum's
/// scan with a product). Float and Int; any dim, any layout; views.
///
/// Ints wrap on overflow (two's complement). Floats multiply in their own precision (f16 in
/// f32), rounding each product as IEEE does (`0 * inf` is NaN), in a fixed order: the same
/// bits on every run, equal to the sequential product wherever every partial product is
/// exact. Differentiable, exactly where the input has zeros (PyTorch's `cumprod_backward`).
///
/// # Panics
/// If `dim` is not in `-D..D` (negative dims count from the end; Burn's message).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1, Int>::from_data([2, 3, -1, 4], &device);
/// assert_eq!(i(sieve_burn::cumprod(x, -1)), [2, 6, -6, -24]);
/// ```
pub fn cumprod<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: impl AsIndex) -> Tensor<D, K> {
    let dim = dim_index("Cumprod", dim, D);
    check_served("cumprod", &x, DtypeUse::Values);
    from_values(Dispatch::sieve_cumulative(operand(x), dim, ScanOp::Prod))
}

/// Running minimum along `dim`: `out[.., i, ..] = min(x[.., 0..=i, ..])`, like Burn's
/// `Tensor::cummin` and the values of `torch.cummin`, on the device in O(n). Float and Int;
/// any dim, any layout; views.
///
/// Once a lane meets a NaN every later output is NaN (Burn's and PyTorch's rule). Outputs are
/// input values moved bit for bit; of equal values the latest is kept (PyTorch's rule: so
/// -0.0 and +0.0 come out as the latest of them, and after NaNs the latest NaN).
/// Differentiable: each output's gradient goes to the position it came from (the latest
/// position holding the running minimum, or the latest NaN: PyTorch's indices).
///
/// # Panics
/// If `dim` is not in `-D..D` (negative dims count from the end; Burn's message).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<2>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let x = Tensor::<2>::from_data([[3.0, 5.0, 2.0], [4.0, 1.0, 6.0]], &device);
/// assert_eq!(f(sieve_burn::cummin(x.clone(), 1)), [3.0, 3.0, 2.0, 4.0, 1.0, 1.0]);
/// assert_eq!(f(sieve_burn::cummin(x, 0)), [3.0, 5.0, 2.0, 3.0, 1.0, 2.0]);
/// ```
pub fn cummin<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: impl AsIndex) -> Tensor<D, K> {
    let dim = dim_index("Cummin", dim, D);
    check_served("cummin", &x, DtypeUse::Values);
    from_values(Dispatch::sieve_cumulative(operand(x), dim, ScanOp::Min))
}

/// Running maximum along `dim`: `out[.., i, ..] = max(x[.., 0..=i, ..])`, like Burn's
/// `Tensor::cummax` and the values of `torch.cummax`; NaN, ties and gradients as
/// [`cummin`]'s.
///
/// # Panics
/// If `dim` is not in `-D..D` (negative dims count from the end; Burn's message).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let x = Tensor::<1>::from_data([1.0, 3.0, 2.0, f32::NAN, 5.0], &device);
/// let y = f(sieve_burn::cummax(x, 0));
/// assert_eq!(y[..3], [1.0, 3.0, 3.0]);
/// assert!(y[3].is_nan() && y[4].is_nan()); // a NaN sticks
/// ```
pub fn cummax<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: impl AsIndex) -> Tensor<D, K> {
    let dim = dim_index("Cummax", dim, D);
    check_served("cummax", &x, DtypeUse::Values);
    from_values(Dispatch::sieve_cumulative(operand(x), dim, ScanOp::Max))
}

/// The device's default index dtype (Burn's setting), which every index and count output uses.
pub(crate) fn index_dtype<const D: usize, K: Basic>(x: &Tensor<D, K>) -> IntDType {
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
    let (values, count) =
        Dispatch::sieve_compact(operand(x), mask.into_dispatch(), false, false, it);
    let values = from_values::<1, K>(values);
    let n = read_count(Tensor::from_dispatch(count)).await;
    first(values, n)
}

/// The first element of every run of equal elements of `x` (NaNs equal, -0.0 == +0.0), in
/// order, and their positions in `x` when `positions`: one compaction by run starts and one
/// read of its count.
pub(crate) fn run_starts<K: SieveKind>(
    x: Tensor<1, K>,
    positions: bool,
) -> (Tensor<1, K>, Option<Tensor<1, Int>>) {
    check_served("unique", &x, DtypeUse::Values);
    let it = index_dtype(&x);
    let (values, at, count) = Dispatch::sieve_run_starts(operand(x), positions, it);
    let n = try_read_sync(read_count(Tensor::from_dispatch(count)))
        .expect("unique: the count could not be read synchronously");
    let values = first(from_values::<1, K>(values), n);
    let at = positions.then(|| first(Tensor::<1, Int>::from_dispatch(at), n));
    (values, at)
}

/// The first `n` elements of a compaction's output, without copying them where the backend
/// can (Burn's `narrow` copies on the cube backends, and refuses length 0).
fn first<K: SieveKind>(t: Tensor<1, K>, n: usize) -> Tensor<1, K> {
    from_values(Dispatch::sieve_prefix(operand(t), n))
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

/// `dim` as Burn's ops take it (negative counts from the end) as a `usize` below `rank`: every
/// public op normalises its dim here, first. Out of range, it panics with the message Burn's op
/// of the same name gives (`op` is Burn's name for it; Burn's own helper is crate-private).
#[track_caller]
fn dim_index(op: &str, dim: impl AsIndex, rank: usize) -> usize {
    dim.try_dim_index(rank).unwrap_or_else(|error| {
        panic!("=== Tensor Operation Error ===\n  Operation: '{op}'\n  Reason:\n    1. {error} \n")
    })
}

/// How an op uses its tensor's dtype (what [`check_served`] checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DtypeUse {
    /// Scanned or moved as values: the device must have the dtype.
    Values,
    /// Sorted or selected as keys: 64-bit keys sort on every device.
    Keys,
}

/// Panics, naming the dtype and the device, when `x`'s CubeCL device cannot serve `x`'s dtype
/// for `op`: before anything is queued, where under Fusion the kernels' own refusal would
/// surface only when the result is read. Other backends serve every dtype (Burn's own ops).
#[cfg_attr(not(feature = "cube"), allow(unused_variables))]
fn check_served<const D: usize, K: SieveKind>(op: &str, x: &Tensor<D, K>, dtype_use: DtypeUse) {
    #[cfg(feature = "cube")]
    crate::cube::refuse_unserved_dtype(op, &x.device(), x.dtype(), dtype_use);
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
        <Dispatch as SieveOps>::sieve_int_split_by_bit(keys.into_dispatch(), bit, dim, it);
    (
        Tensor::from_dispatch(values),
        Tensor::from_dispatch(indices),
        Tensor::from_dispatch(counts),
    )
}

/// Sorts along `dim`, ascending, like Burn's `Tensor::sort` and `torch.sort`, on the device
/// (a radix sort; rows of up to a few thousand keys sort inside one cube). **Stable** (equal
/// keys keep their input order) and in PyTorch's float order (-0.0 == +0.0, NaN largest);
/// the values are the input's, moved bit for bit. Float and Int; any dim; views.
/// Differentiable for Float (the gradient is scattered back through the permutation).
///
/// # Panics
/// If `dim` is not in `-D..D` (negative dims count from the end; Burn's message), or, on the
/// cube backends, the device lacks the dtype (8-, 16- and 32-bit dtypes; 64-bit keys sort
/// everywhere): the message names the dtype and the device. Every Burn numeric dtype sorts.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let x = Tensor::<1>::from_data([3.0, f32::NAN, -0.0, 1.0, 0.0], &device);
/// let sorted = f(sieve_burn::sort(x, 0));
/// assert_eq!(sorted[..4], [-0.0, 0.0, 1.0, 3.0]); // -0.0 == +0.0: input order kept
/// assert!(sorted[4].is_nan()); // NaN sorts last
/// ```
pub fn sort<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: impl AsIndex) -> Tensor<D, K> {
    let dim = dim_index("Sort", dim, D);
    check_served("sort", &x, DtypeUse::Keys);
    let queued = Queued::of(&x);
    queued.dispatch(from_values(Dispatch::sieve_sort(operand(x), dim, false)))
}

/// [`sort`], descending (NaN first); equal keys still keep their input order.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let x = Tensor::<2>::from_data([[1.0, 3.0, 2.0]], &device);
/// assert_eq!(f(sieve_burn::sort_descending(x, 1).flatten(0, 1)), [3.0, 2.0, 1.0]);
/// ```
pub fn sort_descending<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    dim: impl AsIndex,
) -> Tensor<D, K> {
    let dim = dim_index("Sort Descending", dim, D);
    check_served("sort_descending", &x, DtypeUse::Keys);
    let queued = Queued::of(&x);
    queued.dispatch(from_values(Dispatch::sieve_sort(operand(x), dim, true)))
}

/// [`sort`] with each value's source index along `dim` (Int, the device's default int
/// dtype), like Burn's `Tensor::sort_with_indices`.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1>::from_data([2.0, 1.0, 2.0, 0.5], &device);
/// let (values, indices) = sieve_burn::sort_with_indices(x, 0);
/// assert_eq!(f(values), [0.5, 1.0, 2.0, 2.0]);
/// assert_eq!(i(indices), [3, 1, 0, 2]); // stable: the first 2.0 stays first
/// ```
pub fn sort_with_indices<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    dim: impl AsIndex,
) -> (Tensor<D, K>, Tensor<D, Int>) {
    let dim = dim_index("Sort With Indices", dim, D);
    check_served("sort_with_indices", &x, DtypeUse::Keys);
    sorted_with_indices(x, dim, false)
}

/// [`sort_with_indices`], descending.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1>::from_data([2.0, 1.0, 2.0, 0.5], &device);
/// let (values, indices) = sieve_burn::sort_descending_with_indices(x, 0);
/// assert_eq!(f(values), [2.0, 2.0, 1.0, 0.5]);
/// assert_eq!(i(indices), [0, 2, 1, 3]);
/// ```
pub fn sort_descending_with_indices<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    dim: impl AsIndex,
) -> (Tensor<D, K>, Tensor<D, Int>) {
    let dim = dim_index("Sort Descending With Indices", dim, D);
    check_served("sort_descending_with_indices", &x, DtypeUse::Keys);
    sorted_with_indices(x, dim, true)
}

fn sorted_with_indices<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    dim: usize,
    descending: bool,
) -> (Tensor<D, K>, Tensor<D, Int>) {
    let it = index_dtype(&x);
    let queued = Queued::of(&x);
    let (values, indices) = Dispatch::sieve_sort_with_indices(operand(x), dim, descending, it);
    queued.dispatch((from_values(values), Tensor::from_dispatch(indices)))
}

/// Sorts of at least this many elements are dispatched at once (`Device::flush`) instead of
/// waiting in Fusion's queue for the next sync, so the device starts on them while the host
/// queues what follows: at [16384, 128] the Burn op then took its raw call's time (0.081 ms
/// against 0.088-0.099 held; `bench/results/h200/19-g`). A flush costs the host a round trip to
/// Fusion's server, which the device time of smaller sorts may not hide: they stay queued.
const SORT_DISPATCH_MIN: usize = 1 << 20;

/// A sort's input size and device, taken before the input is consumed.
struct Queued {
    device: burn::tensor::Device,
    elements: usize,
}

impl Queued {
    fn of<const D: usize, K: SieveKind>(x: &Tensor<D, K>) -> Self {
        Queued {
            device: x.device(),
            elements: x.shape().num_elements(),
        }
    }

    /// Returns `out` after dispatching what Fusion holds, for sorts of at least
    /// [`SORT_DISPATCH_MIN`] elements (eager backends have nothing held).
    fn dispatch<T>(self, out: T) -> T {
        if self.elements >= SORT_DISPATCH_MIN {
            // A flush that fails leaves the error where the read that waits for the outputs
            // reports it; nothing is lost by going on.
            let _ = self.device.flush();
        }
        out
    }
}

/// The permutation that sorts `x` along `dim` (stable), like Burn's `Tensor::argsort`.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1, Int>::from_data([30, 10, 20], &device);
/// assert_eq!(i(sieve_burn::argsort(x, 0)), [1, 2, 0]);
/// ```
pub fn argsort<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: impl AsIndex) -> Tensor<D, Int> {
    let dim = dim_index("Argsort", dim, D);
    check_served("argsort", &x, DtypeUse::Keys);
    let it = index_dtype(&x);
    let queued = Queued::of(&x);
    queued.dispatch(Tensor::from_dispatch(Dispatch::sieve_argsort(
        operand(x),
        dim,
        false,
        it,
    )))
}

/// [`argsort`], descending (stable: ties in input order).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1, Int>::from_data([30, 10, 30], &device);
/// assert_eq!(i(sieve_burn::argsort_descending(x, 0)), [0, 2, 1]);
/// ```
pub fn argsort_descending<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    dim: impl AsIndex,
) -> Tensor<D, Int> {
    let dim = dim_index("Argsort Descending", dim, D);
    check_served("argsort_descending", &x, DtypeUse::Keys);
    let it = index_dtype(&x);
    let queued = Queued::of(&x);
    queued.dispatch(Tensor::from_dispatch(Dispatch::sieve_argsort(
        operand(x),
        dim,
        true,
        it,
    )))
}

/// How [`topk_with_options`] chooses: the `k` largest or smallest, in rank order or not, and
/// which of `sieve::topk`'s strategies (`Auto` by default).
#[derive(Debug, Clone, Copy)]
pub struct TopKOptions {
    /// `true`: the `k` largest (top-k); `false`: the `k` smallest (bottom-k).
    pub largest: bool,
    /// `true`: in rank order (the first `k` of a stable sort); `false`: the same set in an
    /// order of the strategy's choosing.
    pub sorted: bool,
    /// Which of `sieve::topk`'s algorithms runs on the cube backends (`Auto`: chosen from the
    /// row length, `k` and the device); the fallback backends ignore it.
    pub strategy: sieve::topk::TopkStrategy,
}

impl Default for TopKOptions {
    /// Largest, sorted, `Auto` (`torch.topk`'s defaults).
    fn default() -> Self {
        TopKOptions {
            largest: true,
            sorted: true,
            strategy: sieve::topk::TopkStrategy::Auto,
        }
    }
}

impl TopKOptions {
    fn strategy_index(&self) -> usize {
        sieve::topk::TopkStrategy::ALL
            .iter()
            .position(|&s| s == self.strategy)
            .expect("every strategy is in TopkStrategy::ALL")
    }
}

/// The `k` largest elements along `dim` and their indices, like Burn's
/// `Tensor::topk_with_indices`, with exact semantics: the first `k` of a stable descending
/// sort (ties go to the lower index, NaN counts as largest). Panics, naming `k` and the valid
/// range, unless `0 <= k <= x.dims()[dim]`; and, with Burn's message, unless `dim` is in
/// `-D..D` (negative dims count from the end).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1>::from_data([0.1, 0.9, 0.5, 0.9], &device);
/// let (values, indices) = sieve_burn::topk_with_indices(x, 3, 0);
/// assert_eq!(f(values), [0.9, 0.9, 0.5]);
/// assert_eq!(i(indices), [1, 3, 2]); // ties go to the lower index
/// ```
pub fn topk_with_indices<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    k: usize,
    dim: impl AsIndex,
) -> (Tensor<D, K>, Tensor<D, Int>) {
    let dim = dim_index("Top K With Indices", dim, D);
    topk_checked("topk_with_indices", x, k, dim, TopKOptions::default())
}

/// [`topk_with_indices`]'s values.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let x = Tensor::<2>::from_data([[0.1, 0.9, 0.5], [0.7, 0.2, 0.8]], &device);
/// let best = sieve_burn::topk(x, 1, -1); // the largest of each row
/// assert_eq!(f(best.flatten(0, 1)), [0.9, 0.8]);
/// ```
pub fn topk<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    k: usize,
    dim: impl AsIndex,
) -> Tensor<D, K> {
    let dim = dim_index("Top K", dim, D);
    topk_checked("topk", x, k, dim, TopKOptions::default()).0
}

/// [`topk_with_indices`]'s indices.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1, Int>::from_data([4, 8, 6], &device);
/// assert_eq!(i(sieve_burn::argtopk(x, 2, 0)), [1, 2]);
/// ```
pub fn argtopk<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    k: usize,
    dim: impl AsIndex,
) -> Tensor<D, Int> {
    let dim = dim_index("Argtopk", dim, D);
    topk_checked("argtopk", x, k, dim, TopKOptions::default()).1
}

/// The `k` smallest elements along `dim` and their indices: the first `k` of a stable
/// ascending sort (ties to the lower index, NaN last).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1>::from_data([0.1, 0.9, 0.05, f32::NAN], &device);
/// let (values, indices) = sieve_burn::bottomk_with_indices(x, 2, 0);
/// assert_eq!(f(values), [0.05, 0.1]);
/// assert_eq!(i(indices), [2, 0]);
/// ```
pub fn bottomk_with_indices<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    k: usize,
    dim: impl AsIndex,
) -> (Tensor<D, K>, Tensor<D, Int>) {
    let dim = dim_index("Bottom K With Indices", dim, D);
    let options = TopKOptions {
        largest: false,
        ..TopKOptions::default()
    };
    topk_checked("bottomk_with_indices", x, k, dim, options)
}

/// Top-k (or bottom-k) with every choice explicit: see [`TopKOptions`].
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// use sieve_burn::TopKOptions;
/// let x = Tensor::<1, Int>::from_data([5, 1, 4, 2], &device);
/// let smallest = TopKOptions { largest: false, ..TopKOptions::default() };
/// let (_, indices) = sieve_burn::topk_with_options(x, 2, 0, smallest);
/// assert_eq!(i(indices), [1, 3]);
/// ```
pub fn topk_with_options<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    k: usize,
    dim: impl AsIndex,
    options: TopKOptions,
) -> (Tensor<D, K>, Tensor<D, Int>) {
    let dim = dim_index("Top K With Options", dim, D);
    topk_checked("topk_with_options", x, k, dim, options)
}

fn topk_checked<const D: usize, K: SieveKind>(
    op: &str,
    x: Tensor<D, K>,
    k: usize,
    dim: usize,
    options: TopKOptions,
) -> (Tensor<D, K>, Tensor<D, Int>) {
    let len = x.dims()[dim];
    check_served(op, &x, DtypeUse::Keys);
    assert!(
        k <= len,
        "{op}: invalid argument `k` = {k}: expected 0..={len} (the length of dim {dim})"
    );
    let it = index_dtype(&x);
    let (values, indices) = Dispatch::sieve_topk(
        operand(x),
        k,
        dim,
        options.largest,
        options.sorted,
        options.strategy_index(),
        it,
    );
    (from_values(values), Tensor::from_dispatch(indices))
}

/// Every element's position along `dim`, as an Int tensor of `shape`.
pub(crate) fn positions<const D: usize>(
    shape: &burn::tensor::Shape,
    dim: usize,
    device: &burn::tensor::Device,
) -> Tensor<D, Int> {
    let len = shape[dim];
    let mut along = [1usize; D];
    along[dim] = len;
    let dims: [usize; D] = std::array::from_fn(|d| shape[d]);
    Tensor::<1, Int>::arange(0..len as i64, device)
        .reshape(along)
        .expand(dims)
}
