//! The backend extension trait: one method per primitive, Float and Int operands in one
//! [`Values`]. Default bodies are the stock-Burn fallbacks that backends without a sieve kernel
//! use ([`crate::fallback`], served in [`crate::stock`]).

// The generated `Dispatch` impl names the deprecated NdArray and LibTorch backends.
#![cfg_attr(any(feature = "ndarray", feature = "tch"), allow(deprecated))]

use burn::backend::{
    Backend, backend_extension, get_device_settings,
    tensor::{BoolTensor, FloatTensor, IntTensor},
};
use burn::tensor::IntDType;
use sieve::scan::ScanOp;

use crate::fallback;
use crate::meta;
use crate::values::Values;

// `#[backend_extension]` ends every generated `Dispatch` method with
// `_ => unimplemented!("Backend not supported for custom op `{}`", stringify!(op))`, the arm a
// tensor takes when its backend is not listed below (Burn built with a backend feature that
// sieve-burn was not). This macro, in textual scope at the trait, takes that call's place so
// the panic names the backend and the feature to enable. Should Burn change the call, this
// stops compiling rather than falling back to `unimplemented!`.
macro_rules! unimplemented {
    ($message:literal, stringify!($op:ident)) => {
        $crate::served::unserved(stringify!($op))
    };
}

/// Sieve's ops on a Burn backend.
#[backend_extension(
    Autodiff,
    // burn's `fusion` feature is always on in this crate, so Fusion is listed unconditionally.
    Fusion,
    Cube: cfg(feature = "cube"),
    Flex: cfg(feature = "flex"),
    NdArray: cfg(feature = "ndarray"),
    LibTorch: cfg(feature = "tch"),
    Remote: cfg(feature = "remote"),
)]
pub trait SieveOps: Backend {
    /// The inclusive scan along `dim` with `op` (any dim, any layout): `cumsum` (Int: wrapping
    /// on overflow), `cumprod`, `cummin`, `cummax`. A running minimum or maximum is NaN from a
    /// lane's first NaN on; the kernels keep the latest of equal values and the latest NaN
    /// (PyTorch's rule); the stock fallbacks give the same numbers, the zero's sign and NaN's
    /// payload being the backend's own op's.
    #[fusion(meta = |x, _, _| x.clone())]
    fn sieve_cumulative(#[extension_type] x: Values<Self>, dim: usize, op: ScanOp) -> Values<Self> {
        match (x, op) {
            (Values::Float(x), ScanOp::Sum) => Values::Float(Self::float_cumsum(x, dim)),
            (Values::Float(x), ScanOp::Prod) => Values::Float(Self::float_cumprod(x, dim)),
            (Values::Float(x), ScanOp::Min) => Values::Float(Self::float_cummin(x, dim)),
            (Values::Float(x), ScanOp::Max) => Values::Float(Self::float_cummax(x, dim)),
            (Values::Int(x), ScanOp::Sum) => Values::Int(Self::int_cumsum(x, dim)),
            (Values::Int(x), ScanOp::Prod) => Values::Int(Self::int_cumprod(x, dim)),
            (Values::Int(x), ScanOp::Min) => Values::Int(Self::int_cummin(x, dim)),
            (Values::Int(x), ScanOp::Max) => Values::Int(Self::int_cummax(x, dim)),
        }
    }

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

    /// The first element of every run of equal elements of `x` (row-major; NaNs equal to
    /// each other, -0.0 equal to +0.0), compacted: values `[numel]` (the first `count`
    /// defined; over sorted `x`, its distinct values), their row-major positions `[numel]`
    /// when `positions` (else `[0]`), and the count `[1]`; positions and count of dtype
    /// `index_dtype`.
    #[fusion(meta = meta::run_starts)]
    fn sieve_run_starts(
        #[extension_type] x: Values<Self>,
        positions: bool,
        index_dtype: IntDType,
    ) -> (Values<Self>, IntTensor<Self>, IntTensor<Self>) {
        fallback::run_starts::<Self>(x, positions, index_dtype)
    }

    /// Row-major positions of the true elements of `mask`, `[numel]` (the first `count` are
    /// defined), and their count `[1]`, both of dtype `index_dtype`.
    #[fusion(meta = meta::argwhere)]
    fn sieve_bool_argwhere(
        mask: BoolTensor<Self>,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        fallback::argwhere::<Self>(mask, index_dtype)
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

    /// [`SieveOps::sieve_sort_with_indices`] without the indices.
    #[fusion(meta = |x, _, _| x.clone())]
    fn sieve_sort(#[extension_type] x: Values<Self>, dim: usize, descending: bool) -> Values<Self> {
        let index_dtype = get_device_settings::<Self>(&x.device()).int_dtype;
        fallback::sort_with_indices::<Self>(x, dim, descending, index_dtype).0
    }

    /// [`SieveOps::sieve_sort_with_indices`]'s indices alone.
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
        let (values, indices) = fallback::sort_with_indices::<Self>(x, dim, largest, index_dtype);
        let cut = fallback::first_along(&values.shape(), dim, k);
        (values.slice(&cut), Self::int_slice(indices, &cut))
    }

    /// The first `len` elements of a 1-D tensor: the exact-size result of a compaction once
    /// its count is read. A view of the same buffer on the cube backends (Burn's `narrow`
    /// copies there); a slice elsewhere.
    #[fusion(meta = meta::prefix)]
    fn sieve_prefix(#[extension_type] x: Values<Self>, len: usize) -> Values<Self> {
        x.slice(&[fallback::prefix_slice(len)])
    }

    /// `[rows, len]` f32 uniforms in `(0, 1)` from the `[rows]` Int tensor `seeds`: element
    /// `[r, j]` is a pure function of `seeds[r]`'s bits and `j`, the same on every runtime
    /// (`sieve::random`). The sampling ops' randomness. Fallback: the same numbers made on
    /// the host from the seeds read back.
    #[fusion(meta = meta::uniform_rows)]
    fn sieve_uniform_rows(seeds: IntTensor<Self>, len: usize) -> FloatTensor<Self> {
        fallback::uniform_rows::<Self>(seeds, len)
    }

    /// `[rows, width]` f32 uniforms at the counters of the `[rows, width]` Int tensor
    /// `columns`: what [`SieveOps::sieve_uniform_rows`] puts at those columns (a gather of
    /// it, without making whole rows). Fallback: on the host, as that one.
    #[fusion(meta = meta::uniform_at)]
    fn sieve_uniform_at(seeds: IntTensor<Self>, columns: IntTensor<Self>) -> FloatTensor<Self> {
        fallback::uniform_at::<Self>(seeds, columns)
    }

    /// One token per row of `[rows, vocab]` f32 `logits`, drawn under the `[rows]` per-row
    /// `top_k` (Int), `top_p` and `temperature` (f32) and `seeds` (`sieve::sample`'s rules:
    /// the candidates are each row's stable descending top-`cut` where `cut` is in
    /// `1..vocab`, else the whole row; NaN counts as `-inf`, `+inf` as `f32::MAX`;
    /// Gumbel-max with `sieve::random`'s numbers; -1 for a row with no finite logit).
    /// `[rows]` tokens of `index_dtype`. Fallback: the same rule on the host
    /// (`sieve::sample::reference::sample_row`).
    #[fusion(meta = meta::sample)]
    fn sieve_sample(
        logits: FloatTensor<Self>,
        seeds: IntTensor<Self>,
        top_k: IntTensor<Self>,
        top_p: FloatTensor<Self>,
        temperature: FloatTensor<Self>,
        cut: usize,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        fallback::sample::<Self>(logits, seeds, top_k, top_p, temperature, cut, index_dtype)
    }

    /// [`SieveOps::sieve_sample`] with one `top_k` (its cut: 0 or `>= vocab` for none),
    /// `top_p` and `temperature` for every row, passed as scalars (no per-row tensors to make).
    #[fusion(meta = meta::sample_same)]
    fn sieve_sample_same(
        logits: FloatTensor<Self>,
        seeds: IntTensor<Self>,
        top_k: usize,
        top_p: f32,
        temperature: f32,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        fallback::sample_same::<Self>(logits, seeds, top_k, top_p, temperature, index_dtype)
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
