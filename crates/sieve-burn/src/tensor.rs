//! What the families' public functions share (each family's `mod.rs` holds its own): the tensor
//! kinds the ops take, argument checks with Burn's messages, the index dtype, positions.

use burn::backend::{Dispatch, DispatchTensor};
use burn::tensor::{AsIndex, Float, Int, IntDType, Tensor, kind::Basic};

use crate::values::Values;

/// Tensor kinds sieve's numeric ops accept (Float and Int): each is one [`Values`] variant,
/// the operand of the ops that serve both.
pub trait SieveKind: Basic {
    /// `x` as the ops' operand.
    #[doc(hidden)]
    fn values(x: DispatchTensor) -> Values<Dispatch>;
}

impl SieveKind for Float {
    fn values(x: DispatchTensor) -> Values<Dispatch> {
        Values::Float(x)
    }
}

impl SieveKind for Int {
    fn values(x: DispatchTensor) -> Values<Dispatch> {
        Values::Int(x)
    }
}

/// `x` as the ops' operand.
pub(crate) fn operand<const D: usize, K: SieveKind>(x: Tensor<D, K>) -> Values<Dispatch> {
    K::values(x.into_dispatch())
}

/// An op's value output as a tensor of the operand's kind.
pub(crate) fn from_values<const D: usize, K: SieveKind>(x: Values<Dispatch>) -> Tensor<D, K> {
    Tensor::from_dispatch(x.into_dispatch())
}

/// The device's default index dtype (Burn's setting), which every index and count output uses.
pub(crate) fn index_dtype<const D: usize, K: Basic>(x: &Tensor<D, K>) -> IntDType {
    x.device().settings().int_dtype
}

/// `dim` as Burn's ops take it (negative counts from the end) as a `usize` below `rank`: every
/// public op normalises its dim here, first. Out of range, it panics with the message Burn's op
/// of the same name gives (`op` is Burn's name for it; Burn's own helper is crate-private).
#[track_caller]
pub(crate) fn dim_index(op: &str, dim: impl AsIndex, rank: usize) -> usize {
    dim.try_dim_index(rank).unwrap_or_else(|error| {
        panic!("=== Tensor Operation Error ===\n  Operation: '{op}'\n  Reason:\n    1. {error} \n")
    })
}

/// How an op uses its tensor's dtype (what [`check_served`] checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DtypeUse {
    /// Scanned or moved as values: the device must have the dtype.
    Values,
    /// Sorted or selected as keys: 64-bit keys sort on every device.
    Keys,
}

/// Panics, naming the dtype and the device, when `x`'s CubeCL device cannot serve `x`'s dtype
/// for `op`: before anything is queued, where under Fusion the kernels' own refusal would
/// surface only when the result is read. Other backends serve every dtype (Burn's own ops).
#[cfg_attr(not(feature = "cube"), allow(unused_variables))]
pub(crate) fn check_served<const D: usize, K: SieveKind>(
    op: &str,
    x: &Tensor<D, K>,
    dtype_use: DtypeUse,
) {
    #[cfg(feature = "cube")]
    crate::cube::refuse_unserved_dtype(op, &x.device(), x.dtype(), dtype_use);
}

/// Every element's position along `dim`, as an Int tensor of `shape`
/// (`autodiff::scanned_positions`).
pub(crate) fn positions<const D: usize>(
    shape: &burn::tensor::Shape,
    dim: usize,
    device: &burn::tensor::Device,
) -> Tensor<D, Int> {
    let index_dtype = device.settings().int_dtype;
    Tensor::from_dispatch(crate::autodiff::scanned_positions::<Dispatch>(
        shape,
        dim,
        device.as_dispatch(),
        index_dtype,
    ))
}
