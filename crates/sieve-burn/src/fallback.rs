//! Portable bodies of sieve's ops from stock Burn backend ops, for backends without sieve
//! kernels (Flex). Device-side and sync-free like the kernels: each survivor's slot is the
//! running count of the mask (stock `int_cumsum`), survivors are scattered to their slots
//! and rejected elements to one spare column that is then sliced off. Padding is zeros.

use burn::backend::{
    Backend, TensorMetadata,
    tensor::{BoolTensor, FloatTensor, IntTensor},
};
use burn::tensor::{IndexingUpdateOp, IntDType, Shape, Slice};

use crate::meta::compact_shapes;

/// Where each element goes, as `[rows, len]` column indices: survivors to their slot in the
/// row, rejected elements to the spare column `len`. Also the per-row counts `[rows]`.
fn destinations<B: Backend>(
    mask: BoolTensor<B>,
    rows: usize,
    len: usize,
    index_dtype: IntDType,
) -> (IntTensor<B>, BoolTensor<B>, IntTensor<B>) {
    let mask = B::bool_reshape(mask, Shape::new([rows, len]));
    let flags = B::bool_into_int(mask.clone(), index_dtype);
    let counts = B::int_reshape(B::int_sum_dim(flags.clone(), 1), Shape::new([rows]));
    let slots = B::int_sub_scalar(B::int_cumsum(flags, 1), 1i64.into());
    let rejected = B::bool_not(mask);
    let destinations = B::int_mask_fill(slots, rejected.clone(), (len as i64).into());
    (destinations, rejected, counts)
}

fn rows_of(shape: &Shape, per_row: bool) -> (usize, usize) {
    if per_row {
        (shape[0], shape[1])
    } else {
        (1, shape.num_elements())
    }
}

fn first_columns(len: usize) -> [Slice; 2] {
    [
        Slice {
            start: 0,
            end: None,
            step: 1,
        },
        Slice {
            start: 0,
            end: Some(len as isize),
            step: 1,
        },
    ]
}

pub fn float_compact<B: Backend>(
    x: FloatTensor<B>,
    mask: BoolTensor<B>,
    per_row: bool,
    index_dtype: IntDType,
) -> (FloatTensor<B>, IntTensor<B>) {
    let shape = x.shape();
    let (rows, len) = rows_of(&shape, per_row);
    let (values_shape, _) = compact_shapes(&shape, per_row);
    let (destinations, _, counts) = destinations::<B>(mask, rows, len, index_dtype);
    let x = B::float_reshape(x, Shape::new([rows, len]));
    let zeros = B::float_zeros(Shape::new([rows, len + 1]), &x.device(), x.dtype().into());
    let placed = B::float_scatter(1, zeros, destinations, x, IndexingUpdateOp::Assign);
    let values = B::float_slice(placed, &first_columns(len));
    (B::float_reshape(values, values_shape), counts)
}

pub fn int_compact<B: Backend>(
    x: IntTensor<B>,
    mask: BoolTensor<B>,
    per_row: bool,
    index_dtype: IntDType,
) -> (IntTensor<B>, IntTensor<B>) {
    let shape = x.shape();
    let (rows, len) = rows_of(&shape, per_row);
    let (values_shape, _) = compact_shapes(&shape, per_row);
    let (destinations, _, counts) = destinations::<B>(mask, rows, len, index_dtype);
    let x = B::int_reshape(x, Shape::new([rows, len]));
    let zeros = B::int_zeros(Shape::new([rows, len + 1]), &x.device(), x.dtype().into());
    let placed = B::int_scatter(1, zeros, destinations, x, IndexingUpdateOp::Assign);
    let values = B::int_slice(placed, &first_columns(len));
    (B::int_reshape(values, values_shape), counts)
}

pub fn argwhere<B: Backend>(
    mask: BoolTensor<B>,
    index_dtype: IntDType,
) -> (IntTensor<B>, IntTensor<B>) {
    let len = mask.shape().num_elements();
    let positions = B::int_arange(0..len as i64, &mask.device(), index_dtype);
    let mask = B::bool_reshape(mask, Shape::new([len]));
    int_compact::<B>(positions, mask, false, index_dtype)
}

/// Elements `0..len` along one axis.
pub fn prefix_slice(len: usize) -> Slice {
    Slice {
        start: 0,
        end: Some(len as isize),
        step: 1,
    }
}
