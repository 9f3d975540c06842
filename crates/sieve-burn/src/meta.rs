//! Output shapes of the ops with tuple outputs, for Fusion (which records them before the
//! kernel runs). They must match what the backends return; nothing checks it.

use burn::backend::fusion::custom::TensorSpec;
use burn::tensor::{IntDType, Shape};

use crate::values::ValuesMetadata;

/// Compacted values (`x`'s dtype) and counts.
pub fn compact(
    x: &ValuesMetadata,
    _mask: &TensorSpec,
    per_row: &bool,
    _pad: &bool,
    index_dtype: &IntDType,
) -> (ValuesMetadata, TensorSpec) {
    let spec = x.spec();
    let (values, counts) = compact_shapes(&spec.shape, *per_row);
    (
        x.with(TensorSpec::new(values, spec.dtype)),
        TensorSpec::new(counts, (*index_dtype).into()),
    )
}

/// Run starts' values `[numel]` (`x`'s dtype), positions (`[numel]`, or `[0]` when not asked
/// for) and count `[1]`.
pub fn run_starts(
    x: &ValuesMetadata,
    positions: &bool,
    index_dtype: &IntDType,
) -> (ValuesMetadata, TensorSpec, TensorSpec) {
    let spec = x.spec();
    let n = spec.shape.num_elements();
    (
        x.with(TensorSpec::new(Shape::new([n]), spec.dtype)),
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
    x: &ValuesMetadata,
    _mask: &TensorSpec,
    dim: &usize,
    index_dtype: &IntDType,
) -> (ValuesMetadata, TensorSpec, TensorSpec) {
    let (values, indices, counts) = split_specs(x.spec(), *dim, index_dtype);
    (x.with(values), indices, counts)
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
pub fn argsort(
    x: &ValuesMetadata,
    _dim: &usize,
    _descending: &bool,
    index_dtype: &IntDType,
) -> TensorSpec {
    TensorSpec::new(x.spec().shape.clone(), (*index_dtype).into())
}

/// Positions of `values`' shape, of the index dtype.
pub fn searchsorted(
    _sorted: &ValuesMetadata,
    values: &ValuesMetadata,
    _right: &bool,
    index_dtype: &IntDType,
) -> TensorSpec {
    TensorSpec::new(values.spec().shape.clone(), (*index_dtype).into())
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

/// `[len]` of `x`'s kind and dtype: the prefix of a compaction's output.
pub fn prefix(x: &ValuesMetadata, len: &usize) -> ValuesMetadata {
    x.with(TensorSpec::new(Shape::new([*len]), x.spec().dtype))
}

/// Top-k values (`x`'s dtype) and indices: `x`'s shape with `dim` cut to `k`.
pub fn topk(
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
