//! Token sampling from `[batch, vocab]` logits on the device, with no host read: top-k, top-p
//! (nucleus), min-p and plain sampling, and the filters on their own. Every function takes
//! Float logits of any dtype (computed in f32) and returns one token id per row, an Int
//! tensor of the device's default int dtype.
//!
//! # Semantics (docs/SEMANTICS.md, "Sampling")
//! - **Temperature first**: logits are divided by the row's temperature, then filtered, then
//!   sampled (the order of Hugging Face's, vLLM's and FlashInfer's samplers). A temperature of
//!   0 (or below, or NaN) makes the row greedy: the largest logit, the lowest index among
//!   equal ones, whatever the filters say (the largest logit survives every filter). The
//!   top-k is taken from the logits before the division (the same set: a positive
//!   temperature keeps the order), so only the `k` candidates are scaled.
//! - **Filters, in this order**: top-k keeps the first `k` of the row's stable descending
//!   order (ties at the `k`-th logit go to the lower index, as [`crate::topk`]); top-p then
//!   keeps, over the survivors' renormalised probabilities in that order, each token whose
//!   preceding probabilities sum to less than `p` (so the smallest prefix reaching `p`, and
//!   always the first token); min-p keeps the tokens whose probability is at least `min_p`
//!   times the row's largest. `k = 0` (or `k >= vocab`) and `p >= 1` turn their filter off.
//! - **Sampling** is Gumbel-max: the token maximising `logit / T + g`, where `g = -ln(-ln u)`
//!   and `u` is the counter-based uniform of (`seed`, token id) ([`uniform_rows`]; never 0 or
//!   1). That draws each surviving token with exactly its renormalised probability. The same
//!   seed gives the same token on every call; across runtimes too, except where two tokens'
//!   perturbed scores are equal to within the rounding of the runtime's `ln` and `exp`.
//! - NaN logits count as `-inf`: never drawn, never kept by a filter. `+inf` logits count as
//!   the largest finite value (so a row's `+inf` tokens share its whole probability). A row
//!   with no finite logit (all `-inf` or NaN) returns **-1**, an id no vocabulary has.

// The generated `Dispatch` impl names the deprecated NdArray and LibTorch backends.
#![cfg_attr(any(feature = "ndarray", feature = "tch"), allow(deprecated))]

use burn::backend::Dispatch;
use burn::tensor::{Bool, DType, Float, Int, IntDType, Tensor};

mod autodiff;
#[cfg(feature = "cube")]
mod cube;

use crate::fallback;
use crate::tensor::positions;
use burn::backend::tensor::{FloatTensor, IntTensor};

extension_trait! {
    /// Draws and their randomness: the device kernels, or (default bodies) the same rules on the
    /// host from the inputs read back (`fallback.rs`).
    pub trait SampleOps {
        /// `[rows, len]` f32 uniforms in `(0, 1)` from the `[rows]` Int tensor `seeds`: element
        /// `[r, j]` is a pure function of `seeds[r]`'s bits and `j`, the same on every runtime
        /// (`sieve::random`). The sampling ops' randomness. Fallback: the same numbers made on
        /// the host from the seeds read back.
        #[fusion(meta = meta::uniform_rows)]
        fn sieve_uniform_rows(seeds: IntTensor<Self>, len: usize) -> FloatTensor<Self> {
            fallback::uniform_rows::<Self>(seeds, len)
        }

        /// `[rows, width]` f32 uniforms at the counters of the `[rows, width]` Int tensor
        /// `columns`: what [`SampleOps::sieve_uniform_rows`] puts at those columns (a gather of
        /// it, without making whole rows). Fallback: on the host, as that one.
        #[fusion(meta = meta::uniform_at)]
        fn sieve_uniform_at(seeds: IntTensor<Self>, columns: IntTensor<Self>) -> FloatTensor<Self> {
            fallback::uniform_at::<Self>(seeds, columns)
        }

        /// One token per row of `[rows, vocab]` f32 `logits`, drawn under the `[rows]` per-row
        /// `top_k` (Int), `top_p` and `temperature` (f32) and `seeds` (`sieve::sample`'s rules:
        /// the candidates are each row's stable descending top-`cut` where `cut` is in
        /// `1..vocab`, else the whole row; NaN counts as `-inf`, `+inf` as `f32::MAX`;
        /// Gumbel-max with `sieve::random`'s numbers; -1 for a row with no finite logit).
        /// `[rows]` tokens of `index_dtype`. Fallback: the same rule on the host
        /// (`sieve::sample::reference::sample_row`).
        #[fusion(meta = meta::sample)]
        fn sieve_sample(
            logits: FloatTensor<Self>,
            seeds: IntTensor<Self>,
            top_k: IntTensor<Self>,
            top_p: FloatTensor<Self>,
            temperature: FloatTensor<Self>,
            cut: usize,
            index_dtype: IntDType,
        ) -> IntTensor<Self> {
            fallback::sample::<Self>(logits, seeds, top_k, top_p, temperature, cut, index_dtype)
        }

        /// [`SampleOps::sieve_sample`] with one `top_k` (its cut: 0 or `>= vocab` for none),
        /// `top_p` and `temperature` for every row, passed as scalars (no per-row tensors to make).
        #[fusion(meta = meta::sample_same)]
        fn sieve_sample_same(
            logits: FloatTensor<Self>,
            seeds: IntTensor<Self>,
            top_k: usize,
            top_p: f32,
            temperature: f32,
            index_dtype: IntDType,
        ) -> IntTensor<Self> {
            fallback::sample_same::<Self>(logits, seeds, top_k, top_p, temperature, index_dtype)
        }
    }
}

/// Output specs for Fusion (which records them before the kernel runs).
mod meta {
    use burn::backend::fusion::custom::TensorSpec;
    use burn::tensor::{IntDType, Shape};

    /// `[rows, len]` f32 uniforms from `[rows]` seeds.
    pub(super) fn uniform_rows(seeds: &TensorSpec, len: &usize) -> TensorSpec {
        TensorSpec::new(Shape::new([seeds.shape[0], *len]), burn::tensor::DType::F32)
    }

    /// `[rows, width]` f32 uniforms at `[rows, width]` columns.
    pub(super) fn uniform_at(_seeds: &TensorSpec, columns: &TensorSpec) -> TensorSpec {
        TensorSpec::new(columns.shape.clone(), burn::tensor::DType::F32)
    }

    /// `[rows]` tokens of `index_dtype` from `[rows, vocab]` logits.
    pub(super) fn sample(
        logits: &TensorSpec,
        _seeds: &TensorSpec,
        _top_k: &TensorSpec,
        _top_p: &TensorSpec,
        _temperature: &TensorSpec,
        _cut: &usize,
        index_dtype: &IntDType,
    ) -> TensorSpec {
        TensorSpec::new(Shape::new([logits.shape[0]]), (*index_dtype).into())
    }

    /// `[rows]` tokens of `index_dtype` from `[rows, vocab]` logits.
    pub(super) fn sample_same(
        logits: &TensorSpec,
        _seeds: &TensorSpec,
        _top_k: &usize,
        _top_p: &f32,
        _temperature: &f32,
        index_dtype: &IntDType,
    ) -> TensorSpec {
        TensorSpec::new(Shape::new([logits.shape[0]]), (*index_dtype).into())
    }
}

/// A sampling parameter: one value for every row, or a `[batch]` tensor of one value a row.
// (A short-lived argument: boxing the tensor would buy nothing.)
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum PerRow<T, K: burn::tensor::kind::Basic> {
    /// The same value for every row.
    Same(T),
    /// One value per row: a `[batch]` tensor.
    Each(Tensor<1, K>),
}

impl From<f32> for PerRow<f32, Float> {
    fn from(value: f32) -> Self {
        PerRow::Same(value)
    }
}

impl From<usize> for PerRow<usize, Int> {
    fn from(value: usize) -> Self {
        PerRow::Same(value)
    }
}

impl<T> From<Tensor<1, Float>> for PerRow<T, Float> {
    fn from(values: Tensor<1, Float>) -> Self {
        PerRow::Each(values)
    }
}

impl<T> From<Tensor<1, Int>> for PerRow<T, Int> {
    fn from(values: Tensor<1, Int>) -> Self {
        PerRow::Each(values)
    }
}

/// `[batch, len]` f32 uniforms in `(0, 1)`: element `[r, j]` is a pure function of the bits of
/// `seeds[r]` and of `j` (`sieve::random`; the same numbers on every backend). Narrow Int
/// seeds are widened to i32 first.
pub fn uniform_rows(seeds: Tensor<1, Int>, len: usize) -> Tensor<2> {
    Tensor::from_dispatch(<Dispatch as SampleOps>::sieve_uniform_rows(
        words(seeds).into_dispatch(),
        len,
    ))
}

/// `[batch, width]` f32 uniforms at the columns `columns` (`[batch, width]`, counted by their
/// low 32 bits): `uniform_rows(seeds, len).gather(1, columns)` for any `len` past the largest
/// column, without making the whole rows. Narrow Int seeds and columns are widened to i32.
pub fn uniform_at(seeds: Tensor<1, Int>, columns: Tensor<2, Int>) -> Tensor<2> {
    let [batch, _] = columns.dims();
    assert_eq!(
        seeds.dims()[0],
        batch,
        "uniform_at: `seeds` has {} rows, `columns` {batch}: expected one seed per row",
        seeds.dims()[0]
    );
    Tensor::from_dispatch(<Dispatch as SampleOps>::sieve_uniform_at(
        words(seeds).into_dispatch(),
        words(columns).into_dispatch(),
    ))
}

/// An Int tensor of 8- or 16-bit elements widened to i32, which the random kernels read as
/// words; others as they are.
fn words<const D: usize>(x: Tensor<D, Int>) -> Tensor<D, Int> {
    match x.dtype() {
        DType::I8 | DType::I16 | DType::U8 | DType::U16 => x.cast(IntDType::I32),
        _ => x,
    }
}

/// Draws one token per row of `logits` (`[batch, vocab]`) from its top-k, then top-p,
/// filtered distribution at `temperature` (see the module docs), with `seeds` (`[batch]`)
/// as each row's random stream.
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let logits = Tensor::<2>::from_data([[0.0, 5.0, 4.0, -1.0], [2.0, 0.0, 0.0, 0.0]], &device);
/// let seeds = Tensor::<1, Int>::from_data([7, 8], &device);
/// // Top-1: each row's largest logit, whatever the seed.
/// let tokens = sieve_burn::sampling::top_k_top_p_sample(logits, 1, 1.0, 1.0, seeds);
/// assert_eq!(tokens.into_data().iter::<i64>().collect::<Vec<_>>(), [1, 0]);
/// ```
pub fn top_k_top_p_sample(
    logits: Tensor<2>,
    top_k: impl Into<PerRow<usize, Int>>,
    top_p: impl Into<PerRow<f32, Float>>,
    temperature: impl Into<PerRow<f32, Float>>,
    seeds: Tensor<1, Int>,
) -> Tensor<1, Int> {
    let op = "top_k_top_p_sample";
    check_shapes(op, &logits, &seeds);
    let [batch, vocab] = logits.dims();
    let device = logits.device();
    if batch == 0 {
        return no_tokens(&logits);
    }
    let index_dtype = crate::tensor::index_dtype(&logits);
    // One kernel pair (`sieve::sample::top_k_top_p`): the candidates (the top-k where one `k`
    // cuts the row, else the whole row sorted), ranked with NaN as -inf and +inf as the
    // largest finite value, then temperature, top-p and Gumbel-max in one draw kernel.
    let logits = logits.cast(DType::F32).into_dispatch();
    let seeds = words(seeds).into_dispatch();
    let (top_k, top_p, temperature) = (top_k.into(), top_p.into(), temperature.into());
    // One value of each for every row: scalars, no per-row tensors to make.
    if let (PerRow::Same(k), PerRow::Same(p), PerRow::Same(t)) = (&top_k, &top_p, &temperature) {
        return Tensor::from_dispatch(<Dispatch as SampleOps>::sieve_sample_same(
            logits,
            seeds,
            *k,
            *p,
            *t,
            index_dtype,
        ));
    }
    let (cut, k) = match top_k {
        PerRow::Same(k) => (
            if k < vocab { k } else { 0 },
            Tensor::<1, Int>::full([batch], k_param(k), &device),
        ),
        PerRow::Each(k) => {
            let [n] = k.dims();
            assert!(
                n == batch,
                "{op}: invalid argument `top_k`: {n} values: expected one per row ({batch})"
            );
            (0, words(k))
        }
    };
    let p = per_row(op, "top_p", &top_p, batch, &device).reshape([batch]);
    let t = per_row(op, "temperature", &temperature, batch, &device).reshape([batch]);
    Tensor::from_dispatch(<Dispatch as SampleOps>::sieve_sample(
        logits,
        seeds,
        k.into_dispatch(),
        p.into_dispatch(),
        t.into_dispatch(),
        cut,
        index_dtype,
    ))
}

/// Draws one token per row of `logits` among those whose probability (at `temperature`) is
/// at least `min_p` times the row's largest (see the module docs); `min_p <= 0` keeps every
/// finite logit.
pub fn min_p_sample(
    logits: Tensor<2>,
    min_p: impl Into<PerRow<f32, Float>>,
    temperature: impl Into<PerRow<f32, Float>>,
    seeds: Tensor<1, Int>,
) -> Tensor<1, Int> {
    let op = "min_p_sample";
    let draw = match Draw::of(op, logits, &seeds, temperature.into()) {
        Ok(draw) => draw,
        Err(no_tokens) => return no_tokens,
    };
    let (batch, vocab) = (draw.batch, draw.vocab);
    let best = row_max(&draw.logits);
    let scaled = draw.scale(draw.logits.clone(), best.clone());
    let min_p = per_row(op, "min_p", &min_p.into(), batch, &scaled.device());
    // p / p_max = exp(scaled), the row's largest scaled logit being 0; -inf logits give 0
    // (a row without finite logits returns -1 whatever is kept).
    let keep = scaled
        .clone()
        .exp()
        .greater_equal(min_p.expand([batch, vocab]));
    sample_kept(&draw, scaled, keep, best, seeds)
}

/// Draws one token per row of `logits` from its full distribution at `temperature` (no
/// filter): Gumbel-max over every finite logit.
pub fn sample_from_logits(
    logits: Tensor<2>,
    temperature: impl Into<PerRow<f32, Float>>,
    seeds: Tensor<1, Int>,
) -> Tensor<1, Int> {
    let op = "sample_from_logits";
    let draw = match Draw::of(op, logits, &seeds, temperature.into()) {
        Ok(draw) => draw,
        Err(no_tokens) => return no_tokens,
    };
    let best = row_max(&draw.logits);
    let scaled = draw.scale(draw.logits.clone(), best.clone());
    let keep = scaled.clone().is_finite();
    sample_kept(&draw, scaled, keep, best, seeds)
}

/// `logits` with every element outside its row's top-k set to `-inf` (and NaNs to `-inf`),
/// in `logits`' dtype; ties at the `k`-th logit keep the lower index. `k = 0` or `k >=
/// vocab` (one `k`, or a row's) keeps every logit but NaN.
pub fn top_k_mask_logits(logits: Tensor<2>, top_k: impl Into<PerRow<usize, Int>>) -> Tensor<2> {
    let op = "top_k_mask_logits";
    let dtype = logits.dtype();
    let [batch, vocab] = logits.dims();
    if batch * vocab == 0 {
        return logits;
    }
    let x = finite_or_neg_inf(logits.cast(DType::F32));
    let device = x.device();
    let keep = match top_k.into() {
        // No filter: every logit stays (a `+inf` too, as a `k` a row of 0 keeps it), NaNs
        // as `-inf`.
        PerRow::Same(k) if k == 0 || k >= vocab => return x.cast(dtype),
        PerRow::Same(k) => {
            let (_, ids) = crate::topk_with_indices(x.clone(), k, 1);
            let ones = Tensor::<2, Int>::ones([batch, k], &device);
            Tensor::<2, Int>::zeros([batch, vocab], &device)
                .scatter(1, ids, ones, burn::tensor::IndexingUpdateOp::Add)
                .greater_elem(0)
        }
        PerRow::Each(k) => {
            // Each row's rank of every token in the stable descending order, against its k.
            let ids = crate::argsort_descending(x.clone(), 1);
            let rank = Tensor::<2, Int>::zeros([batch, vocab], &device).scatter(
                1,
                ids,
                positions::<2>(&x.shape(), 1, &device),
                burn::tensor::IndexingUpdateOp::Add,
            );
            within_k(op, rank, &k)
        }
    };
    x.mask_fill(keep.bool_not(), f32::NEG_INFINITY).cast(dtype)
}

/// `probs` (`[batch, vocab]`, each row a distribution) with every token outside its row's
/// top-p set (the smallest prefix of the stable descending order whose probabilities reach
/// `top_p`, and always the first token) set to 0 and the rest renormalised to sum to 1, in
/// `probs`' dtype. NaN probabilities count as 0; `top_p >= 1` only renormalises. A row with
/// no positive probability is no distribution: it comes back NaN (0 / 0, as torch's recipe).
pub fn top_p_renorm_probs(probs: Tensor<2>, top_p: impl Into<PerRow<f32, Float>>) -> Tensor<2> {
    let op = "top_p_renorm_probs";
    let dtype = probs.dtype();
    let [batch, vocab] = probs.dims();
    if batch * vocab == 0 {
        return probs;
    }
    let p32 = probs.cast(DType::F32);
    let p32 = p32.clone().mask_fill(p32.is_nan(), 0.0);
    let device = p32.device();
    let (sorted, ids) = crate::sort_descending_with_indices(p32, 1);
    let top_p = per_row(op, "top_p", &top_p.into(), batch, &device);
    let slot = positions::<2>(&sorted.shape(), 1, &device);
    let keep = nucleus(sorted.clone(), slot, top_p);
    let kept = sorted.mask_fill(keep.bool_not(), 0.0);
    // The running sum's last column (sieve's scan), not Burn's `sum_dim`, which drops the last
    // element of some rows (65,535 and 131,071 long on lavapipe).
    let total = crate::cumsum(kept.clone(), 1)
        .narrow(1, vocab - 1, 1)
        .expand([batch, vocab]);
    let renormed = kept / total;
    Tensor::<2>::zeros([batch, vocab], &device)
        .scatter(1, ids, renormed, burn::tensor::IndexingUpdateOp::Add)
        .cast(dtype)
}

/// A draw's logits after the checks, as f32 with NaNs as `-inf` and `+inf` as the largest
/// finite value, each row's temperature divisor, and which rows are greedy (`None`: none
/// is).
struct Draw {
    logits: Tensor<2>,
    batch: usize,
    vocab: usize,
    divisor: PerRow<f32, Float>,
    greedy: Option<Tensor<2, Bool>>,
}

impl Draw {
    /// `Err`: the `[0]` tokens of an empty batch (returned once per call: not worth a box).
    #[allow(clippy::result_large_err)]
    fn of(
        op: &str,
        logits: Tensor<2>,
        seeds: &Tensor<1, Int>,
        temperature: PerRow<f32, Float>,
    ) -> Result<Draw, Tensor<1, Int>> {
        let logits = checked_logits(op, logits, seeds)?;
        let [batch, vocab] = logits.dims();
        // Greedy rows: `T <= 0` or NaN; they are divided by 1.
        let (divisor, greedy) = match temperature {
            PerRow::Same(t) if t > 0.0 => (PerRow::Same(t), None),
            PerRow::Same(_) => (
                PerRow::Same(1.0),
                Some(Tensor::full([batch, 1], true, &logits.device())),
            ),
            each => {
                let t = per_row(op, "temperature", &each, batch, &logits.device());
                let greedy = t.clone().greater_elem(0.0).bool_not();
                (
                    PerRow::Each(t.mask_fill(greedy.clone(), 1.0).reshape([batch])),
                    Some(greedy),
                )
            }
        };
        Ok(Draw {
            logits,
            batch,
            vocab,
            divisor,
            greedy,
        })
    }

    /// `x` (some of this draw's logits, `[batch, width]`) shifted so that `best` (`[batch,
    /// 1]`, each row's largest logit) becomes 0, then divided by the row's temperature: no
    /// temperature, however small, can overflow a kept logit to +inf (the draws do not
    /// change: softmax, the filters and Gumbel-max ignore a row's shift). A row without a
    /// finite logit is not shifted.
    fn scale(&self, x: Tensor<2>, best: Tensor<2>) -> Tensor<2> {
        let dims = x.dims();
        let shift = best.clone().mask_fill(best.is_finite().bool_not(), 0.0);
        let x = x - shift.expand(dims);
        match &self.divisor {
            PerRow::Same(t) if *t != 1.0 => x.div_scalar(*t),
            PerRow::Same(_) => x,
            PerRow::Each(t) => x / t.clone().reshape([dims[0], 1]).expand(dims),
        }
    }
}

/// `logits` checked against `seeds` and read as the draws read them: f32, NaN as `-inf`, `+inf`
/// as the largest finite value. `Err`: the `[0]` tokens of an empty batch.
#[allow(clippy::result_large_err)]
fn checked_logits(
    op: &str,
    logits: Tensor<2>,
    seeds: &Tensor<1, Int>,
) -> Result<Tensor<2>, Tensor<1, Int>> {
    check_shapes(op, &logits, seeds);
    let [batch, _] = logits.dims();
    // Selects, not a `clamp_max`: a min can flush a subnormal logit to zero where the device
    // flushes them (NVIDIA's Vulkan does), and the greedy pick reads these bits.
    let logits = finite_or_neg_inf(logits.cast(DType::F32));
    let logits = logits
        .clone()
        .mask_fill(logits.equal_elem(f32::INFINITY), f32::MAX);
    if batch == 0 {
        return Err(no_tokens(&logits));
    }
    Ok(logits)
}

/// One seed per row of `logits`, and a vocab of at least one token (unless the batch is
/// empty).
fn check_shapes(op: &str, logits: &Tensor<2>, seeds: &Tensor<1, Int>) {
    let [batch, vocab] = logits.dims();
    let [rows] = seeds.dims();
    assert!(
        rows == batch,
        "{op}: invalid argument `seeds`: {rows} seeds: expected one per row of `logits` ({batch})"
    );
    assert!(
        vocab > 0 || batch == 0,
        "{op}: invalid argument `logits`: a vocab of 0 tokens: expected at least 1"
    );
}

/// Each row's largest value, `[batch, 1]`: sieve's top-1 (a reduction over a long row that
/// does not leave one unit to walk it, as the stock `max_dim` did on the H200 at
/// `[64, 128256]`).
fn row_max(x: &Tensor<2>) -> Tensor<2> {
    crate::topk(x.clone(), 1, 1)
}

/// The `[0]` tokens of an empty batch.
fn no_tokens(logits: &Tensor<2>) -> Tensor<1, Int> {
    Tensor::<1, Int>::empty([0], &logits.device())
}

fn finite_or_neg_inf(x: Tensor<2>) -> Tensor<2> {
    x.clone().mask_fill(x.is_nan(), f32::NEG_INFINITY)
}

/// `[batch, 1]` values of a per-row parameter.
fn per_row(
    op: &str,
    name: &str,
    value: &PerRow<f32, Float>,
    batch: usize,
    device: &burn::tensor::Device,
) -> Tensor<2> {
    match value {
        PerRow::Same(v) => Tensor::<2>::full([batch, 1], *v, device),
        PerRow::Each(t) => {
            let [n] = t.dims();
            assert!(
                n == batch,
                "{op}: invalid argument `{name}`: {n} values: expected one per row ({batch})"
            );
            t.clone().cast(DType::F32).reshape([batch, 1])
        }
    }
}

/// Where `rank < k` (a `[batch]` tensor of one `k` a row), or everywhere in a row whose
/// `k <= 0`; `rank`: each element's place in its row's stable descending order.
fn within_k(op: &str, rank: Tensor<2, Int>, k: &Tensor<1, Int>) -> Tensor<2, Bool> {
    let [batch, width] = rank.dims();
    let [n] = k.dims();
    assert!(
        n == batch,
        "{op}: invalid argument `top_k`: {n} values: expected one per row ({batch})"
    );
    let k = k.clone().reshape([batch, 1]).expand([batch, width]);
    rank.lower(k.clone()).bool_or(k.lower_equal_elem(0))
}

/// The top-p set of probabilities `sorted` (descending along dim 1, `slot` each one's place):
/// each whose predecessors sum to less than its row's `p` (`[batch, 1]`), the first always,
/// every one where `p >= 1`.
fn nucleus(sorted: Tensor<2>, slot: Tensor<2, Int>, p: Tensor<2>) -> Tensor<2, Bool> {
    let p = p.expand(sorted.dims());
    let before = crate::cumsum(sorted.clone(), 1) - sorted;
    before
        .lower(p.clone())
        .bool_or(slot.equal_elem(0))
        .bool_or(p.greater_equal_elem(1.0))
}

/// `-ln(-ln u)`, with `-ln u` taken as the draw kernel takes it (`sieve::random`'s
/// `neg_ln_uniform_of`): near `u = 1`, from `w = 1 - u` (exact: `u` is an odd multiple of
/// 2^-24) by its series, where f32's `ln(u)` would keep only an absolute ~6e-8 of a result as
/// small as 6e-8.
fn gumbel(u: Tensor<2>) -> Tensor<2> {
    let w = u.clone().neg().add_scalar(1.0);
    let near_one = w.clone().lower_elem(1.0 / 64.0);
    let series = w
        .clone()
        .mul_scalar(0.25)
        .add_scalar(1.0 / 3.0)
        .mul(w.clone())
        .add_scalar(0.5)
        .mul(w.clone())
        .add_scalar(1.0)
        .mul(w);
    u.log().neg().mask_where(near_one, series).log().neg()
}

/// Gumbel-max over the `keep` tokens of `scaled` (`draw`'s logits shifted and scaled, vocab
/// order), greedy rows taking their largest logit; `best` is each row's largest logit (`-inf`:
/// no finite logit).
fn sample_kept(
    draw: &Draw,
    scaled: Tensor<2>,
    keep: Tensor<2, Bool>,
    best: Tensor<2>,
    seeds: Tensor<1, Int>,
) -> Tensor<1, Int> {
    let [_, vocab] = scaled.dims();
    let noise = gumbel(uniform_rows(seeds, vocab));
    let scores = scaled.mask_fill(keep.bool_not(), f32::NEG_INFINITY) + noise;
    // Top-1 by sieve's stable order: the first index holding the row's largest value.
    let pick = crate::topk_with_indices(scores, 1, 1).1;
    let pick = match &draw.greedy {
        // From the logits themselves, not the shifted ones: `x - best` can merge two logits
        // where the device flushes subnormals (-1e-45 - 0 gives -0.0, tied with 0.0).
        Some(greedy) => pick.mask_where(
            greedy.clone(),
            crate::topk_with_indices(draw.logits.clone(), 1, 1).1,
        ),
        None => pick,
    };
    finish(pick, best)
}

/// `[batch]` tokens from `[batch, 1]` picks, -1 where the row's largest logit is `-inf`.
fn finish(pick: Tensor<2, Int>, best: Tensor<2>) -> Tensor<1, Int> {
    let [batch, _] = pick.dims();
    pick.mask_fill(best.is_finite().bool_not(), -1)
        .reshape([batch])
}

/// A top-k as the draw's `i64` parameter: past `i64::MAX` it saturates (any k >= vocab keeps
/// every token, so no row can tell).
pub(crate) fn k_param(k: usize) -> i64 {
    i64::try_from(k).unwrap_or(i64::MAX)
}
