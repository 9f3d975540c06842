//! Tensor-level functions with Burn's names: what a model calls.

use burn::backend::{Dispatch, DispatchTensor};
use burn::tensor::{Float, Int, Tensor, kind::Basic};

use crate::SieveOps;

/// Tensor kinds sieve's numeric ops accept (Float and Int), routing each to its backend op.
pub trait SieveKind: Basic {
    #[doc(hidden)]
    fn cumsum(x: DispatchTensor, dim: usize) -> DispatchTensor;
}

impl SieveKind for Float {
    fn cumsum(x: DispatchTensor, dim: usize) -> DispatchTensor {
        <Dispatch as SieveOps>::sieve_float_cumsum(x, dim)
    }
}

impl SieveKind for Int {
    fn cumsum(x: DispatchTensor, dim: usize) -> DispatchTensor {
        <Dispatch as SieveOps>::sieve_int_cumsum(x, dim)
    }
}

/// Inclusive running sum along `dim`: `out[.., i, ..] = sum(x[.., 0..=i, ..])`, like Burn's
/// `Tensor::cumsum` and `torch.cumsum`, on the device in O(n) (one or two passes over the
/// data). Any dim, any layout (views are read through a contiguous copy only when needed).
///
/// Floats sum in their own precision (f16 in f32), in a fixed order: the same input gives the
/// same bits on every run. Ints wrap on overflow. Differentiable: the gradient is the
/// reversed cumsum of the output gradient.
///
/// # Panics
/// If `dim >= D`.
pub fn cumsum<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: usize) -> Tensor<D, K> {
    assert!(
        dim < D,
        "cumsum: dim = {dim} is out of range for a tensor of rank {D} (expected 0..{D})"
    );
    Tensor::from_dispatch(K::cumsum(x.into_dispatch(), dim))
}
