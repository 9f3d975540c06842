//! Running scans along a dim: [`cumsum`], [`cumprod`], [`cummin`], [`cummax`] (Float and
//! Int), on `sieve::scan`.

// The generated `Dispatch` impl names the deprecated NdArray and LibTorch backends.
#![cfg_attr(any(feature = "ndarray", feature = "tch"), allow(deprecated))]

mod autodiff;
#[cfg(feature = "cube")]
mod cube;

use burn::backend::Dispatch;
use burn::tensor::{AsIndex, Tensor};
use sieve::scan::ScanOp;

use crate::tensor::*;
use crate::values::Values;

extension_trait! {
    /// Inclusive scans along a dim. One method per op, Float and Int operands as one
    /// [`Values`]; default bodies are the stock-Burn fallbacks (`fallback.rs`).
    pub trait ScanOps {
        /// The inclusive scan along `dim` with `op` (any dim, any layout): `cumsum` (Int: wrapping
        /// on overflow), `cumprod`, `cummin`, `cummax`. A running minimum or maximum is NaN from a
        /// lane's first NaN on; the kernels keep the latest of equal values and the latest NaN
        /// (PyTorch's rule); the stock fallbacks give the same numbers, the zero's sign and NaN's
        /// payload being the backend's own op's.
        #[fusion(meta = |x, _, _| x.clone())]
        fn sieve_cumulative(
            #[extension_type] x: Values<Self>,
            dim: usize,
            op: ScanOp,
        ) -> Values<Self> {
            match (x, op) {
                (Values::Float(x), ScanOp::Sum) => Values::Float(Self::float_cumsum(x, dim)),
                (Values::Float(x), ScanOp::Prod) => Values::Float(Self::float_cumprod(x, dim)),
                (Values::Float(x), ScanOp::Min) => Values::Float(Self::float_cummin(x, dim)),
                (Values::Float(x), ScanOp::Max) => Values::Float(Self::float_cummax(x, dim)),
                (Values::Int(x), ScanOp::Sum) => Values::Int(Self::int_cumsum(x, dim)),
                (Values::Int(x), ScanOp::Prod) => Values::Int(Self::int_cumprod(x, dim)),
                (Values::Int(x), ScanOp::Min) => Values::Int(Self::int_cummin(x, dim)),
                (Values::Int(x), ScanOp::Max) => Values::Int(Self::int_cummax(x, dim)),
            }
        }
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
/// If `dim` is not in `-D..D` (negative dims count from the end; Burn's message).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1, Int>::from_data([1, 0, 2, 3], &device);
/// assert_eq!(i(sieve_burn::cumsum(x.clone(), 0)), [1, 1, 3, 6]);
/// assert_eq!(i(sieve_burn::cumsum(x, -1)), [1, 1, 3, 6]); // negative dims count from the end
/// ```
pub fn cumsum<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: impl AsIndex) -> Tensor<D, K> {
    let dim = dim_index("Cumsum", dim, D);
    check_served("cumsum", &x, DtypeUse::Values);
    from_values(Dispatch::sieve_cumulative(operand(x), dim, ScanOp::Sum))
}

/// Inclusive running product along `dim`: `out[.., i, ..] = x[.., 0, ..] * ... * x[.., i, ..]`,
/// like Burn's `Tensor::cumprod` and `torch.cumprod`, on the device in O(n) (the cumsum's
/// scan with a product). Float and Int; any dim, any layout; views.
///
/// Ints wrap on overflow (two's complement). Floats multiply in their own precision (f16 in
/// f32), rounding each product as IEEE does (`0 * inf` is NaN), in a fixed order: the same
/// bits on every run, equal to the sequential product wherever every partial product is
/// exact. Differentiable, exactly where the input has zeros (PyTorch's `cumprod_backward`).
///
/// # Panics
/// If `dim` is not in `-D..D` (negative dims count from the end; Burn's message).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let i = |t: Tensor<1, Int>| t.into_data().iter::<i64>().collect::<Vec<_>>();
/// let x = Tensor::<1, Int>::from_data([2, 3, -1, 4], &device);
/// assert_eq!(i(sieve_burn::cumprod(x, -1)), [2, 6, -6, -24]);
/// ```
pub fn cumprod<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: impl AsIndex) -> Tensor<D, K> {
    let dim = dim_index("Cumprod", dim, D);
    check_served("cumprod", &x, DtypeUse::Values);
    from_values(Dispatch::sieve_cumulative(operand(x), dim, ScanOp::Prod))
}

/// Running minimum along `dim`: `out[.., i, ..] = min(x[.., 0..=i, ..])`, like Burn's
/// `Tensor::cummin` and the values of `torch.cummin`, on the device in O(n). Float and Int;
/// any dim, any layout; views.
///
/// Once a lane meets a NaN every later output is NaN (Burn's and PyTorch's rule). Outputs are
/// input values moved bit for bit; of equal values the latest is kept (PyTorch's rule: so
/// -0.0 and +0.0 come out as the latest of them, and after NaNs the latest NaN).
/// Differentiable: each output's gradient goes to the position it came from (the latest
/// position holding the running minimum, or the latest NaN: PyTorch's indices).
///
/// # Panics
/// If `dim` is not in `-D..D` (negative dims count from the end; Burn's message).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<2>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let x = Tensor::<2>::from_data([[3.0, 5.0, 2.0], [4.0, 1.0, 6.0]], &device);
/// assert_eq!(f(sieve_burn::cummin(x.clone(), 1)), [3.0, 3.0, 2.0, 4.0, 1.0, 1.0]);
/// assert_eq!(f(sieve_burn::cummin(x, 0)), [3.0, 5.0, 2.0, 3.0, 1.0, 2.0]);
/// ```
pub fn cummin<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: impl AsIndex) -> Tensor<D, K> {
    let dim = dim_index("Cummin", dim, D);
    check_served("cummin", &x, DtypeUse::Values);
    from_values(Dispatch::sieve_cumulative(operand(x), dim, ScanOp::Min))
}

/// Running maximum along `dim`: `out[.., i, ..] = max(x[.., 0..=i, ..])`, like Burn's
/// `Tensor::cummax` and the values of `torch.cummax`; NaN, ties and gradients as
/// [`cummin`]'s.
///
/// # Panics
/// If `dim` is not in `-D..D` (negative dims count from the end; Burn's message).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let f = |t: Tensor<1>| t.into_data().iter::<f32>().collect::<Vec<_>>();
/// let x = Tensor::<1>::from_data([1.0, 3.0, 2.0, f32::NAN, 5.0], &device);
/// let y = f(sieve_burn::cummax(x, 0));
/// assert_eq!(y[..3], [1.0, 3.0, 3.0]);
/// assert!(y[3].is_nan() && y[4].is_nan()); // a NaN sticks
/// ```
pub fn cummax<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: impl AsIndex) -> Tensor<D, K> {
    let dim = dim_index("Cummax", dim, D);
    check_served("cummax", &x, DtypeUse::Values);
    from_values(Dispatch::sieve_cumulative(operand(x), dim, ScanOp::Max))
}
