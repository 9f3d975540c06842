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

/// Run starts' values `[numel]` (`x`'s dtype), positions (`[numel]`, or `[0]` when not asked
/// for) and count `[1]`.
pub fn run_starts(
    x: &TensorSpec,
    positions: &bool,
    index_dtype: &IntDType,
) -> (TensorSpec, TensorSpec, TensorSpec) {
    let n = x.shape.num_elements();
    (
        TensorSpec::new(Shape::new([n]), x.dtype),
        TensorSpec::new(
            Shape::new([if *positions { n } else { 0 }]),
            (*index_dtype).into(),
        ),
        TensorSpec::new(Shape::new([1]), (*index_dtype).into()),
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

/// Partitioned values (`x`'s shape and dtype), indices (`x`'s shape) and counts (size 1 along
/// `dim`).
pub fn partition(
    x: &TensorSpec,
    _mask: &TensorSpec,
    dim: &usize,
    index_dtype: &IntDType,
) -> (TensorSpec, TensorSpec, TensorSpec) {
    split_specs(x, *dim, index_dtype)
}

/// As [`partition`], for the one-bit split.
pub fn split_by_bit(
    keys: &TensorSpec,
    _bit: &u32,
    dim: &usize,
    index_dtype: &IntDType,
) -> (TensorSpec, TensorSpec, TensorSpec) {
    split_specs(keys, *dim, index_dtype)
}

fn split_specs(
    x: &TensorSpec,
    dim: usize,
    index_dtype: &IntDType,
) -> (TensorSpec, TensorSpec, TensorSpec) {
    (
        x.clone(),
        TensorSpec::new(x.shape.clone(), (*index_dtype).into()),
        TensorSpec::new(counts_shape(&x.shape, dim), (*index_dtype).into()),
    )
}

/// `shape` with `dim` reduced to 1: the per-row counts of a split along `dim`.
pub fn counts_shape(shape: &Shape, dim: usize) -> Shape {
    let mut counts = shape.clone();
    counts[dim] = 1;
    counts
}

/// Sorted values (`x`'s spec) and indices (`x`'s shape).
pub fn sort_with_indices(
    x: &TensorSpec,
    _dim: &usize,
    _descending: &bool,
    index_dtype: &IntDType,
) -> (TensorSpec, TensorSpec) {
    (
        x.clone(),
        TensorSpec::new(x.shape.clone(), (*index_dtype).into()),
    )
}

/// Indices (`x`'s shape).
pub fn argsort(
    x: &TensorSpec,
    _dim: &usize,
    _descending: &bool,
    index_dtype: &IntDType,
) -> TensorSpec {
    TensorSpec::new(x.shape.clone(), (*index_dtype).into())
}

/// Positions of `values`' shape, of the index dtype.
pub fn searchsorted(
    _sorted: &TensorSpec,
    values: &TensorSpec,
    _right: &bool,
    index_dtype: &IntDType,
) -> TensorSpec {
    TensorSpec::new(values.shape.clone(), (*index_dtype).into())
}

/// `[rows, len]` f32 uniforms from `[rows]` seeds.
pub fn uniform_rows(seeds: &TensorSpec, len: &usize) -> TensorSpec {
    TensorSpec::new(Shape::new([seeds.shape[0], *len]), burn::tensor::DType::F32)
}

/// `[rows, width]` f32 uniforms at `[rows, width]` columns.
pub fn uniform_at(_seeds: &TensorSpec, columns: &TensorSpec) -> TensorSpec {
    TensorSpec::new(columns.shape.clone(), burn::tensor::DType::F32)
}

/// `[rows]` tokens of `index_dtype` from `[rows, vocab]` logits.
pub fn sample(
    logits: &TensorSpec,
    _seeds: &TensorSpec,
    _top_k: &TensorSpec,
    _top_p: &TensorSpec,
    _temperature: &TensorSpec,
    _cut: &usize,
    index_dtype: &IntDType,
) -> TensorSpec {
    TensorSpec::new(Shape::new([logits.shape[0]]), (*index_dtype).into())
}

/// `[rows]` tokens of `index_dtype` from `[rows, vocab]` logits.
pub fn sample_same(
    logits: &TensorSpec,
    _seeds: &TensorSpec,
    _top_k: &usize,
    _top_p: &f32,
    _temperature: &f32,
    index_dtype: &IntDType,
) -> TensorSpec {
    TensorSpec::new(Shape::new([logits.shape[0]]), (*index_dtype).into())
}

/// `[len]`: the prefix of a compaction's output.
pub fn prefix_shape(len: &usize) -> Shape {
    Shape::new([*len])
}

/// Top-k values (`x`'s dtype) and indices: `x`'s shape with `dim` cut to `k`.
pub fn topk(
    x: &TensorSpec,
    k: &usize,
    dim: &usize,
    _largest: &bool,
    _sorted: &bool,
    _strategy: &usize,
    index_dtype: &IntDType,
) -> (TensorSpec, TensorSpec) {
    let mut shape = x.shape.clone();
    shape[*dim] = *k;
    (
        TensorSpec::new(shape.clone(), x.dtype),
        TensorSpec::new(shape, (*index_dtype).into()),
    )
}
