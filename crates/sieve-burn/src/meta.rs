//! Output shapes of the ops with tuple outputs, for Fusion (which records them before the
//! kernel runs). They must match what the backends return; nothing checks it.

use burn::backend::fusion::custom::TensorSpec;
use burn::tensor::{IntDType, Shape};

/// Compacted values (`x`'s dtype) and counts.
pub fn compact(
    x: &TensorSpec,
    _mask: &TensorSpec,
    per_row: &bool,
    _pad: &bool,
    index_dtype: &IntDType,
) -> (TensorSpec, TensorSpec) {
    let (values, counts) = compact_shapes(&x.shape, *per_row);
    (
        TensorSpec::new(values, x.dtype),
        TensorSpec::new(counts, (*index_dtype).into()),
    )
}

/// Positions `[numel]` and count `[1]`.
pub fn argwhere(mask: &TensorSpec, index_dtype: &IntDType) -> (TensorSpec, TensorSpec) {
    (
        TensorSpec::new(
            Shape::new([mask.shape.num_elements()]),
            (*index_dtype).into(),
        ),
        TensorSpec::new(Shape::new([1]), (*index_dtype).into()),
    )
}

/// Shapes of compacted values and counts for an input of `shape`.
pub fn compact_shapes(shape: &Shape, per_row: bool) -> (Shape, Shape) {
    if per_row {
        (shape.clone(), Shape::new([shape[0]]))
    } else {
        (Shape::new([shape.num_elements()]), Shape::new([1]))
    }
}

/// `[len]`: the prefix of a compaction's output.
pub fn prefix_shape(len: &usize) -> Shape {
    Shape::new([*len])
}
