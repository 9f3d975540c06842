//! [`super::CompactOps`] on the CubeCL backend.

use burn::backend::DType;
use burn::tensor::{BoolStore, IntDType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, ops::permute, tensor::CubeTensor};
use cubecl::zspace::{Strides, metadata::Metadata};
use sieve::Dtype;
use sieve::compact::{
    self, CompactIo, CompactOptions, CompactProblem, Flags, MaskStorage, Rejected,
};

use super::CompactOps;
use crate::cube::*;
use crate::values::Values;

impl CompactOps for CubeBackend {
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

    fn sieve_prefix(x: Values<Self>, len: usize) -> Values<Self> {
        let (kind, x) = Kind::of(x);
        kind.wrap(prefix_view(x, len))
    }
}

/// What a split sends first (one a call: the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
enum SplitBy {
    /// Elements where the mask (same shape) is true.
    Mask(CubeTensor),
    /// Integers whose bit is 0.
    Bit(u32),
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

/// The public op a compaction serves, for its panic messages.
fn compact_op(per_row: bool, pad: bool) -> &'static str {
    match (per_row, pad) {
        (true, _) => "compact_rows",
        (false, true) => "mask_select_padded",
        (false, false) => "mask_select",
    }
}

/// `CompactOps::sieve_compact`: values and counts, no positions.
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

/// `CompactOps::sieve_run_starts`: the positions an empty `[0]` tensor
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
/// positions too when `positions`. See `CompactOps::sieve_compact` and
/// `CompactOps::sieve_run_starts`.
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
    let (values_shape, counts_shape) = crate::compact::compact_shapes(&shape, per_row);
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

/// Stable split of every row along `dim` (see `CompactOps::sieve_partition`): the
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
        crate::compact::counts_shape(&shape, last),
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
