//! The last stage of token sampling, fused: one token per row drawn from that row's ranked
//! candidates (its top-k, or its whole row sorted, in stable descending order) under a
//! top-k, a top-p and a temperature, by Gumbel-max with [`crate::random`]'s numbers. One cube
//! per row does the temperature, the softmax, the top-p prefix sum and the perturbed argmax
//! in registers and shared memory: a draw costs the top-k and this one launch. The composite
//! of ~40 Burn ops it replaces spent 0.91 ms of host time queueing each call on the H200
//! (`bench/results/h200/9-final`); this kernel has not been timed on a GPU yet.
//!
//! Per row, with `v` the candidates (NaN read as `-inf`, `+inf` as the largest finite f32),
//! `best = v[0]`, `T` the temperature and `k`, `p` the filters:
//! - `best = -inf` (no finite logit): the token is **-1**.
//! - `T <= 0` or NaN (greedy): the first candidate's id.
//! - else `s[j] = (v[j] - best) / T`; kept: `j < k` (every `j` where `k <= 0`) with `s[j]`
//!   finite, then, unless `p >= 1`, those whose preceding kept probabilities
//!   (`exp(s) / sum exp(s)` over the kept) sum to less than `p`, and always `j = 0`; the
//!   token is the id of the first `j` maximising `s[j] - ln(-ln u)` over the kept, `u` the
//!   uniform of (seed, id).
//!
//! Sums run in a fixed order (each unit's strided elements, then the cube's spine), so a row
//! gives the same token on every run.

use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::common::address::address_type;
use crate::common::buffers::BufferRules;
use crate::common::cube::cube_exclusive;
use crate::common::fold::{Fold, ScanOp};
use crate::common::grid::{cube_count_1d, linear_cube_index};
use crate::random::{output_extent, seed_words, uniform_of, words_of};
use crate::{DeviceCaps, Dtype, SieveError};

/// The buffers of one draw. Per-row parameters are `[rows]` tensors: `top_k` Int
/// (`k_dtype`: i32, u32, i64 or u64; `k <= 0` or `k >= width`: no cut), `top_p` and
/// `temperature` f32.
#[derive(Debug, Clone, Copy)]
pub struct DrawIo<'a> {
    /// `[rows, width]` f32 candidate logits, each row in stable descending order.
    pub values: &'a Handle,
    /// `[rows, width]` their token ids (`id_dtype`: i32, u32, i64 or u64; the low 32 bits
    /// count, as in [`crate::random::uniform_at`]).
    pub ids: &'a Handle,
    /// The ids' dtype.
    pub id_dtype: Dtype,
    /// `[rows]` seeds (i32, u32, i64 or u64; see [`crate::random`]).
    pub seeds: &'a Handle,
    /// The seeds' dtype.
    pub seed_dtype: Dtype,
    /// `[rows]` top-k of each row.
    pub top_k: &'a Handle,
    /// The top-k's dtype.
    pub k_dtype: Dtype,
    /// `[rows]` f32 top-p of each row (`p >= 1`: no top-p filter).
    pub top_p: &'a Handle,
    /// `[rows]` f32 temperature of each row.
    pub temperature: &'a Handle,
    /// `[rows]` tokens out (`token_dtype`: i32 or i64, as -1 marks a row with no finite
    /// logit).
    pub tokens: &'a Handle,
    /// The tokens' dtype.
    pub token_dtype: Dtype,
}

/// Compile-time shape of a draw cube: only what changes control flow or array sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct DrawLayout {
    units: u32,
    use_planes: bool,
    ieee_nan_compare: bool,
    wide_ids: bool,
    wide_seeds: bool,
    wide_k: bool,
}

impl DrawLayout {
    fn fold(&self, op: ScanOp, elem: Dtype) -> Fold {
        Fold {
            op,
            elem,
            ieee_nan_compare: self.ieee_nan_compare,
        }
    }
}

/// A candidate logit as the draw reads it: NaN as `-inf`, `+inf` as `f32::MAX` (bit tests:
/// some compilers assume NaN never occurs).
#[cube]
fn sanitized(value: f32) -> f32 {
    let mut out = value;
    if nan(value) {
        out = f32::reinterpret(0xFF80_0000u32);
    } else if u32::reinterpret(value) == 0x7F80_0000u32 {
        out = f32::reinterpret(0x7F7F_FFFFu32);
    }
    out
}

/// NaN, by the bits.
#[cube]
fn nan(value: f32) -> bool {
    (u32::reinterpret(value) & 0x7FFF_FFFFu32) > 0x7F80_0000u32
}

/// Finite (not `+-inf`, not NaN), by the bits.
#[cube]
fn finite(value: f32) -> bool {
    (u32::reinterpret(value) & 0x7FFF_FFFFu32) < 0x7F80_0000u32
}

/// Word `i` of a 32- or 64-bit Int buffer read as words: its low word.
#[cube]
fn low_word(words: &[u32], i: usize, #[comptime] wide: bool) -> u32 {
    if wide { words[2 * i] } else { words[i] }
}

/// The row's cut: `width` where its `k` is at most 0 or at least `width`.
#[cube]
fn row_cut(top_k: &[u32], row: usize, width: usize, #[comptime] wide: bool) -> usize {
    let low = low_word(top_k, row, wide);
    // A 64-bit k with a high word is negative or past any width: no cut either way.
    let mut high = 0u32;
    if wide {
        high = top_k[2 * row + 1];
    }
    let k = i32::reinterpret(low);
    let mut cut = width;
    if high == 0u32 && k > 0i32 && usize::cast_from(k) < width {
        cut = usize::cast_from(k);
    }
    cut
}

/// One cube per row of candidates: see the module docs. Every unit runs every loop the same
/// number of times (the trip counts depend on the row only), so all reach every barrier.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
fn draw_kernel<I: Numeric>(
    values: &[f32],
    ids: &[u32],
    seeds: &[u32],
    top_k: &[u32],
    top_p: &[f32],
    temperature: &[f32],
    tokens: &mut [I],
    rows: usize,
    width: usize,
    #[comptime] layout: DrawLayout,
    #[define(I)] _dtype: ElemType,
) {
    let row = linear_cube_index();
    if row >= rows {
        terminate!();
    }
    let units = comptime!(layout.units);
    let base = row * width;
    let best = sanitized(values[base]);
    let has_token = finite(best);
    let shift = select(has_token, best, 0.0f32);
    let t = temperature[row];
    // NaN by its bits (a Vulkan driver may assume no NaNs in comparisons).
    let greedy = nan(t) || t <= 0.0f32;
    let divisor = select(greedy, 1.0f32, t);
    let cut = row_cut(top_k, row, width, layout.wide_k);
    let p = top_p[row];
    let p_nan = nan(p);
    let nucleus = p_nan || p < 1.0f32;
    let (seed_lo, seed_hi) = seed_words(seeds, row, layout.wide_seeds);
    let sum = comptime!(layout.fold(ScanOp::Sum, Dtype::F32));
    let passes = width.div_ceil(units as usize);

    // The kept candidates' total weight, for the top-p probabilities.
    let mut total = 0.0f32;
    if nucleus {
        let mut own = 0.0f32;
        for pass in 0..passes {
            let j = pass * units as usize + UNIT_POS as usize;
            if j < cut {
                let s = (sanitized(values[base + j]) - shift) / divisor;
                if finite(s) {
                    own += s.exp();
                }
            }
        }
        total = cube_exclusive::<f32>(own, sum, units, layout.use_planes).total;
    }

    // Each unit's best perturbed score and its slot (its slots rise, so `>` keeps the first).
    let mut top = f32::reinterpret(0xFF80_0000u32);
    let mut top_slot = 0xFFFF_FFFFu32;
    let mut carry = 0.0f32;
    for pass in 0..passes {
        let j = pass * units as usize + UNIT_POS as usize;
        let mut s = f32::reinterpret(0xFF80_0000u32);
        let mut id = 0u32;
        if j < cut {
            s = (sanitized(values[base + j]) - shift) / divisor;
            id = low_word(ids, base + j, layout.wide_ids);
        }
        let mut keep = finite(s);
        if nucleus {
            let weight = select(keep, s.exp() / total, 0.0f32);
            let prefix = cube_exclusive::<f32>(weight, sum, units, layout.use_planes);
            keep = keep && (j == 0usize || (!p_nan && carry + prefix.before < p));
            carry += prefix.total;
        }
        if keep {
            let u = uniform_of(seed_lo, seed_hi, id);
            let score = s - (-u.ln()).ln();
            if score > top {
                top = score;
                top_slot = j as u32;
            }
        }
    }

    // The first slot holding the cube's best score.
    let max = comptime!(layout.fold(ScanOp::Max, Dtype::F32));
    let min = comptime!(layout.fold(ScanOp::Min, Dtype::U32));
    let best_score = cube_exclusive::<f32>(top, max, units, layout.use_planes).total;
    let own_slot = select(top == best_score, top_slot, 0xFFFF_FFFFu32);
    let slot = cube_exclusive::<u32>(own_slot, min, units, layout.use_planes).total;
    if UNIT_POS == 0 {
        let mut token = I::cast_from(-1i32);
        if has_token && greedy {
            token = I::cast_from(low_word(ids, base, layout.wide_ids));
        } else if has_token && slot < 0xFFFF_FFFFu32 {
            token = I::cast_from(low_word(ids, base + slot as usize, layout.wide_ids));
        }
        tokens[row] = token;
    }
}

/// Draws one token per row of `rows` rows of `width` ranked candidates (see the module docs
/// and [`DrawIo`]). `rows == 0` launches nothing; `width` must be at least 1 where `rows` is
/// not 0.
pub fn draw(client: &Client, io: DrawIo<'_>, rows: usize, width: usize) -> Result<(), SieveError> {
    let caps = DeviceCaps::of(client);
    let wide_ids = words_of("io.id_dtype", io.id_dtype)?;
    let wide_seeds = words_of("io.seed_dtype", io.seed_dtype)?;
    let wide_k = words_of("io.k_dtype", io.k_dtype)?;
    if !matches!(io.token_dtype, Dtype::I32 | Dtype::I64) {
        return Err(SieveError::invalid(
            "io.token_dtype",
            io.token_dtype.name(),
            "i32 or i64 (a row with no finite logit gets -1)",
        ));
    }
    caps.check_dtype(io.token_dtype)?;
    if width == 0 && rows > 0 {
        return Err(SieveError::invalid(
            "width",
            0,
            "at least 1 candidate per row",
        ));
    }
    if u32::try_from(width).is_err() {
        return Err(SieveError::invalid(
            "width",
            width,
            format!("at most {} (slots are 32-bit)", u32::MAX),
        ));
    }
    let total = output_extent(client, &caps, "rows * width", rows, width)?;
    let words = |wide: bool, n: usize| if wide { 2 * n } else { n };
    let rules = BufferRules::of(client);
    rules.check_dtype("io.values", io.values, total, Dtype::F32)?;
    rules.check("io.ids", io.ids, words(wide_ids, total), "u32", 4)?;
    rules.check("io.seeds", io.seeds, words(wide_seeds, rows), "u32", 4)?;
    rules.check("io.top_k", io.top_k, words(wide_k, rows), "u32", 4)?;
    rules.check_dtype("io.top_p", io.top_p, rows, Dtype::F32)?;
    rules.check_dtype("io.temperature", io.temperature, rows, Dtype::F32)?;
    rules.check_dtype("io.tokens", io.tokens, rows, io.token_dtype)?;
    if rows == 0 {
        return Ok(());
    }
    // A plane or two for the usual top-k widths, up to 256 units for whole sorted rows.
    let wanted = (width as u32).next_power_of_two().min(256);
    let units = caps.cube_units(wanted);
    let layout = DrawLayout {
        units,
        use_planes: caps.plane_ops,
        ieee_nan_compare: caps.ieee_nan_compare,
        wide_ids,
        wide_seeds,
        wide_k,
    };
    let id_words = words(wide_ids, total);
    // SAFETY: surplus cubes of the grid return before any access; every read is inside row
    // `row < rows` of buffers checked above to hold `rows * width` candidates (`j < width`)
    // and `rows` parameters; unit 0 writes `tokens[row]` alone.
    unsafe {
        draw_kernel::launch_unchecked(
            client,
            cube_count_1d(client, rows),
            CubeDim::new_1d(units),
            address_type(&[id_words, words(wide_seeds, rows), words(wide_k, rows)]),
            BufferArg::from_raw_parts(io.values.clone(), total),
            BufferArg::from_raw_parts(io.ids.clone(), id_words),
            BufferArg::from_raw_parts(io.seeds.clone(), words(wide_seeds, rows)),
            BufferArg::from_raw_parts(io.top_k.clone(), words(wide_k, rows)),
            BufferArg::from_raw_parts(io.top_p.clone(), rows),
            BufferArg::from_raw_parts(io.temperature.clone(), rows),
            BufferArg::from_raw_parts(io.tokens.clone(), rows),
            rows,
            width,
            layout,
            io.token_dtype.elem_type(),
        );
    }
    Ok(())
}

/// CPU reference of [`draw`] (f64 sums; the tests allow the device's f32 rounding).
pub mod reference {
    use crate::random::reference::{bits, uniform};

    /// One row's parameters.
    #[derive(Debug, Clone, Copy)]
    pub struct RowParams {
        /// The row's seed as `(lo, hi)` words.
        pub seed: (u32, u32),
        /// Top-k (`<= 0`: none).
        pub k: i64,
        /// Top-p (`>= 1`: none).
        pub p: f32,
        /// Temperature (`<= 0` or NaN: greedy).
        pub t: f32,
    }

    /// What one row's draw looks at: each slot's kept flag and perturbed score (`-inf` where
    /// not kept), and the token (-1: no finite logit).
    #[derive(Debug, Clone)]
    pub struct RowDraw {
        /// Per slot: the perturbed score of a kept candidate, `-inf` otherwise.
        pub scores: Vec<f64>,
        /// The token drawn.
        pub token: i64,
    }

    fn sanitized(v: f32) -> f32 {
        if v.is_nan() {
            f32::NEG_INFINITY
        } else if v == f32::INFINITY {
            f32::MAX
        } else {
            v
        }
    }

    /// One row of [`super::draw`]: `values` in stable descending order, `ids` their tokens.
    pub fn draw_row(values: &[f32], ids: &[u32], params: RowParams) -> RowDraw {
        let width = values.len();
        let best = sanitized(values[0]);
        let mut scores = vec![f64::NEG_INFINITY; width];
        if !best.is_finite() {
            return RowDraw { scores, token: -1 };
        }
        let greedy = params.t.is_nan() || params.t <= 0.0;
        if greedy {
            return RowDraw {
                scores,
                token: ids[0] as i64,
            };
        }
        let cut = if params.k > 0 && (params.k as usize) < width {
            params.k as usize
        } else {
            width
        };
        let s: Vec<f32> = (0..width)
            .map(|j| {
                if j < cut {
                    (sanitized(values[j]) - best) / params.t
                } else {
                    f32::NEG_INFINITY
                }
            })
            .collect();
        let total: f64 = s
            .iter()
            .filter(|v| v.is_finite())
            .map(|&v| (v as f64).exp())
            .sum();
        let mut before = 0.0f64;
        for j in 0..width {
            if !s[j].is_finite() {
                continue;
            }
            let weight = (s[j] as f64).exp() / total;
            let nucleus = params.p >= 1.0 || j == 0 || before < params.p as f64;
            before += weight;
            if nucleus {
                let u = uniform(bits(params.seed.0, params.seed.1, ids[j])) as f64;
                scores[j] = s[j] as f64 - (-u.ln()).ln();
            }
        }
        let mut token = ids[0] as i64;
        let mut top = f64::NEG_INFINITY;
        for j in 0..width {
            if scores[j] > top {
                top = scores[j];
                token = ids[j] as i64;
            }
        }
        RowDraw { scores, token }
    }
}
