//! [`super::CompactOps`] on the Autodiff backend: gradients where torch has them.

use burn::backend::autodiff::{
    Autodiff,
    checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
    grads::Gradients,
    ops::{Backward, Ops, OpsKind},
};
use burn::backend::tensor::{BoolTensor, IntTensor};
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
        /// Output slot `s` of a row holds the row's `s`-th survivor, so input element `i`'s
        /// gradient is the output gradient at its slot (the running count of the mask up to
        /// it, minus one) when it survived, and zero otherwise. Padding slots feed nothing.
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
                    let rows_shape = Shape::new([rows, len]);
                    let grad = if rows * len == 0 {
                        B::float_reshape(grad, shape)
                    } else {
                        let mask = B::bool_reshape(mask, rows_shape.clone());
                        let flags = B::bool_into_int(mask.clone(), index_dtype);
                        let slots = B::int_clamp_min(
                            B::int_sub_scalar(int_scan::<B>(flags, 1, ScanOp::Sum), 1i64.into()),
                            0i64.into(),
                        );
                        let grad = B::float_reshape(grad, rows_shape);
                        let gathered = B::float_gather(1, grad, slots);
                        let kept = B::float_mask_fill(gathered, B::bool_not(mask), 0.0f64.into());
                        B::float_reshape(kept, shape)
                    };
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
                    mask: mask.clone(),
                    shape: x.primitive().shape(),
                    per_row,
                    index_dtype,
                };
                let x = Values::Float(x.primitive().clone());
                let (values, counts) = B::sieve_compact(x, mask, per_row, pad, index_dtype);
                (Values::Float(prep.finish(state, values.float())), counts)
            }
            OpsKind::UnTracked(prep) => {
                let x = Values::Float(x.into_primitive());
                let (values, counts) = B::sieve_compact(x, mask, per_row, pad, index_dtype);
                (Values::Float(prep.finish(values.float())), counts)
            }
        }
    }

    /// Not differentiable (as `torch.unique`): the values leave the graph.
    fn sieve_run_starts(
        x: Values<Self>,
        positions: bool,
        index_dtype: IntDType,
    ) -> (Values<Self>, IntTensor<Self>, IntTensor<Self>) {
        let (values, positions, count) =
            B::sieve_run_starts(inner_values(x), positions, index_dtype);
        (outer_values(values), positions, count)
    }

    fn sieve_bool_argwhere(
        mask: BoolTensor<Self>,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::sieve_bool_argwhere(mask, index_dtype)
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

    fn sieve_prefix(x: Values<Self>, len: usize) -> Values<Self> {
        let x = match x {
            Values::Float(x) => x,
            Values::Int(x) => return int_values(B::sieve_prefix(Values::Int(x), len)),
        };
        /// The prefix's gradient lands on the first `len` elements; the rest get zero.
        #[derive(Debug)]
        struct PrefixBackward;

        impl<B: Backend + SieveOps> Backward<B, 1> for PrefixBackward {
            type State = usize;

            fn backward(self, ops: Ops<usize, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
                let [parent] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let total = ops.state;
                if let Some(node) = parent {
                    let len = grad.shape().num_elements();
                    let padding = B::float_zeros(
                        Shape::new([total - len]),
                        &grad.device(),
                        grad.dtype().into(),
                    );
                    grads.register::<B>(node.id, B::float_cat(vec![grad, padding], 0));
                }
            }
        }

        let total = x.primitive().shape().num_elements();
        match PrefixBackward
            .prepare::<C>([x.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let prefix = B::sieve_prefix(Values::Float(x.primitive().clone()), len);
                Values::Float(prep.finish(total, prefix.float()))
            }
            OpsKind::UnTracked(prep) => {
                let prefix = B::sieve_prefix(Values::Float(x.into_primitive()), len);
                Values::Float(prep.finish(prefix.float()))
            }
        }
    }
}
