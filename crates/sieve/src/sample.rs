//! Token sampling, fused: one token per row drawn from that row's ranked candidates (its
//! top-k, or its whole row sorted, in stable descending order) under a top-k, a top-p and a
//! temperature, by Gumbel-max with [`crate::random`]'s numbers. [`top_k_top_p`] takes whole
//! rows of logits: the top-k (or the sort) ranks them as the draw reads them
//! ([`KeyKind::F32Logits`]: NaN as `-inf`, `+inf` as `f32::MAX`), so nothing sanitises the
//! logits first, then [`draw`] runs. [`draw`] is one cube per row: the temperature, the
//! softmax, the top-p prefix sum and the perturbed argmax in registers and shared memory.
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
//! Sums run in a fixed order (each unit's run of consecutive slots, then the cube's spine), so a row
//! gives the same token on every run.

use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::common::address::address_type;
use crate::common::buffers::BufferRules;
use crate::common::cube::cube_exclusive;
use crate::common::fold::{Fold, ScanOp};
use crate::common::grid::{cube_count_1d, linear_cube_index};
use crate::radix::keys::{KeyKind, logit_bits};
use crate::radix::tile::RadixBlueprint;
use crate::random::{neg_ln_uniform_of, output_extent, seed_words, words_of};
use crate::sort::launch::sort_keyed;
use crate::sort::{SortIo, SortOptions, SortOrder, SortProblem};
use crate::topk::tile::{candidate_row_position, ranks_in_row};
use crate::topk::{TopkIo, TopkOptions, TopkProblem, row_candidates, topk_keyed};
use crate::{DeviceCaps, Dtype, SieveError};

/// The buffers of one draw from ranked candidates.
#[derive(Debug, Clone, Copy)]
pub struct DrawIo<'a> {
    /// `[rows, width]` f32 candidate logits, each row in stable descending order.
    pub values: &'a Handle,
    /// `[rows, width]` their token ids (`id_dtype`: i32, u32, i64 or u64; the low 32 bits
    /// count, as in [`crate::random::uniform_at`]).
    pub ids: &'a Handle,
    /// The ids' dtype.
    pub id_dtype: Dtype,
    /// Each row's parameters and token.
    pub rows: DrawRows<'a>,
}

/// The buffers of one draw from whole rows of logits ([`top_k_top_p`]).
#[derive(Debug, Clone, Copy)]
pub struct SampleIo<'a> {
    /// `[rows, vocab]` f32 logits (NaN read as `-inf`, `+inf` as `f32::MAX`; only read).
    pub logits: &'a Handle,
    /// Each row's parameters and token.
    pub rows: DrawRows<'a>,
}

/// A draw's per-row buffers, `[rows]` each: the seeds and parameters in, the tokens out.
#[derive(Debug, Clone, Copy)]
pub struct DrawRows<'a> {
    /// `[rows]` seeds (i32, u32, i64 or u64; see [`crate::random`]).
    pub seeds: &'a Handle,
    /// The seeds' dtype.
    pub seed_dtype: Dtype,
    /// The filters and temperature: the same for every row, or one of each per row.
    pub params: DrawParams<'a>,
    /// `[rows]` tokens out (`token_dtype`: i32 or i64, as -1 marks a row with no finite
    /// logit).
    pub tokens: &'a Handle,
    /// The tokens' dtype.
    pub token_dtype: Dtype,
}

/// A draw's top-k (`k <= 0` or `k >= width`: no cut), top-p (`p >= 1`: no top-p filter) and
/// temperature (`<= 0` or NaN: greedy).
#[derive(Debug, Clone, Copy)]
pub enum DrawParams<'a> {
    /// One value of each for every row (no buffers to read).
    Same {
        /// Top-k.
        top_k: i64,
        /// Top-p.
        top_p: f32,
        /// Temperature.
        temperature: f32,
    },
    /// `[rows]` buffers, one value of each per row.
    Each {
        /// `[rows]` top-k, Int (`k_dtype`: i32, u32, i64 or u64).
        top_k: &'a Handle,
        /// The top-k's dtype.
        k_dtype: Dtype,
        /// `[rows]` f32 top-p.
        top_p: &'a Handle,
        /// `[rows]` f32 temperature.
        temperature: &'a Handle,
    },
}

/// Compile-time shape of a draw cube: only what changes control flow or array sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct DrawLayout {
    units: u32,
    /// 0: the candidates come ranked in global memory. Else they come as a top-k's
    /// unordered per-chunk candidates (`topk::launch::RowCandidates`) that the cube ranks
    /// itself into shared memory, this many per unit (a power of two).
    staged_per_unit: u32,
    use_planes: bool,
    ieee_nan_compare: bool,
    wide_ids: bool,
    wide_seeds: bool,
    /// The parameters come as `[rows]` buffers ([`DrawParams::Each`]), else as scalars.
    per_row_params: bool,
    wide_k: bool,
}

impl DrawLayout {
    /// The staging tile's shape (a unit's candidates at `e * units + UNIT_POS`).
    fn stage(&self) -> RadixBlueprint {
        RadixBlueprint {
            units: self.units,
            elements_per_unit: self.staged_per_unit.max(1),
            use_planes: self.use_planes,
        }
    }

    /// Shared words of each staged array (1 when not staged).
    fn staged_tile(&self) -> usize {
        if self.staged_per_unit > 0 {
            self.stage().tile()
        } else {
            1
        }
    }

    fn fold(&self, op: ScanOp, elem: Dtype) -> Fold {
        Fold {
            op,
            elem,
            ieee_nan_compare: self.ieee_nan_compare,
        }
    }
}

/// A candidate logit as the draw reads it: as the top-k ranked it
/// ([`crate::radix::keys::logit_bits`]: NaN as `-inf`, `+inf` as `f32::MAX`).
#[cube]
fn sanitized(value: f32) -> f32 {
    f32::reinterpret(logit_bits(u32::reinterpret(value)))
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

/// Ranks a row's `per_row` unordered candidates (radix keys in `keys`, positions in their
/// chunk in `positions`; `chunk_k` from each chunk of `chunk_len` logits, as
/// `topk::launch::RowCandidates` leaves them) by (key, position in the row), and writes the
/// first `width`
/// to `ranked_keys` and `ranked_ids` (row positions) in that order. Equal keys sit in row
/// order within the buffers (each chunk writes its equal keys in index order, and the
/// chunks follow the row), so ranking by (key, slot) is ranking by (key, position).
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_candidates(
    keys: &[u32],
    positions: &[u32],
    ranked_keys: &mut Shared<[u32]>,
    ranked_ids: &mut Shared<[u32]>,
    row: usize,
    width: usize,
    per_row: usize,
    chunk_k: usize,
    chunk_len: usize,
    #[comptime] stage: RadixBlueprint,
) {
    let mut slot_keys = Shared::<[u32]>::new_slice(comptime!(stage.tile()));
    let base = row * per_row;
    #[unroll]
    for e in 0..stage.elements_per_unit {
        let c = (e * CUBE_DIM + UNIT_POS) as usize;
        // Past the candidates, the largest key: only ever compared as a later one.
        let mut key = 0xFFFF_FFFFu32;
        if c < per_row {
            key = keys[base + c];
        }
        slot_keys[c] = key;
    }
    sync_cube();
    let ranks = ranks_in_row(&slot_keys, stage);
    #[unroll]
    for e in 0..stage.elements_per_unit {
        let c = (e * CUBE_DIM + UNIT_POS) as usize;
        let rank = ranks[e as usize] as usize;
        if c < per_row && rank < width {
            ranked_keys[rank] = slot_keys[c];
            ranked_ids[rank] = candidate_row_position(positions, base, c, chunk_k, chunk_len);
        }
    }
    sync_cube();
}

/// Candidate `j`'s logit as the draw reads it (NaN as `-inf`, `+inf` as `f32::MAX`): from the
/// ranked values, or decoded from its staged radix key ([`KeyKind::F32Logits`], descending:
/// already NaN-free and clamped; -0.0 comes back as +0.0, the same weight).
#[cube]
fn candidate_value(
    values: &[u32],
    ranked_keys: &Shared<[u32]>,
    base: usize,
    j: usize,
    #[comptime] layout: DrawLayout,
) -> f32 {
    if comptime!(layout.staged_per_unit > 0) {
        let radix = !ranked_keys[j];
        let bits = select(radix >= 0x8000_0000u32, radix & 0x7FFF_FFFFu32, !radix);
        f32::reinterpret(bits)
    } else {
        sanitized(f32::reinterpret(values[base + j]))
    }
}

/// Candidate `j`'s token id (its low word).
#[cube]
fn candidate_id(
    ids: &[u32],
    ranked_ids: &Shared<[u32]>,
    base: usize,
    j: usize,
    #[comptime] layout: DrawLayout,
) -> u32 {
    if comptime!(layout.staged_per_unit > 0) {
        ranked_ids[j]
    } else {
        low_word(ids, base + j, layout.wide_ids)
    }
}

/// One cube per row of candidates: see the module docs. Every unit runs every loop the same
/// number of times (the trip counts depend on the row only), so all reach every barrier.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
fn draw_kernel<I: Numeric>(
    values: &[u32],
    ids: &[u32],
    seeds: &[u32],
    top_k: &[u32],
    top_p: &[f32],
    temperature: &[f32],
    tokens: &mut [I],
    rows: usize,
    width: usize,
    same_cut: usize,
    same_p: f32,
    same_t: f32,
    staged_len: usize,
    chunk_k: usize,
    chunk_len: usize,
    #[comptime] layout: DrawLayout,
    #[define(I)] _dtype: ElemType,
) {
    let row = linear_cube_index();
    if row >= rows {
        terminate!();
    }
    let units = comptime!(layout.units);
    let base = row * width;
    let mut ranked_keys = Shared::<[u32]>::new_slice(comptime!(layout.staged_tile()));
    let mut ranked_ids = Shared::<[u32]>::new_slice(comptime!(layout.staged_tile()));
    if comptime!(layout.staged_per_unit > 0) {
        stage_candidates(
            values,
            ids,
            &mut ranked_keys,
            &mut ranked_ids,
            row,
            width,
            staged_len,
            chunk_k,
            chunk_len,
            layout.stage(),
        );
    }
    let best = candidate_value(values, &ranked_keys, base, 0, layout);
    let has_token = finite(best);
    let shift = select(has_token, best, 0.0f32);
    // One value for every row (`same_*`), or each row's own.
    let mut t = same_t;
    let mut cut = same_cut;
    let mut p = same_p;
    if comptime!(layout.per_row_params) {
        t = temperature[row];
        cut = row_cut(top_k, row, width, layout.wide_k);
        p = top_p[row];
    }
    // NaN by its bits (a Vulkan driver may assume no NaNs in comparisons).
    let greedy = nan(t) || t <= 0.0f32;
    let divisor = select(greedy, 1.0f32, t);
    let p_nan = nan(p);
    let nucleus = p_nan || p < 1.0f32;
    let (seed_lo, seed_hi) = seed_words(seeds, row, layout.wide_seeds);
    let sum = comptime!(layout.fold(ScanOp::Sum, Dtype::F32));
    // Each unit walks its own run of `run` consecutive slots below the row's cut: one cube scan
    // of the runs' weights gives every unit the weight before its run, and no barrier sits
    // inside a loop (a loop of one cube scan per `units` slots gave wrong draws on lavapipe
    // past ~256 scans). Greedy rows and rows without a finite logit walk nothing.
    let mut run = 0usize;
    if has_token && !greedy {
        run = cut.div_ceil(units as usize);
    }
    let first = UNIT_POS as usize * run;

    // The kept candidates' total weight, and the weight before this unit's run.
    let mut own = 0.0f32;
    if nucleus {
        for i in 0..run {
            let j = first + i;
            if j < cut {
                let s = (candidate_value(values, &ranked_keys, base, j, layout) - shift) / divisor;
                if finite(s) {
                    own += s.exp();
                }
            }
        }
    }
    let weights = cube_exclusive::<f32>(own, sum, units, layout.use_planes);
    let total = weights.total;

    // Each unit's best perturbed score and its slot (its slots rise, so `>` keeps the first).
    let mut top = f32::reinterpret(0xFF80_0000u32);
    let mut top_slot = 0xFFFF_FFFFu32;
    let mut before = weights.before;
    for i in 0..run {
        let j = first + i;
        if j < cut {
            let s = (candidate_value(values, &ranked_keys, base, j, layout) - shift) / divisor;
            let mut keep = finite(s);
            if nucleus && keep {
                // Kept while the probability before it is below `p` (the first slot always).
                keep = j == 0usize || (!p_nan && before / total < p);
                before += s.exp();
            }
            if keep {
                let id = candidate_id(ids, &ranked_ids, base, j, layout);
                let score = s - neg_ln_uniform_of(seed_lo, seed_hi, id).ln();
                if score > top {
                    top = score;
                    top_slot = j as u32;
                }
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
            token = I::cast_from(candidate_id(ids, &ranked_ids, base, 0, layout));
        } else if has_token && slot < 0xFFFF_FFFFu32 {
            token = I::cast_from(candidate_id(ids, &ranked_ids, base, slot as usize, layout));
        }
        tokens[row] = token;
    }
}

/// Draws one token per row of `rows` rows of `width` ranked candidates (see the module docs
/// and [`DrawIo`]). `rows == 0` launches nothing; `width` must be at least 1 where `rows` is
/// not 0.
pub fn draw(client: &Client, io: DrawIo<'_>, rows: usize, width: usize) -> Result<(), SieveError> {
    let caps = DeviceCaps::of(client);
    let layout = check_draw(client, &caps, &io, rows, width)?;
    if rows > 0 {
        launch_draw(client, &io, rows, width, layout, None);
    }
    Ok(())
}

/// The most unordered candidates a row's draw ranks itself ([`top_k_top_p`]; also at most 8
/// a unit): the ranking costs each unit `candidates^2 / units` compares, a few thousand at
/// most.
const STAGED_MAX: usize = 1024;

/// Units of a draw cube that ranks its candidates.
const STAGED_UNITS: u32 = 256;

/// Draws one token per row of `[rows, vocab]` logits (see the module docs and
/// [`SampleIo`]): each row's candidates are its stable descending top-`cut`, where one
/// `cut` in `1..vocab` bounds every row's `top_k` (a row's larger `k` counts as `cut`), else
/// its whole row sorted; then [`draw`]. The candidates are ranked as the draw reads logits
/// (NaN as `-inf`, `+inf` as `f32::MAX`, [`KeyKind::F32Logits`]), so no pass sanitises the
/// logits first. Where the top-k runs one cube per row (or chunk of a row) and leaves at most
/// `STAGED_MAX` (1024) candidates a row, the draw kernel ranks them itself: two launches in all.
/// `rows == 0` launches nothing; `vocab` must be at least 1 where `rows` is not 0. Every
/// check runs before anything launches.
pub fn top_k_top_p(
    client: &Client,
    io: SampleIo<'_>,
    rows: usize,
    vocab: usize,
    cut: usize,
) -> Result<(), SieveError> {
    let caps = DeviceCaps::of(client);
    let width = if cut > 0 && cut < vocab { cut } else { vocab };
    // The candidate buffers are this call's own: only the caller's are checked.
    let layout = check_rows(client, &caps, &io.rows, rows, width, false)?;
    let logits = output_extent(client, &caps, "rows * vocab", rows, vocab)?;
    BufferRules::of(client).check_dtype("io.logits", io.logits, logits, Dtype::F32)?;
    if rows == 0 {
        return Ok(());
    }
    let problem = TopkProblem {
        rows,
        len: vocab,
        k: width,
    };
    if width < vocab {
        let units = caps.cube_units(STAGED_UNITS);
        let most = STAGED_MAX.min(8 * units as usize);
        let candidates = row_candidates(
            client,
            io.logits,
            Dtype::F32,
            problem,
            KeyKind::F32Logits,
            most,
        )?;
        if let Some(candidates) = candidates {
            let per_row = candidates.chunks * width;
            let layout = DrawLayout {
                units,
                staged_per_unit: per_row.div_ceil(units as usize).next_power_of_two() as u32,
                ..layout
            };
            let draw_io = DrawIo {
                values: &candidates.keys,
                ids: &candidates.positions,
                id_dtype: Dtype::U32,
                rows: io.rows,
            };
            let staged = (per_row, width, candidates.chunk_len);
            launch_draw(client, &draw_io, rows, width, layout, Some(staged));
            return Ok(());
        }
    }
    let total = rows * width;
    let values = client.empty(4 * total);
    let ids = client.empty(4 * total);
    if width < vocab {
        topk_keyed(
            client,
            TopkIo {
                values: io.logits,
                value_dtype: Dtype::F32,
                values_out: Some(&values),
                indices_out: Some(&ids),
                index_dtype: Dtype::U32,
            },
            problem,
            TopkOptions::default(),
            KeyKind::F32Logits,
        )?;
    } else {
        sort_keyed(
            client,
            &caps,
            SortIo {
                keys: io.logits,
                key_dtype: Dtype::F32,
                keys_out: Some(&values),
                indices_out: Some(&ids),
                index_dtype: Dtype::U32,
            },
            SortProblem { rows, len: vocab },
            SortOrder::Descending,
            SortOptions::default(),
            KeyKind::F32Logits,
        )?;
    }
    let draw_io = DrawIo {
        values: &values,
        ids: &ids,
        id_dtype: Dtype::U32,
        rows: io.rows,
    };
    launch_draw(client, &draw_io, rows, width, layout, None);
    Ok(())
}

/// Every check of a draw (before anything launches), and its cube's layout.
fn check_draw(
    client: &Client,
    caps: &DeviceCaps,
    io: &DrawIo<'_>,
    rows: usize,
    width: usize,
) -> Result<DrawLayout, SieveError> {
    let wide_ids = words_of("io.id_dtype", io.id_dtype)?;
    let layout = check_rows(client, caps, &io.rows, rows, width, wide_ids)?;
    let total = rows * width;
    let rules = BufferRules::of(client);
    rules.check_dtype("io.values", io.values, total, Dtype::F32)?;
    rules.check("io.ids", io.ids, words(wide_ids, total), "u32", 4)?;
    Ok(layout)
}

/// The checks of a draw's width and per-row buffers, and its cube's layout (candidates ranked
/// in global memory).
fn check_rows(
    client: &Client,
    caps: &DeviceCaps,
    per_row: &DrawRows<'_>,
    rows: usize,
    width: usize,
    wide_ids: bool,
) -> Result<DrawLayout, SieveError> {
    let wide_seeds = words_of("io.seed_dtype", per_row.seed_dtype)?;
    let wide_k = match per_row.params {
        DrawParams::Each { k_dtype, .. } => words_of("io.params.k_dtype", k_dtype)?,
        DrawParams::Same { .. } => false,
    };
    if !matches!(per_row.token_dtype, Dtype::I32 | Dtype::I64) {
        return Err(SieveError::invalid(
            "io.token_dtype",
            per_row.token_dtype.name(),
            "i32 or i64 (a row with no finite logit gets -1)",
        ));
    }
    caps.check_dtype(per_row.token_dtype)?;
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
    output_extent(client, caps, "rows * width", rows, width)?;
    let rules = BufferRules::of(client);
    rules.check("io.seeds", per_row.seeds, words(wide_seeds, rows), "u32", 4)?;
    if let DrawParams::Each {
        top_k,
        top_p,
        temperature,
        ..
    } = per_row.params
    {
        rules.check("io.params.top_k", top_k, words(wide_k, rows), "u32", 4)?;
        rules.check_dtype("io.params.top_p", top_p, rows, Dtype::F32)?;
        rules.check_dtype("io.params.temperature", temperature, rows, Dtype::F32)?;
    }
    rules.check_dtype("io.tokens", per_row.tokens, rows, per_row.token_dtype)?;
    // A plane or two for the usual top-k widths, up to 256 units for whole sorted rows.
    let wanted = (width.min(256) as u32).next_power_of_two();
    Ok(DrawLayout {
        units: caps.cube_units(wanted),
        staged_per_unit: 0,
        use_planes: caps.plane_ops,
        ieee_nan_compare: caps.ieee_nan_compare,
        wide_ids,
        wide_seeds,
        per_row_params: matches!(per_row.params, DrawParams::Each { .. }),
        wide_k,
    })
}

/// 32-bit words of `n` elements (two each where `wide`).
fn words(wide: bool, n: usize) -> usize {
    if wide { 2 * n } else { n }
}

/// The draw kernel over checked buffers (`rows > 0`).
/// `staged`: (candidates a row, from each chunk, chunk length) of unordered candidates
/// (`io.values` their radix keys, `io.ids` their positions in the chunk).
fn launch_draw(
    client: &Client,
    io: &DrawIo<'_>,
    rows: usize,
    width: usize,
    layout: DrawLayout,
    staged: Option<(usize, usize, usize)>,
) {
    let per_row = &io.rows;
    let (staged_len, chunk_k, chunk_len) = staged.unwrap_or((0, 0, 0));
    let total = rows * width.max(staged_len);
    let id_len = words(layout.wide_ids, total);
    let seed_len = words(layout.wide_seeds, rows);
    // Scalars, or the `[rows]` buffers (then placeholders of one word stand for the scalars'
    // buffers, which the kernel does not read, and the reverse).
    let (top_k, top_p, temperature, param_len, same_cut, same_p, same_t) = match per_row.params {
        DrawParams::Each {
            top_k,
            top_p,
            temperature,
            ..
        } => (
            top_k.clone(),
            top_p.clone(),
            temperature.clone(),
            rows,
            0,
            0.0,
            0.0,
        ),
        DrawParams::Same {
            top_k,
            top_p,
            temperature,
        } => {
            let placeholder = client.empty(4);
            let cut = if top_k > 0 && (top_k as u64) < width as u64 {
                top_k as usize
            } else {
                width
            };
            let p = placeholder.clone();
            (
                placeholder.clone(),
                p,
                placeholder,
                1,
                cut,
                top_p,
                temperature,
            )
        }
    };
    let k_len = if layout.per_row_params {
        words(layout.wide_k, rows)
    } else {
        1
    };
    // SAFETY: surplus cubes of the grid return before any access; every read is inside row
    // `row < rows` of buffers checked (`check_draw`) to hold `rows * width` candidates
    // (`j < width`), or made by the top-k with `rows * staged_len` (`c < staged_len`), and
    // `rows` parameters (`check_rows`); unit 0 writes `tokens[row]` alone.
    unsafe {
        draw_kernel::launch_unchecked(
            client,
            cube_count_1d(client, rows),
            CubeDim::new_1d(layout.units),
            address_type(&[id_len, seed_len, k_len]),
            BufferArg::from_raw_parts(io.values.clone(), total),
            BufferArg::from_raw_parts(io.ids.clone(), id_len),
            BufferArg::from_raw_parts(per_row.seeds.clone(), seed_len),
            BufferArg::from_raw_parts(top_k.clone(), k_len),
            BufferArg::from_raw_parts(top_p.clone(), param_len),
            BufferArg::from_raw_parts(temperature.clone(), param_len),
            BufferArg::from_raw_parts(per_row.tokens.clone(), rows),
            rows,
            width,
            same_cut,
            same_p,
            same_t,
            staged_len,
            chunk_k,
            chunk_len,
            layout,
            per_row.token_dtype.elem_type(),
        );
    }
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

    /// One row of [`super::top_k_top_p`]: `logits` ranked in stable descending order (NaN as
    /// `-inf`, `+inf` as `f32::MAX`), the first `cut` kept where `cut` is in `1..vocab`,
    /// then [`draw_row`]. Returns the candidates' ids (in rank order) and the draw.
    pub fn sample_row(logits: &[f32], cut: usize, params: RowParams) -> (Vec<u32>, RowDraw) {
        let vocab = logits.len();
        let width = if cut > 0 && cut < vocab { cut } else { vocab };
        let mut ids: Vec<u32> = (0..vocab as u32).collect();
        // A stable sort: equal logits keep the lower id first.
        ids.sort_by(|&a, &b| {
            let (a, b) = (sanitized(logits[a as usize]), sanitized(logits[b as usize]));
            b.partial_cmp(&a).expect("no NaN after sanitizing")
        });
        ids.truncate(width);
        let values: Vec<f32> = ids.iter().map(|&i| logits[i as usize]).collect();
        let draw = draw_row(&values, &ids, params);
        (ids, draw)
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
