//! Gradients of sieve's ops. The forward pass runs the inner backend's sieve kernel.

use burn::backend::autodiff::{
    Autodiff,
    checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
    grads::Gradients,
    ops::{Backward, Ops, OpsKind},
};
use burn::backend::tensor::{BoolTensor, FloatTensor, IntTensor};
use burn::backend::{AutodiffBackend, Backend};
use burn::backend::{TensorMetadata, get_device_settings};
use burn::tensor::{DType, FloatDType, IntDType, Shape};

use crate::SieveOps;
use crate::values::Values;
use sieve::scan::ScanOp;

impl<B: Backend + SieveOps, C: CheckpointStrategy> SieveOps for Autodiff<B, C> {
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

    fn sieve_sort_with_indices(
        x: Values<Self>,
        dim: usize,
        descending: bool,
        index_dtype: IntDType,
    ) -> (Values<Self>, IntTensor<Self>) {
        let x = match x {
            Values::Float(x) => x,
            Values::Int(x) => {
                let (values, indices) =
                    B::sieve_sort_with_indices(Values::Int(x), dim, descending, index_dtype);
                return (int_values(values), indices);
            }
        };
        let (values, indices, ()) = gathered::<B, C, _>(x, dim, |x| {
            let (values, indices) =
                B::sieve_sort_with_indices(Values::Float(x), dim, descending, index_dtype);
            (values.float(), indices, ())
        });
        (Values::Float(values), indices)
    }

    /// The gradient lands on the selected positions (the indices are distinct within a
    /// row, so the scatter is exact), zeros elsewhere.
    fn sieve_topk(
        x: Values<Self>,
        k: usize,
        dim: usize,
        largest: bool,
        sorted: bool,
        strategy: usize,
        index_dtype: IntDType,
    ) -> (Values<Self>, IntTensor<Self>) {
        let x = match x {
            Values::Float(x) => x,
            Values::Int(x) => {
                let (values, indices) = B::sieve_topk(
                    Values::Int(x),
                    k,
                    dim,
                    largest,
                    sorted,
                    strategy,
                    index_dtype,
                );
                return (int_values(values), indices);
            }
        };
        let (values, indices, ()) = gathered::<B, C, _>(x, dim, |x| {
            let (values, indices) = B::sieve_topk(
                Values::Float(x),
                k,
                dim,
                largest,
                sorted,
                strategy,
                index_dtype,
            );
            (values.float(), indices, ())
        });
        (Values::Float(values), indices)
    }

    fn sieve_sort(x: Values<Self>, dim: usize, descending: bool) -> Values<Self> {
        match x {
            Values::Float(x) => {
                let index_dtype = get_device_settings::<B>(&x.primitive().device()).int_dtype;
                Self::sieve_sort_with_indices(Values::Float(x), dim, descending, index_dtype).0
            }
            Values::Int(x) => int_values(B::sieve_sort(Values::Int(x), dim, descending)),
        }
    }

    /// Indices only: not differentiable.
    fn sieve_argsort(
        x: Values<Self>,
        dim: usize,
        descending: bool,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        B::sieve_argsort(inner_values(x), dim, descending, index_dtype)
    }

    /// Indices only: not differentiable.
    fn sieve_searchsorted(
        sorted: Values<Self>,
        values: Values<Self>,
        right: bool,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        B::sieve_searchsorted(
            inner_values(sorted),
            inner_values(values),
            right,
            index_dtype,
        )
    }

    fn sieve_uniform_rows(seeds: IntTensor<Self>, len: usize) -> FloatTensor<Self> {
        <Self as burn::backend::AutodiffBackend>::from_inner(B::sieve_uniform_rows(seeds, len))
    }

    fn sieve_sample(
        logits: FloatTensor<Self>,
        seeds: IntTensor<Self>,
        top_k: IntTensor<Self>,
        top_p: FloatTensor<Self>,
        temperature: FloatTensor<Self>,
        cut: usize,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        // Tokens carry no gradient.
        B::sieve_sample(
            logits.into_primitive(),
            seeds,
            top_k,
            top_p.into_primitive(),
            temperature.into_primitive(),
            cut,
            index_dtype,
        )
    }

    fn sieve_sample_same(
        logits: FloatTensor<Self>,
        seeds: IntTensor<Self>,
        top_k: usize,
        top_p: f32,
        temperature: f32,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        // Tokens carry no gradient.
        B::sieve_sample_same(
            logits.into_primitive(),
            seeds,
            top_k,
            top_p,
            temperature,
            index_dtype,
        )
    }

    fn sieve_uniform_at(seeds: IntTensor<Self>, columns: IntTensor<Self>) -> FloatTensor<Self> {
        <Self as burn::backend::AutodiffBackend>::from_inner(B::sieve_uniform_at(seeds, columns))
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

/// Runs `op` on `x`'s inner tensor; `op` returns values gathered from `x` along `dim`, the
/// indices they came from, and any other output. Records [`PermutationBackward`] when `x` is
/// tracked (the split, the sort, top-k).
/// An Int result of the inner backend as the Autodiff backend's (Int tensors are the inner
/// backend's own).
fn int_values<B: Backend, C: CheckpointStrategy>(values: Values<B>) -> Values<Autodiff<B, C>> {
    Values::Int(values.int())
}

/// An operand as the inner backend's, leaving the graph (for results with no gradient).
fn inner_values<B: Backend, C: CheckpointStrategy>(x: Values<Autodiff<B, C>>) -> Values<B> {
    match x {
        Values::Float(x) => Values::Float(x.into_primitive()),
        Values::Int(x) => Values::Int(x),
    }
}

/// An inner backend's result as the Autodiff backend's, untracked (a Float one is a new
/// leaf with no gradient).
fn outer_values<B: Backend, C: CheckpointStrategy>(x: Values<B>) -> Values<Autodiff<B, C>> {
    match x {
        Values::Float(x) => Values::Float(<Autodiff<B, C> as AutodiffBackend>::from_inner(x)),
        Values::Int(x) => Values::Int(x),
    }
}

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
/// (distinct along the dim, so each add meets a zero: exact in any order), zeros elsewhere.
#[derive(Debug)]
struct PermutationBackward;

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

/// The inner backend's scan of a Float tensor.
fn float_scan<B: SieveOps>(x: FloatTensor<B>, dim: usize, op: ScanOp) -> FloatTensor<B> {
    B::sieve_cumulative(Values::Float(x), dim, op).float()
}

/// The inner backend's scan of an Int tensor.
fn int_scan<B: SieveOps>(x: IntTensor<B>, dim: usize, op: ScanOp) -> IntTensor<B> {
    B::sieve_cumulative(Values::Int(x), dim, op).int()
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
/// minimum reductions (the first and second zeros), elementwise work; no host read.
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
    let positions = crate::fallback::positions::<B>(&shape, dim, &device, settings.int_dtype);
    // Each lane's first zero, broadcast along the lane (the lane's length when none).
    let first_zero = |x: FloatTensor<B>| {
        let nonzero = B::bool_not(B::float_equal_elem(x, 0.0f64.into(), bools));
        let at = B::int_mask_fill(positions.clone(), nonzero, (shape[dim] as i64).into());
        B::int_expand(B::int_min_dim(at, dim), shape.clone())
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
                crate::fallback::positions::<B>(&shape, dim, &device, settings.int_dtype);
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
fn scatter_add_grad<B: Backend>(
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
