//! [`super::SortOps`] on the CubeCL backend.

use burn::tensor::IntDType;
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use sieve::Dtype;
use sieve::sort::{self as radix, SortIo, SortOptions, SortOrder, SortProblem};
use sieve::topk::{self, TopkIo, TopkOptions, TopkProblem, TopkStrategy};

use super::SortOps;
use crate::cube::*;
use crate::values::Values;

impl SortOps for CubeBackend {
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

    fn sieve_searchsorted(
        sorted: Values<Self>,
        values: Values<Self>,
        right: bool,
        index_dtype: IntDType,
    ) -> CubeTensor {
        search(Kind::of(sorted).1, Kind::of(values).1, right, index_dtype)
    }
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
    let restore = |t: CubeTensor| restore_axes(t, &swap);
    (values.map(restore), indices.map(restore))
}

/// Top-k of every row along `dim` (see `SortOps::sieve_topk`): `sieve::topk` on the
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
    let restore = |t: CubeTensor| restore_axes(t, &swap);
    (restore(values), restore(indices))
}

/// `sieve::search` of every element of `values` in the 1-D `sorted` (see
/// `SortOps::sieve_searchsorted`).
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
