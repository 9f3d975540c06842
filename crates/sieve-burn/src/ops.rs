//! The backend extension trait: one method per primitive and tensor kind. Default bodies
//! are the stock-Burn fallbacks that backends without a sieve kernel use.

use burn::backend::{
    Backend, backend_extension,
    tensor::{FloatTensor, IntTensor},
};

/// Sieve's ops on a Burn backend.
#[backend_extension(
    Autodiff,
    // burn's `fusion` feature is always on in this crate, so Fusion is listed unconditionally.
    Fusion,
    Cube: cfg(feature = "cube"),
    Flex: cfg(feature = "flex"),
)]
pub trait SieveOps: Backend {
    /// Inclusive running sum along `dim` (any dim, any layout).
    #[fusion(dtype = x, shape = x)]
    fn sieve_float_cumsum(x: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        Self::float_cumsum(x, dim)
    }

    /// Inclusive running sum along `dim` of an Int tensor (wrapping on overflow).
    #[fusion(dtype = x, shape = x)]
    fn sieve_int_cumsum(x: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        Self::int_cumsum(x, dim)
    }
}
