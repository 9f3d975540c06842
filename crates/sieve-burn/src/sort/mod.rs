//! Sorts, top-k and the search of sorted sequences, on `sieve::sort`, `sieve::topk` and
//! `sieve::search`: [`sort`], [`sort_with_indices`], [`argsort`] (and descending twins),
//! [`topk`], [`topk_with_indices`], [`argtopk`], [`bottomk_with_indices`], [`topk_with_options`],
//! [`searchsorted`], [`bucketize`].

// The generated `Dispatch` impl names the deprecated NdArray and LibTorch backends.
#![cfg_attr(any(feature = "ndarray", feature = "tch"), allow(deprecated))]

mod autodiff;
#[cfg(feature = "cube")]
mod cube;

use burn::backend::{Dispatch, get_device_settings, tensor::IntTensor};
use burn::tensor::{AsIndex, Int, IntDType, Tensor};

use crate::fallback;
use crate::tensor::*;
use crate::values::Values;

extension_trait! {
    /// Stable sorts, top-k and searches of sorted sequences. One method per op, Float and Int
    /// operands as one [`Values`]; default bodies are the stock-Burn fallbacks (`fallback.rs`).
    pub trait SortOps {
        /// Stable sort along `dim` (keys in PyTorch's order, NaN largest; equal keys keep their
        /// input order in both directions): the sorted values and each one's source index.
        #[fusion(meta = meta::sort_with_indices)]
        fn sieve_sort_with_indices(
            #[extension_type] x: Values<Self>,
            dim: usize,
            descending: bool,
            index_dtype: IntDType,
        ) -> (Values<Self>, IntTensor<Self>) {
            fallback::sort_with_indices::<Self>(x, dim, descending, index_dtype)
        }

        /// [`SortOps::sieve_sort_with_indices`] without the indices.
        #[fusion(meta = |x, _, _| x.clone())]
        fn sieve_sort(
            #[extension_type] x: Values<Self>,
            dim: usize,
            descending: bool,
        ) -> Values<Self> {
            let index_dtype = get_device_settings::<Self>(&x.device()).int_dtype;
            fallback::sort_with_indices::<Self>(x, dim, descending, index_dtype).0
        }

        /// [`SortOps::sieve_sort_with_indices`]'s indices alone.
        #[fusion(meta = meta::argsort)]
        fn sieve_argsort(
            #[extension_type] x: Values<Self>,
            dim: usize,
            descending: bool,
            index_dtype: IntDType,
        ) -> IntTensor<Self> {
            fallback::sort_with_indices::<Self>(x, dim, descending, index_dtype).1
        }

        /// Top-k along `dim`: the first `k` of a stable sort, descending when `largest` (ties to
        /// the lower index, NaN largest), ascending otherwise; the values and their source
        /// indices, `x`'s shape with `dim` cut to `k`. `sorted == false` may order the chosen set
        /// freely (it is the same set). `strategy` indexes `sieve::topk::TopkStrategy::ALL`
        /// (0 = Auto; the fallback ignores it).
        #[fusion(meta = meta::topk)]
        fn sieve_topk(
            #[extension_type] x: Values<Self>,
            k: usize,
            dim: usize,
            largest: bool,
            sorted: bool,
            strategy: usize,
            index_dtype: IntDType,
        ) -> (Values<Self>, IntTensor<Self>) {
            let _ = (sorted, strategy);
            let (values, indices) =
                fallback::sort_with_indices::<Self>(x, dim, largest, index_dtype);
            let cut = fallback::first_along(&values.shape(), dim, k);
            (values.slice(&cut), Self::int_slice(indices, &cut))
        }

        /// For every element of `values`, how many elements of the 1-D ascending `sorted` come
        /// before it in sieve's order (`right`: counting equal ones too): `torch.searchsorted`.
        /// An Int tensor of `values`' shape (`sorted` of the same kind). Fallback: a binary search
        /// on the host.
        #[fusion(meta = meta::searchsorted)]
        fn sieve_searchsorted(
            #[extension_type] sorted: Values<Self>,
            #[extension_type] values: Values<Self>,
            right: bool,
            index_dtype: IntDType,
        ) -> IntTensor<Self> {
            let device = values.device();
            let sorted = sorted.read("searchsorted");
            let values = values.read("searchsorted");
            fallback::searchsorted::<Self>(&sorted, &values, right, index_dtype, &device)
        }
    }
}

/// Output specs of the ops with tuple outputs, for Fusion (which records them before the
/// kernel runs). They must match what the backends return; nothing checks it.
mod meta {
    use burn::backend::fusion::custom::TensorSpec;
    use burn::tensor::IntDType;

    use crate::values::ValuesMetadata;

    /// Sorted values (`x`'s spec) and indices (`x`'s shape).
    pub(super) fn sort_with_indices(
        x: &ValuesMetadata,
        _dim: &usize,
        _descending: &bool,
        index_dtype: &IntDType,
    ) -> (ValuesMetadata, TensorSpec) {
        (
            x.clone(),
            TensorSpec::new(x.spec().shape.clone(), (*index_dtype).into()),
        )
    }

    /// Indices (`x`'s shape).
    pub(super) fn argsort(
        x: &ValuesMetadata,
        _dim: &usize,
        _descending: &bool,
        index_dtype: &IntDType,
    ) -> TensorSpec {
        TensorSpec::new(x.spec().shape.clone(), (*index_dtype).into())
    }

    /// Top-k values (`x`'s dtype) and indices: `x`'s shape with `dim` cut to `k`.
    pub(super) fn topk(
        x: &ValuesMetadata,
        k: &usize,
        dim: &usize,
        _largest: &bool,
        _sorted: &bool,
        _strategy: &usize,
        index_dtype: &IntDType,
    ) -> (ValuesMetadata, TensorSpec) {
        let mut shape = x.spec().shape.clone();
        shape[*dim] = *k;
        (
            x.with(TensorSpec::new(shape.clone(), x.spec().dtype)),
            TensorSpec::new(shape, (*index_dtype).into()),
        )
    }

    /// Positions of `values`' shape, of the index dtype.
    pub(super) fn searchsorted(
        _sorted: &ValuesMetadata,
        values: &ValuesMetadata,
        _right: &bool,
        index_dtype: &IntDType,
    ) -> TensorSpec {
        TensorSpec::new(values.spec().shape.clone(), (*index_dtype).into())
    }
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

/// For every element of `values`, the position in `sorted_sequence` (1-D, ascending in
/// sieve's order; not checked, as in torch) where it would be inserted to keep it sorted:
/// the first position whose element is not less than it (`right = false`) or greater than
/// it (`right = true`): `torch.searchsorted(sorted_sequence, values, right=right)`. An Int
/// tensor of `values`' shape. One binary search per value on the device (`sieve::search`);
/// no host read (the Flex and NdArray fallbacks search on the host).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let edges = Tensor::<1>::from_data([1.0, 2.0, 2.0, 5.0], &device);
/// let at = Tensor::<1>::from_data([2.0, 0.0, 6.0], &device);
/// let left = sieve_burn::searchsorted(edges.clone(), at.clone(), false);
/// let right = sieve_burn::searchsorted(edges, at, true);
/// assert_eq!(left.into_data().iter::<i64>().collect::<Vec<_>>(), [1, 0, 4]);
/// assert_eq!(right.into_data().iter::<i64>().collect::<Vec<_>>(), [3, 0, 4]);
/// ```
pub fn searchsorted<const D: usize, K: SieveKind>(
    sorted_sequence: Tensor<1, K>,
    values: Tensor<D, K>,
    right: bool,
) -> Tensor<D, Int> {
    assert!(
        sorted_sequence.dtype() == values.dtype(),
        "searchsorted: invalid argument `values`: dtype {:?}: expected the dtype of `sorted_sequence` ({:?})",
        values.dtype(),
        sorted_sequence.dtype()
    );
    check_served("searchsorted", &values, DtypeUse::Keys);
    let index_dtype = values.device().settings().int_dtype;
    Tensor::from_dispatch(Dispatch::sieve_searchsorted(
        operand(sorted_sequence),
        operand(values),
        right,
        index_dtype,
    ))
}

/// The bucket of every element of `input` among `boundaries` (1-D, ascending):
/// `torch.bucketize(input, boundaries, right=right)`, i.e. [`searchsorted`]`(boundaries,
/// input, right)`: with `right = false` the first `i` with `x <= boundaries[i]`, with `right
/// = true` the first `i` with `x < boundaries[i]`.
pub fn bucketize<const D: usize, K: SieveKind>(
    input: Tensor<D, K>,
    boundaries: Tensor<1, K>,
    right: bool,
) -> Tensor<D, Int> {
    searchsorted(boundaries, input, right)
}
