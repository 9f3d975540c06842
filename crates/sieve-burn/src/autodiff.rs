//! Gradients of sieve's ops. The forward pass runs the inner backend's sieve kernel.

use burn::backend::Backend;
use burn::backend::autodiff::{
    Autodiff,
    checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
    grads::Gradients,
    ops::{Backward, Ops, OpsKind},
};
use burn::backend::tensor::{FloatTensor, IntTensor};

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
}
