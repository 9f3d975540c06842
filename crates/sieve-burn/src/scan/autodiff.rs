//! [`super::ScanOps`] on the Autodiff backend: gradients where torch has them.

use burn::backend::autodiff::{
    Autodiff,
    checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
    grads::Gradients,
    ops::{Backward, Ops, OpsKind},
};
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, TensorMetadata, get_device_settings};
use sieve::scan::ScanOp;

use super::ScanOps;
use crate::SieveOps;
use crate::autodiff::*;
use crate::values::Values;

impl<B: Backend + SieveOps, C: CheckpointStrategy> ScanOps for Autodiff<B, C> {
    fn sieve_cumulative(x: Values<Self>, dim: usize, op: ScanOp) -> Values<Self> {
        let x = match x {
            Values::Float(x) => x,
            Values::Int(x) => return int_values(B::sieve_cumulative(Values::Int(x), dim, op)),
        };
        Values::Float(match op {
            ScanOp::Sum => cumsum::<B, C>(x, dim),
            ScanOp::Prod => cumprod::<B, C>(x, dim),
            ScanOp::Min | ScanOp::Max => running_extreme::<B, C>(x, dim, op),
        })
    }
}

/// `cumsum` of a Float operand, with its gradient.
fn cumsum<B: Backend + SieveOps, C: CheckpointStrategy>(
    x: FloatTensor<Autodiff<B, C>>,
    dim: usize,
) -> FloatTensor<Autodiff<B, C>> {
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
                grads.register::<B>(node.id, reverse_cumsum::<B>(grad, dim));
            }
        }
    }

    match CumsumBackward
        .prepare::<C>([x.node()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let output = float_scan::<B>(x.primitive().clone(), dim, ScanOp::Sum);
            prep.finish(dim, output)
        }
        OpsKind::UnTracked(prep) => {
            prep.finish(float_scan::<B>(x.into_primitive(), dim, ScanOp::Sum))
        }
    }
}

/// `cumprod` of a Float operand, with its gradient.
fn cumprod<B: Backend + SieveOps, C: CheckpointStrategy>(
    x: FloatTensor<Autodiff<B, C>>,
    dim: usize,
) -> FloatTensor<Autodiff<B, C>> {
    /// See [`cumprod_gradient`]; the state is the input and the dim.
    #[derive(Debug)]
    struct CumprodBackward;

    impl<B: Backend + SieveOps> Backward<B, 1> for CumprodBackward {
        type State = (FloatTensor<B>, usize);

        fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
            let [parent] = ops.parents;
            let grad = grads.consume::<B>(&ops.node);
            let (x, dim) = ops.state;
            if let Some(node) = parent {
                grads.register::<B>(node.id, cumprod_gradient::<B>(x, grad, dim));
            }
        }
    }

    match CumprodBackward
        .prepare::<C>([x.node()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let output = float_scan::<B>(x.primitive().clone(), dim, ScanOp::Prod);
            prep.finish((x.primitive().clone(), dim), output)
        }
        OpsKind::UnTracked(prep) => {
            prep.finish(float_scan::<B>(x.into_primitive(), dim, ScanOp::Prod))
        }
    }
}

/// `flip(cumsum(flip(t)))` along `dim`: element `j` sums `t` over `i >= j`.
fn reverse_cumsum<B: Backend + SieveOps>(t: FloatTensor<B>, dim: usize) -> FloatTensor<B> {
    let summed = float_scan::<B>(B::float_flip(t, &[dim]), dim, ScanOp::Sum);
    B::float_flip(summed, &[dim])
}

/// The gradient of `cumprod(x)` along `dim` given the output's gradient `g`, exact where `x`
/// has zeros: PyTorch's `cumprod_backward` formulation. Input `i`'s gradient is
/// `sum over j >= i of g[j] * prod(x[k] for k <= j, k != i)`. Each lane splits at its first
/// zero `z` (the lane's length when it has none):
/// - before `z` every factor is nonzero: `reverse_cumsum(g * cumprod(x))[i] / x[i]`, with the
///   products at and after `z` (zero) left out of the sum;
/// - at `z`: the products leave out `x[z]` and keep every other factor:
///   `reverse_cumsum(g * cumprod(x with x[z] = 1))[z]`, those from a second zero on being 0;
/// - after `z`: every product keeps `x[z] = 0`, so zero.
///
/// The regions are set by selects and the products known to be zero are set to zero, never
/// multiplied by 0/1 masks, so a product that overflowed to inf (or became NaN as inf * 0)
/// past a zero cannot turn the sums before it into NaN (Burn's own `float_cumprod` backward
/// multiplies by masks and does). Device ops only: one cumprod, two reversed cumsums, two
/// running minima (the first and second zeros), elementwise work; no host read.
fn cumprod_gradient<B: Backend + SieveOps>(
    x: FloatTensor<B>,
    g: FloatTensor<B>,
    dim: usize,
) -> FloatTensor<B> {
    let shape = x.shape();
    if shape.num_elements() == 0 {
        return g;
    }
    let device = x.device();
    let settings = get_device_settings::<B>(&device);
    let bools = settings.bool_dtype;
    let positions =
        crate::autodiff::scanned_positions::<B>(&shape, dim, &device, settings.int_dtype);
    // At each position, the lane's first zero if it is at or before it, else the lane's length
    // (a running minimum, sieve's scan): the comparisons below with the position need no more
    // than that, and Burn 0.22's `min_dim` drops the last element of some lanes (65,535 and
    // 131,071 long on lavapipe).
    let first_zero = |x: FloatTensor<B>| {
        let nonzero = B::bool_not(B::float_equal_elem(x, 0.0f64.into(), bools));
        let at = B::int_mask_fill(positions.clone(), nonzero, (shape[dim] as i64).into());
        int_scan::<B>(at, dim, ScanOp::Min)
    };
    let zero = first_zero(x.clone());
    let before = B::int_lower(positions.clone(), zero.clone(), bools);
    let after = B::bool_not(before.clone());
    let at = B::int_equal(positions.clone(), zero, bools);

    // cumprod of x with its first zero made 1: the real cumprod before `z`, from `z` on the
    // products that leave out x[z], which are 0 from the lane's second zero on.
    let skipped = B::float_mask_fill(x.clone(), at.clone(), 1.0f64.into());
    let second_zero = first_zero(skipped.clone());
    let second_zero = B::int_greater_equal(positions, second_zero, bools);
    let skipping = B::float_mask_fill(
        float_scan::<B>(skipped, dim, ScanOp::Prod),
        second_zero,
        0.0f64.into(),
    );
    let products = B::float_mask_fill(skipping.clone(), after.clone(), 0.0f64.into());
    let divisor = B::float_mask_fill(x, after, 1.0f64.into());
    let before_zero = B::float_div(
        reverse_cumsum::<B>(B::float_mul(g.clone(), products), dim),
        divisor,
    );
    let at_zero = reverse_cumsum::<B>(B::float_mul(g, skipping), dim);
    let at_zero = B::float_mask_fill(at_zero, B::bool_not(at), 0.0f64.into());
    B::float_mask_where(at_zero, before, before_zero)
}

/// Runs a running minimum or maximum (`op`) on `x`'s inner tensor and records
/// [`ExtremeBackward`] when `x` is tracked.
fn running_extreme<B: Backend + SieveOps, C: CheckpointStrategy>(
    x: FloatTensor<Autodiff<B, C>>,
    dim: usize,
    op: ScanOp,
) -> FloatTensor<Autodiff<B, C>> {
    match ExtremeBackward
        .prepare::<C>([x.node()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let output = float_scan::<B>(x.primitive().clone(), dim, op);
            prep.finish((x.primitive().clone(), output.clone(), dim), output)
        }
        OpsKind::UnTracked(prep) => prep.finish(float_scan::<B>(x.into_primitive(), dim, op)),
    }
}

/// Backward of `cummin`/`cummax`: output `j` is input `s(j)`, the latest position at or before
/// `j` whose value equals the running value, or that is a NaN (PyTorch's `cummin`/`cummax`
/// indices: the latest of equal values, the latest NaN once one is met). The output's
/// gradient is scatter-added to those sources. The sources are the running maximum of
/// "position where a source, else 0" (a device scan). The forward output is kept, not
/// recomputed (Burn's own backward runs the forward op again).
#[derive(Debug)]
struct ExtremeBackward;

impl<B: Backend + SieveOps> Backward<B, 1> for ExtremeBackward {
    type State = (FloatTensor<B>, FloatTensor<B>, usize);

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [parent] = ops.parents;
        let grad = grads.consume::<B>(&ops.node);
        let (x, output, dim) = ops.state;
        if let Some(node) = parent {
            let shape = x.shape();
            if shape.num_elements() == 0 {
                grads.register::<B>(node.id, grad);
                return;
            }
            let device = x.device();
            let settings = get_device_settings::<B>(&device);
            let bools = settings.bool_dtype;
            let positions =
                crate::autodiff::scanned_positions::<B>(&shape, dim, &device, settings.int_dtype);
            // Past a NaN the output is NaN and equals nothing, so later positions keep the NaN
            // as their source until the next NaN.
            let source = B::bool_or(
                B::float_equal(output, x.clone(), bools),
                B::float_is_nan(x, bools),
            );
            let marked = B::int_mask_fill(positions, B::bool_not(source), 0i64.into());
            let sources = int_scan::<B>(marked, dim, ScanOp::Max);
            grads.register::<B>(node.id, scatter_add_grad::<B>(shape, dim, sources, grad));
        }
    }
}
