//! [`super::CompactOps`] on the Autodiff backend: gradients where torch has them.

use burn::backend::autodiff::{
    Autodiff,
    checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
    grads::Gradients,
    ops::{Backward, Ops, OpsKind},
};
use burn::backend::tensor::{BoolTensor, FloatTensor, IntTensor};
use burn::backend::{Backend, TensorMetadata};
use burn::tensor::{IntDType, Shape};
use sieve::scan::ScanOp;

use super::CompactOps;
use crate::SieveOps;
use crate::autodiff::*;
use crate::values::Values;

impl<B: Backend + SieveOps, C: CheckpointStrategy> CompactOps for Autodiff<B, C> {
    fn sieve_compact(
        x: Values<Self>,
        mask: BoolTensor<Self>,
        per_row: bool,
        pad: bool,
        index_dtype: IntDType,
    ) -> (Values<Self>, IntTensor<Self>) {
        let x = match x {
            Values::Float(x) => x,
            Values::Int(x) => {
                let (values, counts) =
                    B::sieve_compact(Values::Int(x), mask, per_row, pad, index_dtype);
                return (int_values(values), counts);
            }
        };
        let mut counts = None;
        let values = compacted::<B, C>(x, mask.clone(), per_row, index_dtype, |x| {
            let (values, row_counts) =
                B::sieve_compact(Values::Float(x), mask, per_row, pad, index_dtype);
            counts = Some(row_counts);
            values.float()
        });
        (Values::Float(values), counts.expect("the forward ran"))
    }

    fn sieve_mask_select_count(
        x: Values<Self>,
        mask: BoolTensor<Self>,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::sieve_mask_select_count(inner_values(x), mask, index_dtype)
    }

    fn sieve_mask_select(
        x: Values<Self>,
        mask: BoolTensor<Self>,
        workspace: IntTensor<Self>,
        count: usize,
        index_dtype: IntDType,
    ) -> Values<Self> {
        let x = match x {
            Values::Float(x) => x,
            Values::Int(x) => {
                let values =
                    B::sieve_mask_select(Values::Int(x), mask, workspace, count, index_dtype);
                return int_values(values);
            }
        };
        let values = compacted::<B, C>(x, mask.clone(), false, index_dtype, |x| {
            B::sieve_mask_select(Values::Float(x), mask, workspace, count, index_dtype).float()
        });
        Values::Float(values)
    }

    fn sieve_argwhere_count(
        mask: BoolTensor<Self>,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::sieve_argwhere_count(mask, index_dtype)
    }

    fn sieve_argwhere(
        mask: BoolTensor<Self>,
        workspace: IntTensor<Self>,
        count: usize,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        B::sieve_argwhere(mask, workspace, count, index_dtype)
    }

    fn sieve_run_starts_count(
        x: Values<Self>,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::sieve_run_starts_count(inner_values(x), index_dtype)
    }

    /// Not differentiable (as `torch.unique`): the values leave the graph.
    fn sieve_run_starts(
        x: Values<Self>,
        workspace: IntTensor<Self>,
        count: usize,
        positions: bool,
        index_dtype: IntDType,
    ) -> (Values<Self>, IntTensor<Self>) {
        let (values, positions) =
            B::sieve_run_starts(inner_values(x), workspace, count, positions, index_dtype);
        (outer_values(values), positions)
    }

    fn sieve_distinct_count(
        x: Values<Self>,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::sieve_distinct_count(inner_values(x), index_dtype)
    }

    /// Not differentiable (as `torch.unique`): the values leave the graph.
    fn sieve_distinct(
        x: Values<Self>,
        workspace: IntTensor<Self>,
        count: usize,
        index_dtype: IntDType,
    ) -> Values<Self> {
        outer_values(B::sieve_distinct(
            inner_values(x),
            workspace,
            count,
            index_dtype,
        ))
    }

    fn sieve_partition(
        x: Values<Self>,
        mask: BoolTensor<Self>,
        dim: usize,
        index_dtype: IntDType,
    ) -> (Values<Self>, IntTensor<Self>, IntTensor<Self>) {
        let x = match x {
            Values::Float(x) => x,
            Values::Int(x) => {
                let (values, indices, counts) =
                    B::sieve_partition(Values::Int(x), mask, dim, index_dtype);
                return (int_values(values), indices, counts);
            }
        };
        let (values, indices, counts) = gathered::<B, C, _>(x, dim, |x| {
            let (values, indices, counts) =
                B::sieve_partition(Values::Float(x), mask, dim, index_dtype);
            (values.float(), indices, counts)
        });
        (Values::Float(values), indices, counts)
    }

    fn sieve_int_split_by_bit(
        keys: IntTensor<Self>,
        bit: u32,
        dim: usize,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>, IntTensor<Self>) {
        B::sieve_int_split_by_bit(keys, bit, dim, index_dtype)
    }
}

/// The Float result of a compaction of `x` by `mask` (`forward`, on the inner backend),
/// tracked: its gradient is [`survivors_grad`]'s (`per_row`: `x` is `[rows, n]`, each row
/// compacted on its own; else the flat tensor).
fn compacted<B: Backend + SieveOps, C: CheckpointStrategy>(
    x: FloatTensor<Autodiff<B, C>>,
    mask: BoolTensor<B>,
    per_row: bool,
    index_dtype: IntDType,
    forward: impl FnOnce(FloatTensor<B>) -> FloatTensor<B>,
) -> FloatTensor<Autodiff<B, C>> {
    /// Output slot `s` of a row holds the row's `s`-th survivor: see [`survivors_grad`].
    #[derive(Debug)]
    struct CompactBackward;

    #[derive(Debug, Clone)]
    struct State<B: Backend> {
        mask: BoolTensor<B>,
        shape: Shape,
        per_row: bool,
        index_dtype: IntDType,
    }

    impl<B: Backend + SieveOps> Backward<B, 1> for CompactBackward {
        type State = State<B>;

        fn backward(self, ops: Ops<State<B>, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
            let [parent] = ops.parents;
            let grad = grads.consume::<B>(&ops.node);
            let State {
                mask,
                shape,
                per_row,
                index_dtype,
            } = ops.state;
            if let Some(node) = parent {
                let (rows, len) = if per_row {
                    (shape[0], shape[1])
                } else {
                    (1, shape.num_elements())
                };
                let grad = survivors_grad::<B>(grad, mask, shape, rows, len, index_dtype);
                grads.register::<B>(node.id, grad);
            }
        }
    }

    match CompactBackward
        .prepare::<C>([x.node()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let state = State {
                mask,
                shape: x.primitive().shape(),
                per_row,
                index_dtype,
            };
            prep.finish(state, forward(x.primitive().clone()))
        }
        OpsKind::UnTracked(prep) => prep.finish(forward(x.into_primitive())),
    }
}

/// The gradient of a compaction by `mask` (`x`'s `shape`) from its output gradient `grad`
/// (`[rows, width]` once reshaped: `width` is the row length of a padded compaction, or a
/// one-row compaction's count): output slot `s` of a row holds the row's `s`-th survivor, so
/// input element `i`'s gradient is the output gradient at its slot (the running count of the
/// mask up to it, minus one) when it survived, and zero otherwise. Slots past the survivors
/// (padding) feed nothing.
fn survivors_grad<B: Backend + SieveOps>(
    grad: FloatTensor<B>,
    mask: BoolTensor<B>,
    shape: Shape,
    rows: usize,
    len: usize,
    index_dtype: IntDType,
) -> FloatTensor<B> {
    let mut width = grad.shape().num_elements() / rows.max(1);
    if rows * len == 0 {
        return B::float_reshape(grad, shape);
    }
    let mut grad = grad;
    if width == 0 {
        // Nothing survived: one zero slot to gather from (which the mask then drops). The
        // empty output gradient is not read: a `float_cat` of it with the zero slot left the
        // result unwritten through Fusion now and then when other threads ran Burn ops beside
        // it (`filter_ops::gradient_of_nothing_selected_beside_other_threads`: stale integers
        // in every element; on lavapipe and the H100's CUDA). Not traced further: the same cat
        // in plain Burn ops, three threads, did not fail.
        grad = B::float_zeros(Shape::new([rows, 1]), &grad.device(), grad.dtype().into());
        width = 1;
    }
    let mask = B::bool_reshape(mask, Shape::new([rows, len]));
    let flags = B::bool_into_int(mask.clone(), index_dtype);
    let slots = B::int_clamp_min(
        B::int_sub_scalar(int_scan::<B>(flags, 1, ScanOp::Sum), 1i64.into()),
        0i64.into(),
    );
    let grad = B::float_reshape(grad, Shape::new([rows, width]));
    let gathered = B::float_gather(1, grad, slots);
    let kept = B::float_mask_fill(gathered, B::bool_not(mask), 0.0f64.into());
    B::float_reshape(kept, shape)
}
