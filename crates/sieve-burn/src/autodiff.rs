//! Gradients of sieve's ops. The forward pass runs the inner backend's sieve kernel.

use burn::backend::Backend;
use burn::backend::autodiff::{
    Autodiff,
    checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
    grads::Gradients,
    ops::{Backward, Ops, OpsKind},
};
use burn::backend::tensor::{BoolTensor, FloatTensor, IntTensor};
use burn::backend::{TensorMetadata, get_device_settings};
use burn::tensor::{IntDType, Shape};

use crate::SieveOps;

impl<B: Backend + SieveOps, C: CheckpointStrategy> SieveOps for Autodiff<B, C> {
    fn sieve_float_cumsum(x: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        /// d(cumsum)/dx: output i depends on every input j <= i, so input j's gradient is the
        /// sum of the output gradients at i >= j - the reversed cumsum of the gradient.
        #[derive(Debug)]
        struct CumsumBackward;

        impl<B: Backend + SieveOps> Backward<B, 1> for CumsumBackward {
            type State = usize;

            fn backward(self, ops: Ops<usize, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
                let [parent] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let dim = ops.state;
                if let Some(node) = parent {
                    let flipped = B::float_flip(grad, &[dim]);
                    let summed = B::sieve_float_cumsum(flipped, dim);
                    grads.register::<B>(node.id, B::float_flip(summed, &[dim]));
                }
            }
        }

        match CumsumBackward
            .prepare::<C>([x.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let output = B::sieve_float_cumsum(x.primitive().clone(), dim);
                prep.finish(dim, output)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::sieve_float_cumsum(x.into_primitive(), dim)),
        }
    }

    fn sieve_int_cumsum(x: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        B::sieve_int_cumsum(x, dim)
    }

    fn sieve_float_compact(
        x: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        per_row: bool,
        pad: bool,
        index_dtype: IntDType,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
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
                            B::int_sub_scalar(B::sieve_int_cumsum(flags, 1), 1i64.into()),
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
                let (values, counts) =
                    B::sieve_float_compact(x.primitive().clone(), mask, per_row, pad, index_dtype);
                (prep.finish(state, values), counts)
            }
            OpsKind::UnTracked(prep) => {
                let (values, counts) =
                    B::sieve_float_compact(x.into_primitive(), mask, per_row, pad, index_dtype);
                (prep.finish(values), counts)
            }
        }
    }

    fn sieve_int_compact(
        x: IntTensor<Self>,
        mask: BoolTensor<Self>,
        per_row: bool,
        pad: bool,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::sieve_int_compact(x, mask, per_row, pad, index_dtype)
    }

    fn sieve_bool_argwhere(
        mask: BoolTensor<Self>,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::sieve_bool_argwhere(mask, index_dtype)
    }

    fn sieve_float_partition(
        x: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        dim: usize,
        index_dtype: IntDType,
    ) -> (FloatTensor<Self>, IntTensor<Self>, IntTensor<Self>) {
        gathered::<B, C, _>(x, dim, |x| {
            B::sieve_float_partition(x, mask, dim, index_dtype)
        })
    }

    fn sieve_int_partition(
        x: IntTensor<Self>,
        mask: BoolTensor<Self>,
        dim: usize,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>, IntTensor<Self>) {
        B::sieve_int_partition(x, mask, dim, index_dtype)
    }

    fn sieve_int_split_by_bit(
        keys: IntTensor<Self>,
        bit: u32,
        dim: usize,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>, IntTensor<Self>) {
        B::sieve_int_split_by_bit(keys, bit, dim, index_dtype)
    }

    fn sieve_float_sort_with_indices(
        x: FloatTensor<Self>,
        dim: usize,
        descending: bool,
        index_dtype: IntDType,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (values, indices, ()) = gathered::<B, C, _>(x, dim, |x| {
            let (values, indices) =
                B::sieve_float_sort_with_indices(x, dim, descending, index_dtype);
            (values, indices, ())
        });
        (values, indices)
    }

    /// The gradient lands on the selected positions (the indices are distinct within a
    /// row, so the scatter is exact), zeros elsewhere.
    fn sieve_float_topk(
        x: FloatTensor<Self>,
        k: usize,
        dim: usize,
        largest: bool,
        sorted: bool,
        strategy: usize,
        index_dtype: IntDType,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (values, indices, ()) = gathered::<B, C, _>(x, dim, |x| {
            let (values, indices) =
                B::sieve_float_topk(x, k, dim, largest, sorted, strategy, index_dtype);
            (values, indices, ())
        });
        (values, indices)
    }

    fn sieve_int_topk(
        x: IntTensor<Self>,
        k: usize,
        dim: usize,
        largest: bool,
        sorted: bool,
        strategy: usize,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::sieve_int_topk(x, k, dim, largest, sorted, strategy, index_dtype)
    }

    fn sieve_float_sort(x: FloatTensor<Self>, dim: usize, descending: bool) -> FloatTensor<Self> {
        let index_dtype = get_device_settings::<B>(&x.primitive().device()).int_dtype;
        Self::sieve_float_sort_with_indices(x, dim, descending, index_dtype).0
    }

    fn sieve_float_argsort(
        x: FloatTensor<Self>,
        dim: usize,
        descending: bool,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        B::sieve_float_argsort(x.into_primitive(), dim, descending, index_dtype)
    }

    fn sieve_int_sort_with_indices(
        x: IntTensor<Self>,
        dim: usize,
        descending: bool,
        index_dtype: IntDType,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::sieve_int_sort_with_indices(x, dim, descending, index_dtype)
    }

    fn sieve_int_sort(x: IntTensor<Self>, dim: usize, descending: bool) -> IntTensor<Self> {
        B::sieve_int_sort(x, dim, descending)
    }

    fn sieve_int_argsort(
        x: IntTensor<Self>,
        dim: usize,
        descending: bool,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        B::sieve_int_argsort(x, dim, descending, index_dtype)
    }

    fn sieve_float_prefix(x: FloatTensor<Self>, len: usize) -> FloatTensor<Self> {
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
                prep.finish(total, B::sieve_float_prefix(x.primitive().clone(), len))
            }
            OpsKind::UnTracked(prep) => prep.finish(B::sieve_float_prefix(x.into_primitive(), len)),
        }
    }

    fn sieve_int_prefix(x: IntTensor<Self>, len: usize) -> IntTensor<Self> {
        B::sieve_int_prefix(x, len)
    }
}

/// Runs `op` on `x`'s inner tensor; `op` returns values gathered from `x` along `dim`, the
/// indices they came from, and any other output. Records [`PermutationBackward`] when `x` is
/// tracked (the split, the sort, top-k).
fn gathered<B: Backend + SieveOps, C: CheckpointStrategy, E>(
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
/// (distinct along the dim, so the scatter-add is exact and deterministic), zeros elsewhere.
#[derive(Debug)]
struct PermutationBackward;

impl<B: Backend + SieveOps> Backward<B, 1> for PermutationBackward {
    type State = (IntTensor<B>, Shape, usize);

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [parent] = ops.parents;
        let grad = grads.consume::<B>(&ops.node);
        let (indices, shape, dim) = ops.state;
        if let Some(node) = parent {
            let zeros = B::float_zeros(shape, &grad.device(), grad.dtype().into());
            let back = B::float_scatter(
                dim,
                zeros,
                indices,
                grad,
                burn::tensor::IndexingUpdateOp::Add,
            );
            grads.register::<B>(node.id, back);
        }
    }
}
