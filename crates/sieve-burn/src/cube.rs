//! `SieveOps` on the CubeCL backend (every CubeCL runtime): lay the tensor out as contiguous
//! `[rows, len]` rows along `dim`, run the sieve kernel, and restore the caller's axis order.

use burn::backend::DType;
use burn::tensor::{BoolStore, IntDType, Shape};
use burn_cubecl::{
    CubeBackend,
    kernel::into_contiguous,
    ops::{numeric::empty_device_contiguous_dtype, permute},
    tensor::CubeTensor,
};
use cubecl::zspace::{Strides, metadata::Metadata};
use sieve::Dtype;
use sieve::compact::{
    self, CompactIo, CompactOptions, CompactProblem, Flags, MaskStorage, Rejected,
};
use sieve::scan::{self, ColumnProblem, ScanKind, ScanOp, ScanOptions, ScanProblem};
use sieve::sort::{self as radix, SortIo, SortOptions, SortOrder, SortProblem};
use sieve::topk::{self, TopkIo, TopkOptions, TopkProblem, TopkStrategy};

use crate::SieveOps;
use crate::values::Values;

/// Float or Int: the kind an op's value output keeps from its input (both are `CubeTensor`s
/// here).
#[derive(Clone, Copy)]
enum Kind {
    Float,
    Int,
}

impl Kind {
    fn of(x: Values<CubeBackend>) -> (Kind, CubeTensor) {
        match x {
            Values::Float(x) => (Kind::Float, x),
            Values::Int(x) => (Kind::Int, x),
        }
    }

    fn wrap(self, x: CubeTensor) -> Values<CubeBackend> {
        match self {
            Kind::Float => Values::Float(x),
            Kind::Int => Values::Int(x),
        }
    }
}

impl SieveOps for CubeBackend {
    fn sieve_cumulative(x: Values<Self>, dim: usize, op: ScanOp) -> Values<Self> {
        let (kind, x) = Kind::of(x);
        kind.wrap(scan_along(x, dim, op))
    }

    fn sieve_compact(
        x: Values<Self>,
        mask: CubeTensor,
        per_row: bool,
        pad: bool,
        index_dtype: IntDType,
    ) -> (Values<Self>, CubeTensor) {
        let (kind, x) = Kind::of(x);
        let (values, counts) = compact_by_mask(x, mask, per_row, pad, index_dtype);
        (kind.wrap(values), counts)
    }

    fn sieve_run_starts(
        x: Values<Self>,
        positions: bool,
        index_dtype: IntDType,
    ) -> (Values<Self>, CubeTensor, CubeTensor) {
        let (kind, x) = Kind::of(x);
        let (values, positions, count) = run_starts(x, positions, index_dtype);
        (kind.wrap(values), positions, count)
    }

    fn sieve_partition(
        x: Values<Self>,
        mask: CubeTensor,
        dim: usize,
        index_dtype: IntDType,
    ) -> (Values<Self>, CubeTensor, CubeTensor) {
        let (kind, x) = Kind::of(x);
        let (values, indices, counts) =
            split("stable_partition", x, SplitBy::Mask(mask), dim, index_dtype);
        (kind.wrap(values), indices, counts)
    }

    fn sieve_int_split_by_bit(
        keys: CubeTensor,
        bit: u32,
        dim: usize,
        index_dtype: IntDType,
    ) -> (CubeTensor, CubeTensor, CubeTensor) {
        split("split_by_bit", keys, SplitBy::Bit(bit), dim, index_dtype)
    }

    fn sieve_sort_with_indices(
        x: Values<Self>,
        dim: usize,
        descending: bool,
        index_dtype: IntDType,
    ) -> (Values<Self>, CubeTensor) {
        let (kind, x) = Kind::of(x);
        let (values, indices) = sort_along(
            "sort_with_indices",
            x,
            dim,
            descending,
            Some(index_dtype),
            true,
        );
        (kind.wrap(values.unwrap()), indices.unwrap())
    }

    fn sieve_sort(x: Values<Self>, dim: usize, descending: bool) -> Values<Self> {
        let (kind, x) = Kind::of(x);
        kind.wrap(
            sort_along("sort", x, dim, descending, None, true)
                .0
                .unwrap(),
        )
    }

    fn sieve_argsort(
        x: Values<Self>,
        dim: usize,
        descending: bool,
        index_dtype: IntDType,
    ) -> CubeTensor {
        let (_, x) = Kind::of(x);
        sort_along("argsort", x, dim, descending, Some(index_dtype), false)
            .1
            .unwrap()
    }

    fn sieve_topk(
        x: Values<Self>,
        k: usize,
        dim: usize,
        largest: bool,
        sorted: bool,
        strategy: usize,
        index_dtype: IntDType,
    ) -> (Values<Self>, CubeTensor) {
        let (kind, x) = Kind::of(x);
        let (values, indices) = topk_along(x, k, dim, largest, sorted, strategy, index_dtype);
        (kind.wrap(values), indices)
    }

    fn sieve_prefix(x: Values<Self>, len: usize) -> Values<Self> {
        let (kind, x) = Kind::of(x);
        kind.wrap(prefix_view(x, len))
    }

    fn sieve_searchsorted(
        sorted: Values<Self>,
        values: Values<Self>,
        right: bool,
        index_dtype: IntDType,
    ) -> CubeTensor {
        search(Kind::of(sorted).1, Kind::of(values).1, right, index_dtype)
    }

    fn sieve_uniform_rows(seeds: CubeTensor, len: usize) -> CubeTensor {
        let op = "uniform_rows";
        let seeds = into_contiguous(seeds);
        let rows = seeds.meta.shape()[0];
        let out = empty_of(&seeds, Shape::new([rows, len]), DType::F32);
        sieve::random::uniform_rows(
            &seeds.client,
            &seeds.handle,
            sieve_dtype(op, seeds.dtype),
            rows,
            len,
            &out.handle,
        )
        .unwrap_or_else(|e| panic!("{op}: {e}"));
        out
    }

    fn sieve_sample(
        logits: CubeTensor,
        seeds: CubeTensor,
        top_k: CubeTensor,
        top_p: CubeTensor,
        temperature: CubeTensor,
        cut: usize,
        index_dtype: IntDType,
    ) -> CubeTensor {
        let [top_k, top_p, temperature] = [top_k, top_p, temperature].map(into_contiguous);
        let params = sieve::sample::DrawParams::Each {
            top_k: &top_k.handle,
            k_dtype: sieve_dtype("top_k_top_p_sample", top_k.dtype),
            top_p: &top_p.handle,
            temperature: &temperature.handle,
        };
        sample(logits, seeds, params, cut, index_dtype)
    }

    fn sieve_sample_same(
        logits: CubeTensor,
        seeds: CubeTensor,
        top_k: usize,
        top_p: f32,
        temperature: f32,
        index_dtype: IntDType,
    ) -> CubeTensor {
        let params = sieve::sample::DrawParams::Same {
            top_k: crate::sampling::k_param(top_k),
            top_p,
            temperature,
        };
        sample(logits, seeds, params, top_k, index_dtype)
    }

    fn sieve_uniform_at(seeds: CubeTensor, columns: CubeTensor) -> CubeTensor {
        let op = "uniform_at";
        let seeds = into_contiguous(seeds);
        let columns = into_contiguous(columns);
        let rows = seeds.meta.shape()[0];
        let width = columns.meta.shape()[1];
        let out = empty_of(&columns, columns.meta.shape().clone(), DType::F32);
        sieve::random::uniform_at(
            &seeds.client,
            &seeds.handle,
            sieve_dtype(op, seeds.dtype),
            rows,
            &columns.handle,
            sieve_dtype(op, columns.dtype),
            width,
            &out.handle,
        )
        .unwrap_or_else(|e| panic!("{op}: {e}"));
        out
    }

    fn sieve_bool_argwhere(mask: CubeTensor, index_dtype: IntDType) -> (CubeTensor, CubeTensor) {
        let mask = into_contiguous(mask);
        let len = mask.meta.num_elements();
        let dtype: DType = index_dtype.into();
        let positions = empty_of(&mask, Shape::new([len]), dtype);
        let count = empty_of(&mask, Shape::new([1]), dtype);
        compact::compact(
            &mask.client,
            mask_flags(&mask),
            CompactIo {
                values: None,
                value_dtype: Dtype::U32,
                values_out: None,
                indices_out: Some(&positions.handle),
                counts: &count.handle,
                index_dtype: sieve_index_dtype("argwhere", index_dtype),
            },
            CompactProblem { rows: 1, len },
            Rejected::Drop,
            CompactOptions::default(),
        )
        .unwrap_or_else(|e| panic!("argwhere: {e}"));
        (positions, count)
    }
}

/// The sieve dtype of a Burn dtype, or a panic naming the ones sieve handles. Every numeric
/// Burn dtype has one; whether the device holds it is the kernels' check (a clear error
/// naming the dtype and the runtime).
pub(crate) fn sieve_dtype(op: &str, dtype: DType) -> Dtype {
    match dtype {
        DType::F64 => Dtype::F64,
        DType::F32 | DType::Flex32 => Dtype::F32,
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::I64 => Dtype::I64,
        DType::I32 => Dtype::I32,
        DType::I16 => Dtype::I16,
        DType::I8 => Dtype::I8,
        DType::U64 => Dtype::U64,
        DType::U32 => Dtype::U32,
        DType::U16 => Dtype::U16,
        DType::U8 => Dtype::U8,
        other => panic!(
            "{op}: dtype {other:?} is not supported by sieve (supported: f64, f32, f16, bf16, \
             i64, i32, i16, i8, u64, u32, u16, u8)"
        ),
    }
}

/// A tensor viewed as contiguous rows along one dim, and how to map results back.
pub(crate) struct Rows {
    pub tensor: CubeTensor,
    pub rows: usize,
    pub len: usize,
    /// The axis permutation applied (its own inverse: a swap of `dim` and the last axis).
    pub swap: Option<Vec<usize>>,
}

/// Moves `dim` last and makes the tensor contiguous (no copy when it already is).
pub(crate) fn rows_along(x: CubeTensor, dim: usize) -> Rows {
    let rank = x.meta.num_dims();
    let shape = x.meta.shape().clone();
    let len = shape[dim];
    // The product of the other dims, not `numel / len`: along a size-0 dim there are still
    // rows (of length 0), and the split writes their counts (zeros).
    let rows = (0..rank).filter(|&d| d != dim).map(|d| shape[d]).product();
    let swap = (dim + 1 != rank).then(|| {
        let mut axes: Vec<usize> = (0..rank).collect();
        axes.swap(dim, rank - 1);
        axes
    });
    let tensor = match &swap {
        Some(axes) => into_contiguous(permute(x, axes)),
        None => into_contiguous(x),
    };
    Rows {
        tensor,
        rows,
        len,
        swap,
    }
}

/// The sieve dtype of Burn's index dtype, or a panic naming the ones sieve writes.
pub(crate) fn sieve_index_dtype(op: &str, dtype: IntDType) -> Dtype {
    match dtype {
        IntDType::I32 => Dtype::I32,
        IntDType::I64 => Dtype::I64,
        IntDType::U32 => Dtype::U32,
        other => panic!("{op}: index dtype {other:?} is not supported (supported: i32, i64, u32)"),
    }
}

/// A contiguous bool tensor as sieve's mask flags.
fn mask_flags(mask: &CubeTensor) -> Flags<'_> {
    let storage = match mask.dtype {
        DType::Bool(BoolStore::U8 | BoolStore::Native) | DType::U8 => MaskStorage::U8,
        DType::Bool(BoolStore::U32) | DType::U32 => MaskStorage::U32,
        other => panic!("mask: dtype {other:?} is not a bool storage sieve reads (u8, u32)"),
    };
    Flags::Mask {
        mask: &mask.handle,
        storage,
    }
}

/// The first `len` elements of a 1-D tensor as a view of its buffer: no kernel, no copy.
fn prefix_view(x: CubeTensor, len: usize) -> CubeTensor {
    let mut x = into_contiguous(x);
    assert!(
        x.meta.num_dims() == 1 && len <= x.meta.num_elements(),
        "prefix: {len} elements of a tensor of shape {:?}",
        x.meta.shape()
    );
    x.meta = Box::new(Metadata::new(Shape::new([len]), Strides::new(&[1])));
    x
}

/// An uninitialised contiguous tensor on `like`'s device.
pub(crate) fn empty_of(like: &CubeTensor, shape: Shape, dtype: DType) -> CubeTensor {
    empty_device_contiguous_dtype(like.client.clone(), like.device.clone(), shape, dtype)
}

/// The public op a compaction serves, for its panic messages.
fn compact_op(per_row: bool, pad: bool) -> &'static str {
    match (per_row, pad) {
        (true, _) => "compact_rows",
        (false, true) => "mask_select_padded",
        (false, false) => "mask_select",
    }
}

/// `SieveOps::sieve_compact`: values and counts, no positions.
fn compact_by_mask(
    x: CubeTensor,
    mask: CubeTensor,
    per_row: bool,
    pad: bool,
    index_dtype: IntDType,
) -> (CubeTensor, CubeTensor) {
    let op = compact_op(per_row, pad);
    let (values, _, counts) = compact_values(op, x, Some(mask), per_row, pad, false, index_dtype);
    (values, counts)
}

/// `SieveOps::sieve_run_starts`: the positions an empty `[0]` tensor
/// where not asked for.
fn run_starts(
    x: CubeTensor,
    positions: bool,
    index_dtype: IntDType,
) -> (CubeTensor, CubeTensor, CubeTensor) {
    let (values, at, count) =
        compact_values("unique", x, None, false, false, positions, index_dtype);
    let at = at.unwrap_or_else(|| empty_of(&values, Shape::new([0]), index_dtype.into()));
    (values, at, count)
}

/// Compacts `x` by `mask` (same shape; `None`: by run starts, each element unequal to the one
/// before it): the whole tensor in row-major order, or each row of a 2-D `x`; the survivors'
/// positions too when `positions`. See `SieveOps::sieve_compact` and
/// `SieveOps::sieve_run_starts`.
fn compact_values(
    op: &str,
    x: CubeTensor,
    mask: Option<CubeTensor>,
    per_row: bool,
    pad: bool,
    positions: bool,
    index_dtype: IntDType,
) -> (CubeTensor, Option<CubeTensor>, CubeTensor) {
    let shape = x.meta.shape().clone();
    if let Some(mask) = &mask {
        assert_eq!(
            &shape,
            mask.meta.shape(),
            "{op}: mask shape {:?} must equal the input shape {shape:?}",
            mask.meta.shape()
        );
    }
    let value_dtype = sieve_dtype(op, x.dtype);
    let x = into_contiguous(x);
    let mask = mask.map(into_contiguous);
    let (rows, len) = if per_row {
        (shape[0], shape[1])
    } else {
        (1, shape.num_elements())
    };
    let (values_shape, counts_shape) = crate::meta::compact_shapes(&shape, per_row);
    let indices = positions.then(|| empty_of(&x, values_shape.clone(), index_dtype.into()));
    let values = empty_of(&x, values_shape, x.dtype);
    let counts = empty_of(&x, counts_shape, index_dtype.into());
    compact::compact(
        &x.client,
        mask.as_ref().map_or(Flags::RunStarts, mask_flags),
        CompactIo {
            values: Some(&x.handle),
            value_dtype,
            values_out: Some(&values.handle),
            indices_out: indices.as_ref().map(|t| &t.handle),
            counts: &counts.handle,
            index_dtype: sieve_index_dtype(op, index_dtype),
        },
        CompactProblem { rows, len },
        if pad { Rejected::Zero } else { Rejected::Drop },
        CompactOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{op}: {e}"));
    (values, indices, counts)
}

/// Stable sort of every row along `dim`: the sorted values (when `keys`) and the source
/// indices (when `index_dtype` is given), in the caller's axis order.
fn sort_along(
    op: &str,
    x: CubeTensor,
    dim: usize,
    descending: bool,
    index_dtype: Option<IntDType>,
    keys: bool,
) -> (Option<CubeTensor>, Option<CubeTensor>) {
    let key_dtype = sieve_dtype(op, x.dtype);
    let Rows {
        tensor,
        rows,
        len,
        swap,
    } = rows_along(x, dim);
    let shape = tensor.meta.shape().clone();
    let values = keys.then(|| empty_of(&tensor, shape.clone(), tensor.dtype));
    let indices = index_dtype.map(|it| empty_of(&tensor, shape.clone(), it.into()));
    radix::sort(
        &tensor.client,
        SortIo {
            keys: &tensor.handle,
            key_dtype,
            keys_out: values.as_ref().map(|t| &t.handle),
            indices_out: indices.as_ref().map(|t| &t.handle),
            index_dtype: index_dtype
                .map(|it| sieve_index_dtype(op, it))
                .unwrap_or(Dtype::I32),
        },
        SortProblem { rows, len },
        if descending {
            SortOrder::Descending
        } else {
            SortOrder::Ascending
        },
        SortOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{op}: {e}"));
    let restore = |t: CubeTensor| match &swap {
        Some(axes) => permute(t, axes),
        None => t,
    };
    (values.map(restore), indices.map(restore))
}

/// Top-k of every row along `dim` (see `SieveOps::sieve_topk`): `sieve::topk` on the
/// rows laid out along `dim`, then the caller's axis order restored.
fn topk_along(
    x: CubeTensor,
    k: usize,
    dim: usize,
    largest: bool,
    sorted: bool,
    strategy: usize,
    index_dtype: IntDType,
) -> (CubeTensor, CubeTensor) {
    let op = "topk";
    let value_dtype = sieve_dtype(op, x.dtype);
    let Rows {
        tensor,
        rows,
        len,
        swap,
    } = rows_along(x, dim);
    let mut shape = tensor.meta.shape().clone();
    let last = shape.num_dims() - 1;
    shape[last] = k;
    let values = empty_of(&tensor, shape.clone(), tensor.dtype);
    let indices = empty_of(&tensor, shape, index_dtype.into());
    let strategy = *TopkStrategy::ALL
        .get(strategy)
        .unwrap_or_else(|| panic!("{op}: strategy index {strategy} is not in TopkStrategy::ALL"));
    topk::topk(
        &tensor.client,
        TopkIo {
            values: &tensor.handle,
            value_dtype,
            values_out: Some(&values.handle),
            indices_out: Some(&indices.handle),
            index_dtype: sieve_index_dtype(op, index_dtype),
        },
        TopkProblem { rows, len, k },
        TopkOptions {
            largest,
            sorted,
            strategy,
            tuning: None,
        },
    )
    .unwrap_or_else(|e| panic!("{op}: {e}"));
    let restore = |t: CubeTensor| match &swap {
        Some(axes) => permute(t, axes),
        None => t,
    };
    (restore(values), restore(indices))
}

/// What a split sends first (one a call: the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
enum SplitBy {
    /// Elements where the mask (same shape) is true.
    Mask(CubeTensor),
    /// Integers whose bit is 0.
    Bit(u32),
}

/// Stable split of every row along `dim` (see `SieveOps::sieve_partition`): the
/// compaction engine's `Keep` placement on rows laid out along `dim`, then the caller's axis
/// order restored.
fn split(
    op: &str,
    x: CubeTensor,
    by: SplitBy,
    dim: usize,
    index_dtype: IntDType,
) -> (CubeTensor, CubeTensor, CubeTensor) {
    let value_dtype = sieve_dtype(op, x.dtype);
    if let SplitBy::Mask(mask) = &by {
        assert_eq!(
            x.meta.shape(),
            mask.meta.shape(),
            "{op}: mask shape {:?} must equal the input shape {:?}",
            mask.meta.shape(),
            x.meta.shape()
        );
    }
    let Rows {
        tensor,
        rows,
        len,
        swap,
    } = rows_along(x, dim);
    let (mask, bit) = match by {
        SplitBy::Mask(mask) => (Some(rows_along(mask, dim).tensor), 0),
        SplitBy::Bit(bit) => (None, bit),
    };
    let flags = match &mask {
        Some(mask) => mask_flags(mask),
        None => Flags::BitClear { bit },
    };
    let shape = tensor.meta.shape().clone();
    let last = shape.num_dims() - 1;
    let values = empty_of(&tensor, shape.clone(), tensor.dtype);
    let indices = empty_of(&tensor, shape.clone(), index_dtype.into());
    let counts = empty_of(
        &tensor,
        crate::meta::counts_shape(&shape, last),
        index_dtype.into(),
    );
    compact::compact(
        &tensor.client,
        flags,
        CompactIo {
            values: Some(&tensor.handle),
            value_dtype,
            values_out: Some(&values.handle),
            indices_out: Some(&indices.handle),
            counts: &counts.handle,
            index_dtype: sieve_index_dtype(op, index_dtype),
        },
        CompactProblem { rows, len },
        Rejected::Keep,
        CompactOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{op}: {e}"));
    let restore = |t: CubeTensor| match &swap {
        Some(axes) => permute(t, axes),
        None => t,
    };
    (restore(values), restore(indices), restore(counts))
}

/// An uninitialised contiguous tensor shaped like `like`.
pub(crate) fn empty_like(like: &CubeTensor, shape: Shape) -> CubeTensor {
    empty_device_contiguous_dtype(like.client.clone(), like.device.clone(), shape, like.dtype)
}

/// The inclusive scan of every row along `dim` with `op` (`cumsum`, `cumprod`, `cummin`,
/// `cummax`), in the caller's axis order.
fn scan_along(x: CubeTensor, dim: usize, op: ScanOp) -> CubeTensor {
    let name = format!("cum{}", op.name());
    let dtype = sieve_dtype(&name, x.dtype);
    // A dim with many columns after it: scan the columns in place, one read and one write of
    // every element, instead of transposing the dim last (a read and a write more) and back.
    let shape = x.meta.shape().clone();
    let columns = ColumnProblem {
        outer: shape[..dim].iter().product(),
        len: shape[dim],
        inner: shape[dim + 1..].iter().product(),
    };
    if columns.prefers_columns(&sieve::DeviceCaps::of(&x.client)) {
        let tensor = into_contiguous(x);
        let output = empty_like(&tensor, shape);
        scan::scan_columns(
            &tensor.client,
            &tensor.handle,
            &output.handle,
            columns,
            dtype,
            op,
            ScanKind::Inclusive,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        return output;
    }
    let Rows {
        tensor,
        rows,
        len,
        swap,
    } = rows_along(x, dim);
    let output = empty_like(&tensor, tensor.meta.shape().clone());
    scan::scan_op(
        &tensor.client,
        &tensor.handle,
        &output.handle,
        ScanProblem { rows, len },
        dtype,
        op,
        ScanKind::Inclusive,
        ScanOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    match swap {
        Some(axes) => permute(output, &axes),
        None => output,
    }
}

/// Panics, naming the dtype and the device, if `op` cannot run on a tensor of `dtype` on
/// `device`'s CubeCL runtime: the kernels' own error, given before anything is queued (under
/// Fusion it would otherwise surface only when the result is read, after Burn's own layout
/// copies had run). Devices of other backends serve every dtype through Burn's ops.
pub(crate) fn refuse_unserved_dtype(
    op: &str,
    device: &burn::tensor::Device,
    dtype: DType,
    dtype_use: crate::tensor::DtypeUse,
) {
    let Some(client) = crate::cube_client(device) else {
        return;
    };
    let dtype = sieve_dtype(op, dtype);
    // 64-bit keys are read as pairs of 32-bit words: they sort on every device.
    if dtype_use == crate::tensor::DtypeUse::Values || radix::key_needs_device_dtype(dtype) {
        sieve::device::check_dtype(&client, dtype).unwrap_or_else(|e| panic!("{op}: {e}"));
    }
}

/// `sieve::search` of every element of `values` in the 1-D `sorted` (see
/// `SieveOps::sieve_searchsorted`).
fn search(
    sorted: CubeTensor,
    values: CubeTensor,
    right: bool,
    index_dtype: IntDType,
) -> CubeTensor {
    let op = "searchsorted";
    let sorted = into_contiguous(sorted);
    let values = into_contiguous(values);
    let out = empty_of(&values, values.meta.shape().clone(), index_dtype.into());
    sieve::search::searchsorted(
        &values.client,
        sieve::search::SearchIo {
            sorted: &sorted.handle,
            queries: &values.handle,
            dtype: sieve_dtype(op, values.dtype),
            out: &out.handle,
            index_dtype: sieve_index_dtype(op, index_dtype),
        },
        sorted.meta.num_elements(),
        values.meta.num_elements(),
        right,
    )
    .unwrap_or_else(|e| panic!("{op}: {e}"));
    out
}

/// `sieve::sample::top_k_top_p` of `[rows, vocab]` f32 logits: `[rows]` tokens of
/// `index_dtype`.
fn sample(
    logits: CubeTensor,
    seeds: CubeTensor,
    params: sieve::sample::DrawParams<'_>,
    cut: usize,
    index_dtype: IntDType,
) -> CubeTensor {
    let op = "top_k_top_p_sample";
    let [logits, seeds] = [logits, seeds].map(into_contiguous);
    let [rows, vocab] = [logits.meta.shape()[0], logits.meta.shape()[1]];
    let tokens = empty_of(&logits, Shape::new([rows]), index_dtype.into());
    sieve::sample::top_k_top_p(
        &logits.client,
        sieve::sample::SampleIo {
            logits: &logits.handle,
            rows: sieve::sample::DrawRows {
                seeds: &seeds.handle,
                seed_dtype: sieve_dtype(op, seeds.dtype),
                params,
                tokens: &tokens.handle,
                token_dtype: sieve_dtype(op, tokens.dtype),
            },
        },
        rows,
        vocab,
        cut,
    )
    .unwrap_or_else(|e| panic!("{op}: {e}"));
    tokens
}
