//! [`super::ScanOps`] on the CubeCL backend.

use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use sieve::scan::{self, ColumnProblem, ScanKind, ScanOp, ScanOptions, ScanProblem};

use super::ScanOps;
use crate::cube::*;
use crate::values::Values;

impl ScanOps for CubeBackend {
    fn sieve_cumulative(x: Values<Self>, dim: usize, op: ScanOp) -> Values<Self> {
        let (kind, x) = Kind::of(x);
        kind.wrap(scan_along(x, dim, op))
    }
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
    restore_axes(output, &swap)
}
