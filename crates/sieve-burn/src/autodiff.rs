//! What the families' Autodiff impls share (each family's `autodiff.rs` holds its ops'
//! gradients): moving operands between the Autodiff backend and the inner one, the
//! inner backend's scans, and the backward of every op whose outputs are gathered from its
//! input. The forward pass always runs the inner backend's sieve kernel.

use burn::backend::TensorMetadata;
use burn::backend::autodiff::{
    Autodiff,
    checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
    grads::Gradients,
    ops::{Backward, Ops, OpsKind},
};
use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::backend::{AutodiffBackend, Backend};
use burn::tensor::{DType, FloatDType, IntDType, Shape};

use crate::SieveOps;
use crate::values::Values;
use sieve::scan::ScanOp;

/// An Int result of the inner backend as the Autodiff backend's (Int tensors are the inner
/// backend's own).
pub(crate) fn int_values<B: Backend, C: CheckpointStrategy>(
    values: Values<B>,
) -> Values<Autodiff<B, C>> {
    Values::Int(values.int())
}

/// An operand as the inner backend's, leaving the graph (for results with no gradient).
pub(crate) fn inner_values<B: Backend, C: CheckpointStrategy>(
    x: Values<Autodiff<B, C>>,
) -> Values<B> {
    match x {
        Values::Float(x) => Values::Float(x.into_primitive()),
        Values::Int(x) => Values::Int(x),
    }
}

/// An inner backend's result as the Autodiff backend's, untracked (a Float one is a new
/// leaf with no gradient).
pub(crate) fn outer_values<B: Backend, C: CheckpointStrategy>(
    x: Values<B>,
) -> Values<Autodiff<B, C>> {
    match x {
        Values::Float(x) => Values::Float(<Autodiff<B, C> as AutodiffBackend>::from_inner(x)),
        Values::Int(x) => Values::Int(x),
    }
}

/// Runs `op` on `x`'s inner tensor; `op` returns values gathered from `x` along `dim`, the
/// indices they came from, and any other output. Records [`PermutationBackward`] when `x` is
/// tracked (the split, the sort, top-k).
pub(crate) fn gathered<B: Backend + SieveOps, C: CheckpointStrategy, E>(
    x: FloatTensor<Autodiff<B, C>>,
    dim: usize,
    op: impl FnOnce(FloatTensor<B>) -> (FloatTensor<B>, IntTensor<B>, E),
) -> (FloatTensor<Autodiff<B, C>>, IntTensor<B>, E) {
    match PermutationBackward
        .prepare::<C>([x.node()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let shape = x.primitive().shape();
            let (values, indices, extra) = op(x.primitive().clone());
            (
                prep.finish((indices.clone(), shape, dim), values),
                indices,
                extra,
            )
        }
        OpsKind::UnTracked(prep) => {
            let (values, indices, extra) = op(x.into_primitive());
            (prep.finish(values), indices, extra)
        }
    }
}

/// Backward of ops whose output is gathered from the input along a dim
/// (`out[j] = x[indices[j]]`: a permutation for the sort and split, the selected positions
/// for top-k): the input's gradient is the output's scattered back through the indices
/// (distinct along the dim, so each add meets a zero: exact in any order), zeros elsewhere.
#[derive(Debug)]
pub(crate) struct PermutationBackward;

impl<B: Backend + SieveOps> Backward<B, 1> for PermutationBackward {
    type State = (IntTensor<B>, Shape, usize);

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [parent] = ops.parents;
        let grad = grads.consume::<B>(&ops.node);
        let (indices, shape, dim) = ops.state;
        if let Some(node) = parent {
            grads.register::<B>(node.id, scatter_add_grad::<B>(shape, dim, indices, grad));
        }
    }
}

/// Every element's position along `dim`, broadcast to `shape`: the running sum of ones less
/// one (sieve's scan), where Burn 0.22's Int `arange` through wgpu goes wrong past 65,535
/// elements (on lavapipe: 134,466 of 200,001 positions wrong).
pub(crate) fn scanned_positions<B: Backend + SieveOps>(
    shape: &Shape,
    dim: usize,
    device: &burn::backend::tensor::Device<B>,
    index_dtype: IntDType,
) -> IntTensor<B> {
    let ones = B::int_ones(Shape::new([shape[dim]]), device, index_dtype);
    let along = B::int_sub_scalar(int_scan::<B>(ones, 0, ScanOp::Sum), 1i64.into());
    crate::fallback::spread::<B>(along, shape, dim)
}

/// The inner backend's scan of a Float tensor.
pub(crate) fn float_scan<B: SieveOps>(x: FloatTensor<B>, dim: usize, op: ScanOp) -> FloatTensor<B> {
    B::sieve_cumulative(Values::Float(x), dim, op).float()
}

/// The inner backend's scan of an Int tensor.
pub(crate) fn int_scan<B: SieveOps>(x: IntTensor<B>, dim: usize, op: ScanOp) -> IntTensor<B> {
    B::sieve_cumulative(Values::Int(x), dim, op).int()
}

/// The gradient of an op whose outputs each copy one input element: zeros of the input's
/// `shape`, with `grad` added at `indices` along `dim` (an input that feeds several outputs
/// gets their sum). Burn's scatter-add, which runs parallel atomic adds where the device has
/// them. f16 and bf16 gradients are added in f32 and rounded once: exact for `cummin` and
/// `cummax`, whose sources feed runs of outputs (a 16-bit running sum would round at every
/// add, in an order the atomics choose), and no 16-bit float atomic adds needed. Where every
/// source is distinct (the sort, the split, top-k) each add meets a zero, so the result is
/// exact in any order. (Every bf16 gradient through the H200's Vulkan driver comes back zero,
/// stock Burn's own `(x * w).sum()` backward included: `bench/results/h200/8-check`. That is
/// upstream of this function, which this change did not and could not fix.)
pub(crate) fn scatter_add_grad<B: Backend>(
    shape: Shape,
    dim: usize,
    indices: IntTensor<B>,
    grad: FloatTensor<B>,
) -> FloatTensor<B> {
    let dtype = grad.dtype();
    let narrow = matches!(dtype, DType::F16 | DType::BF16);
    let grad = if narrow {
        B::float_cast(grad, FloatDType::F32)
    } else {
        grad
    };
    let zeros = B::float_zeros(shape, &grad.device(), grad.dtype().into());
    let sum = B::float_scatter(
        dim,
        zeros,
        indices,
        grad,
        burn::tensor::IndexingUpdateOp::Add,
    );
    if narrow {
        B::float_cast(sum, dtype.into())
    } else {
        sum
    }
}
