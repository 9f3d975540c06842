//! [`super::CompactOps`] on the CubeCL backend.

use burn::backend::DType;
use burn::tensor::{BoolStore, IntDType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use sieve::Dtype;
use sieve::compact::{
    self, CompactIo, CompactOptions, CompactProblem, CountedIo, Flags, MaskStorage, Rejected,
};
use sieve::distinct::{self, DistinctIo, DistinctOptions};

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

    fn sieve_mask_select_count(
        x: Values<Self>,
        mask: CubeTensor,
        index_dtype: IntDType,
    ) -> (CubeTensor, CubeTensor) {
        let (_, x) = Kind::of(x);
        Counted::new("mask_select", Some(x), Some(mask), true, false, index_dtype).count()
    }

    fn sieve_mask_select(
        x: Values<Self>,
        mask: CubeTensor,
        workspace: CubeTensor,
        count: usize,
        index_dtype: IntDType,
    ) -> Values<Self> {
        let (kind, x) = Kind::of(x);
        let counted = Counted::new("mask_select", Some(x), Some(mask), true, false, index_dtype);
        let (values, _) = counted.write(workspace, count);
        kind.wrap(values.expect("values asked for"))
    }

    fn sieve_argwhere_count(mask: CubeTensor, index_dtype: IntDType) -> (CubeTensor, CubeTensor) {
        Counted::new("argwhere", None, Some(mask), false, true, index_dtype).count()
    }

    fn sieve_argwhere(
        mask: CubeTensor,
        workspace: CubeTensor,
        count: usize,
        index_dtype: IntDType,
    ) -> CubeTensor {
        let counted = Counted::new("argwhere", None, Some(mask), false, true, index_dtype);
        let (_, positions) = counted.write(workspace, count);
        positions.expect("positions asked for")
    }

    fn sieve_run_starts_count(x: Values<Self>, index_dtype: IntDType) -> (CubeTensor, CubeTensor) {
        let (_, x) = Kind::of(x);
        Counted::new("unique", Some(x), None, true, false, index_dtype).count()
    }

    fn sieve_run_starts(
        x: Values<Self>,
        workspace: CubeTensor,
        count: usize,
        positions: bool,
        index_dtype: IntDType,
    ) -> (Values<Self>, CubeTensor) {
        let (kind, x) = Kind::of(x);
        let counted = Counted::new("unique", Some(x), None, true, positions, index_dtype);
        let like = counted.like().clone();
        let (values, at) = counted.write(workspace, count);
        let at = at.unwrap_or_else(|| empty_of(&like, Shape::new([0]), index_dtype.into()));
        (kind.wrap(values.expect("values asked for")), at)
    }

    fn sieve_distinct_count(x: Values<Self>, index_dtype: IntDType) -> (CubeTensor, CubeTensor) {
        let (_, x) = Kind::of(x);
        let x = into_contiguous(x);
        let len = x.meta.num_elements();
        let elements = super::distinct_workspace_len(len, &index_dtype);
        let workspace = empty_of(&x, Shape::new([elements]), index_dtype.into());
        let count = empty_of(&x, Shape::new([1]), index_dtype.into());
        distinct::count_distinct(
            &x.client,
            distinct_io(&x, &workspace),
            len,
            &count.handle,
            sieve_index_dtype("unique", index_dtype),
            DistinctOptions::default(),
        )
        .unwrap_or_else(|e| panic!("unique: {e}"));
        (workspace, count)
    }

    fn sieve_distinct(
        x: Values<Self>,
        workspace: CubeTensor,
        count: usize,
        _index_dtype: IntDType,
    ) -> Values<Self> {
        let (kind, x) = Kind::of(x);
        let x = into_contiguous(x);
        let values = empty_of(&x, Shape::new([count]), x.dtype);
        distinct::write_distinct(
            &x.client,
            distinct_io(&x, &workspace),
            x.meta.num_elements(),
            count,
            &values.handle,
            DistinctOptions::default(),
        )
        .unwrap_or_else(|e| panic!("unique: {e}"));
        kind.wrap(values)
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
}

/// The hash path's buffers: the contiguous flat `x` and its workspace.
fn distinct_io<'a>(x: &'a CubeTensor, workspace: &'a CubeTensor) -> DistinctIo<'a> {
    DistinctIo {
        values: &x.handle,
        value_dtype: sieve_dtype("unique", x.dtype),
        workspace: &workspace.handle,
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

/// The flat operands of a counted compaction (`mask_select`, `argwhere`, the run starts of
/// `unique`), contiguous, and what its second step writes: both steps build the same one, as
/// the tiles are chosen from it.
struct Counted {
    op: &'static str,
    x: Option<CubeTensor>,
    mask: Option<CubeTensor>,
    write_values: bool,
    write_indices: bool,
    index_dtype: IntDType,
}

impl Counted {
    fn new(
        op: &'static str,
        x: Option<CubeTensor>,
        mask: Option<CubeTensor>,
        write_values: bool,
        write_indices: bool,
        index_dtype: IntDType,
    ) -> Self {
        if let (Some(x), Some(mask)) = (&x, &mask) {
            assert_eq!(
                x.meta.shape(),
                mask.meta.shape(),
                "{op}: mask shape {:?} must equal the input shape {:?}",
                mask.meta.shape(),
                x.meta.shape()
            );
        }
        Counted {
            op,
            x: x.map(into_contiguous),
            mask: mask.map(into_contiguous),
            write_values,
            write_indices,
            index_dtype,
        }
    }

    /// The operand outputs are allocated beside.
    fn like(&self) -> &CubeTensor {
        self.x.as_ref().or(self.mask.as_ref()).expect("an operand")
    }

    fn len(&self) -> usize {
        self.like().meta.num_elements()
    }

    fn flags(&self) -> Flags<'_> {
        self.mask.as_ref().map_or(Flags::RunStarts, mask_flags)
    }

    fn io<'a>(&'a self, workspace: &'a CubeTensor) -> CountedIo<'a> {
        CountedIo {
            values: self.x.as_ref().map(|x| &x.handle),
            value_dtype: self
                .x
                .as_ref()
                .map_or(Dtype::U32, |x| sieve_dtype(self.op, x.dtype)),
            write_values: self.write_values,
            write_indices: self.write_indices,
            index_dtype: sieve_index_dtype(self.op, self.index_dtype),
            workspace: &workspace.handle,
        }
    }

    /// Step one: the workspace (`super::counted_workspace_len` elements: run starts have no
    /// mask) and the count `[1]`.
    fn count(self) -> (CubeTensor, CubeTensor) {
        let len = self.len();
        let elements = super::counted_workspace_len(len, self.mask.is_none());
        let workspace = empty_of(self.like(), Shape::new([elements]), self.index_dtype.into());
        let count = empty_of(self.like(), Shape::new([1]), self.index_dtype.into());
        compact::count_survivors(
            &self.like().client,
            self.flags(),
            self.io(&workspace),
            len,
            &count.handle,
            CompactOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", self.op));
        (workspace, count)
    }

    /// Step two: `[count]` values and positions, as asked for.
    fn write(
        self,
        workspace: CubeTensor,
        count: usize,
    ) -> (Option<CubeTensor>, Option<CubeTensor>) {
        let shape = Shape::new([count]);
        let values = self
            .write_values
            .then(|| empty_of(self.like(), shape.clone(), self.like().dtype));
        let indices = self
            .write_indices
            .then(|| empty_of(self.like(), shape, self.index_dtype.into()));
        compact::write_survivors(
            &self.like().client,
            self.flags(),
            self.io(&workspace),
            self.len(),
            count,
            values.as_ref().map(|t| &t.handle),
            indices.as_ref().map(|t| &t.handle),
            CompactOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", self.op));
        (values, indices)
    }
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
    let restore = |t: CubeTensor| restore_axes(t, &swap);
    (restore(values), restore(indices), restore(counts))
}

#[cfg(test)]
mod tests {
    use burn::backend::get_device_settings;
    use burn::backend::ops::{FloatTensorOps, IntTensorOps};
    use burn::tensor::{TensorData, try_read_sync};

    use super::*;

    fn read_count(count: CubeTensor) -> usize {
        let data = try_read_sync(CubeBackend::int_into_data(count))
            .unwrap()
            .unwrap();
        data.iter::<i64>().next().unwrap() as usize
    }

    /// The counted ops' results hold buffers of their own size, not the input's: 10 of
    /// 100,000 elements selected take 10 elements of memory (the full-size output and a view
    /// of it pinned all 100,000 before).
    #[test]
    fn counted_results_hold_only_their_elements() {
        let device = cubecl::Device::default();
        let n = 100_000;
        let x = CubeBackend::float_from_data(
            TensorData::new((0..n).map(|i| i as f32).collect::<Vec<_>>(), [n]),
            &device,
        );
        let bools = get_device_settings::<CubeBackend>(&device).bool_dtype;
        let rest = CubeBackend::float_remainder_scalar(x.clone(), 10_000.0.into());
        let mask = CubeBackend::float_equal_elem(rest, 7.0.into(), bools);
        let it = IntDType::I32;
        let (workspace, count) =
            CubeBackend::sieve_mask_select_count(Values::Float(x.clone()), mask.clone(), it);
        let count = read_count(count);
        assert_eq!(count, 10);
        let values = CubeBackend::sieve_mask_select(
            Values::Float(x.clone()),
            mask.clone(),
            workspace,
            10,
            it,
        )
        .float();
        assert!(
            values.handle.size() < 1024,
            "{} bytes",
            values.handle.size()
        );
        let got = try_read_sync(CubeBackend::float_into_data(values))
            .unwrap()
            .unwrap();
        let want: Vec<f32> = (0..10).map(|i| (i * 10_000 + 7) as f32).collect();
        assert_eq!(got.iter::<f32>().collect::<Vec<_>>(), want);

        let (workspace, count) = CubeBackend::sieve_argwhere_count(mask.clone(), it);
        assert_eq!(read_count(count), 10);
        let positions = CubeBackend::sieve_argwhere(mask, workspace, 10, it);
        assert!(
            positions.handle.size() < 1024,
            "{} bytes",
            positions.handle.size()
        );
        let got = try_read_sync(CubeBackend::int_into_data(positions))
            .unwrap()
            .unwrap();
        let want: Vec<i64> = (0..10).map(|i| i * 10_000 + 7).collect();
        assert_eq!(got.iter::<i64>().collect::<Vec<_>>(), want);

        // Runs of 20,000 equal values: five run starts.
        let runs = CubeBackend::float_floor(CubeBackend::float_div_scalar(x, 20_000.0.into()));
        let (workspace, count) =
            CubeBackend::sieve_run_starts_count(Values::Float(runs.clone()), it);
        assert_eq!(read_count(count), 5);
        let (values, at) =
            CubeBackend::sieve_run_starts(Values::Float(runs), workspace, 5, true, it);
        let values = values.float();
        assert!(values.handle.size() < 1024 && at.handle.size() < 1024);
        let got = try_read_sync(CubeBackend::int_into_data(at))
            .unwrap()
            .unwrap();
        assert_eq!(
            got.iter::<i64>().collect::<Vec<_>>(),
            [0, 20_000, 40_000, 60_000, 80_000]
        );
    }
}
