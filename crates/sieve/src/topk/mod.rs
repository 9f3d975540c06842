//! Top-k (and bottom-k) of every row of a contiguous `[rows, len]` buffer: the `k` largest
//! (or smallest) values of each row and/or their positions, as `[rows, k]` outputs.
//!
//! # Semantics
//! - Top-k of a row is **the first `k` elements of a stable descending sort of that row**
//!   ([`crate::sort`] with [`crate::sort::SortOrder::Descending`]); bottom-k (`largest:
//!   false`) is the first `k` of a stable ascending sort. So equal values are taken **lowest
//!   index first** in both directions, and every strategy chooses the same elements.
//! - Order: integers by value; floats in PyTorch's order, `-inf < ... < -0.0 == +0.0 < ... <
//!   +inf < NaN`, every NaN equal to every other (a NaN counts as the largest value, as in
//!   `torch.topk`).
//! - `sorted: true`: output slot `j` of a row holds the element of rank `j` in that order.
//!   `sorted: false`: the same *set* of elements in an unspecified (but deterministic) order;
//!   [`TopkStrategy::RankByCounting`] and [`TopkStrategy::SortAndSlice`] always write the
//!   sorted order; [`TopkStrategy::RadixSelect`] skips its final sort and writes the chosen
//!   elements below the boundary in index order, followed by the chosen ties (also in index
//!   order), except where a one-row cube's minima bound answered or a row was cut into chunks
//!   (sorted order).
//! - The output values are the input values moved bit for bit (a -0.0 stays -0.0, NaN
//!   payloads stay); indices are positions within the row.
//! - `k = 0`, `rows = 0` and `len = 0` launch nothing; `k` must be in `0..=len`.
//! - Deterministic: every pass counts with integers and places elements by scans, never by
//!   the timing of atomics.
//! - Value dtypes: every [`Dtype`]; the 8-, 16- and 32-bit ones where the device has them
//!   (else [`SieveError::UnsupportedDtype`](crate::SieveError::UnsupportedDtype) names it),
//!   64-bit values (i64, u64, f64) on every device, read and moved as pairs of 32-bit words,
//!   only by [`TopkStrategy::SortAndSlice`] (which `Auto` picks for them; the other
//!   strategies refuse them by name). Index dtypes: i32, u32, i64 (where the device has
//!   64-bit integers).
//!
//! Every strategy works on the sort's order-preserving radix keys (`radix::keys`, flipped for
//! top-k): top-k becomes "the `k` smallest radix keys, ties to the lower index". 8- and 16-bit
//! keys sit in the low bits of a `u32`, so the selects run over the key's own bits only.
//!
//! # Strategies (`docs/ARCHITECTURE.md`, "Top-k", walks through each pass)
//! - [`TopkStrategy::RankByCounting`]: one cube per row, its radix keys in shared memory; a
//!   key's rank is the count of keys that outrank it, and ranks below `k` write themselves
//!   (sorted, one launch). `O(len^2 / units)`: rows up to [`TopkTuning::rank_capacity`] keys.
//! - [`TopkStrategy::RadixSelect`]: each row's *boundary* key (the `k`-th smallest) by the MSB
//!   digit select ([`crate::radix::select`]), then the *gather* of every key below it and the
//!   first ties, in index order, sorted by (key, index) after. Rows up to
//!   [`TopkTuning::row_cube_max_len`] (and longer rows cut into chunks that short) run one
//!   cube per row (chunk), which first tries a bound: the *minima bound* for small `k` (the
//!   `k`-th smallest of the units' minima bounds the row's `k`-th key), the *sampled bound*
//!   above it (a sample's key of a rank that by its odds at least `k` keys reach); cut rows'
//!   candidates are merged, or selected again. Other rows run device-wide digit passes (11,
//!   11 and 10 bits for 32-bit keys), each row's progress in a per-row state, after a sampled
//!   bound of their own in rows of [`TopkTuning::sample_min_len`] keys or more. A bound the
//!   data defeats (adversarial orders) falls back to the digit passes: outputs never depend
//!   on which path ran.
//! - [`TopkStrategy::SortAndSlice`]: [`crate::sort::sort`] of the row with positions (stable,
//!   descending for top-k), the first `k` of each row copied.
//! - [`TopkStrategy::Auto`]: `RankByCounting` for rows up to [`RANK_AUTO_LEN`] that fit; else
//!   `SortAndSlice` where a row fits the sort's one-cube capacity or `2 k > len`, and for
//!   64-bit values (the selects hold one 32-bit key a value); else `RadixSelect`.

mod kernels;
mod launch;
pub mod reference;
pub(crate) mod tile;

pub use launch::topk;
pub(crate) use launch::{row_candidates, topk_keyed};

use cubecl::server::Handle;

use crate::Dtype;
use crate::radix::digits::{SELECT_DIGITS, WIDE_SELECT_DIGITS};

/// Which algorithm selects (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TopkStrategy {
    /// Rank by counting for short rows, sort-and-slice where a row fits the in-cube sort or
    /// `2 k > len` (and for 64-bit values), else radix select (the rule is in the module
    /// docs).
    #[default]
    Auto,
    /// One cube per row ranks its keys by counting: rows up to
    /// [`TopkTuning::rank_capacity`] keys. Not 64-bit values.
    RankByCounting,
    /// The boundary key found by digit passes (one cube per row for rows up to
    /// [`TopkTuning::row_cube_max_len`] keys), then the gather. Not 64-bit values.
    RadixSelect,
    /// The stable sort of each row, its first `k` taken. Every value dtype.
    SortAndSlice,
}

impl TopkStrategy {
    /// Every strategy, `Auto` first.
    pub const ALL: [TopkStrategy; 4] = [
        TopkStrategy::Auto,
        TopkStrategy::RankByCounting,
        TopkStrategy::RadixSelect,
        TopkStrategy::SortAndSlice,
    ];

    /// The strategy's snake_case name, for messages and bench rows.
    pub fn name(self) -> &'static str {
        match self {
            TopkStrategy::Auto => "auto",
            TopkStrategy::RankByCounting => "rank_by_counting",
            TopkStrategy::RadixSelect => "radix_select",
            TopkStrategy::SortAndSlice => "sort_and_slice",
        }
    }
}

/// The shape of a top-k: `rows` independent rows of `len` contiguous values, `k` taken from
/// each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopkProblem {
    /// Independent rows of the problem.
    pub rows: usize,
    /// Values per row: below `u32::MAX` (positions are 32-bit), at most `i32::MAX` with i32
    /// indices.
    pub len: usize,
    /// Values taken from each row, `0..=len`.
    pub k: usize,
}

/// The buffers of one top-k: `values` is `[rows, len]`, the outputs `[rows, k]`.
#[derive(Debug, Clone, Copy)]
pub struct TopkIo<'a> {
    /// The values to select from (only read).
    pub values: &'a Handle,
    /// The dtype of `values` and `values_out`: any [`Dtype`] (the 8-, 16- and 32-bit ones
    /// where the device has them; 64-bit values on every device, by sorting).
    pub value_dtype: Dtype,
    /// The chosen values (the input's dtype, bits unchanged).
    pub values_out: Option<&'a Handle>,
    /// The chosen values' positions within their row.
    pub indices_out: Option<&'a Handle>,
    /// The dtype of `indices_out`: i32, u32 or i64 (i64 where the device has 64-bit
    /// integers).
    pub index_dtype: Dtype,
}

/// Tile shapes and cube counts of the passes: plain data, chosen from the device by
/// [`TopkTuning::for_device`], overridable. Device limits (units per cube, shared memory) are
/// not fields: they come from [`DeviceCaps`](crate::DeviceCaps), and a tuning that does not
/// fit them is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TopkTuning {
    /// Units per cube of the tiled passes (a power of two, at least the plane width).
    pub units_per_cube: u32,
    /// Keys per unit per tile, 1 to 32 (a tile holds fewer than 65,536 keys).
    pub elements_per_unit: u32,
    /// About how many cubes a pass over the input launches; each takes a chunk of
    /// consecutive tiles of one row (at least [`TopkTuning::min_tiles_per_cube`] where the
    /// row has them), paying its fixed costs (bins cleared and flushed, cube-wide sums,
    /// per-row atomics) once per chunk.
    pub target_cubes: u32,
    /// Fewest tiles a cube of a pass over the input takes where the row has them, whatever
    /// [`TopkTuning::target_cubes`] asks, 1 to 32: each cube adds its digit bins into the
    /// row's histogram with buffer atomics once, so longer chunks flush fewer bins.
    pub min_tiles_per_cube: u32,
    /// Rows up to this long run [`TopkStrategy::RadixSelect`] with one cube per row (one
    /// launch, the row re-read from cache), and so do longer rows that
    /// [`TopkTuning::row_split_cubes`] or [`TopkTuning::row_long_split_cubes`] cut into
    /// chunks this short with at most this many candidates (`chunks * k`); other rows run
    /// device-wide passes.
    pub row_cube_max_len: usize,
    /// Units of a one-cube-per-row radix select (a power of two, at least the plane width).
    pub row_units_per_cube: u32,
    /// Keys per unit of the one-cube-per-row select's tile, 1 to 32 (the tile below 65,536
    /// keys). The tile also stages the keys under the row cube's sampled bound, so its size
    /// sets the rows whose odds that bound can take.
    pub row_elements_per_unit: u32,
    /// The one-cube-per-row select cuts rows into chunks, one cube each, while `rows *
    /// chunks` stays within this many cubes (a few long rows still fill the device); 0 never
    /// cuts.
    pub row_split_cubes: u32,
    /// Rows past [`TopkTuning::row_cube_max_len`] may be cut into more chunks than
    /// [`TopkTuning::row_split_cubes`] allows, as many as bring each chunk within that limit,
    /// while `rows * chunks` stays within this many cubes (several waves of them: a row cube
    /// sweeps its chunk at about half the device-wide passes' rate, but those passes cost
    /// more to start) and their candidates (`chunks * k`) fill at most half of it; 0 never
    /// cuts further.
    pub row_long_split_cubes: u32,
    /// Rows past [`TopkTuning::row_cube_max_len`] are cut into chunks for the row cube only
    /// where each chunk's cube has a bound to try first (the minima bound, or the sampled
    /// bound where its odds hold for the chunk's length); otherwise a chunk's cube would sweep
    /// its chunk once a digit, and the row takes the device-wide passes. `true` cuts them
    /// even then. Default `false` (measured: `ROW_LONG_UNBOUNDED` in the source).
    pub row_long_unbounded: bool,
    /// The shortest chunk of a cut row (below it a cube's fixed costs dominate).
    pub row_chunk_min_len: usize,
    /// A cut row past [`TopkTuning::row_cube_max_len`] merges its chunks' candidates where it
    /// has at most this many chunks; with more, the row cube selects again over them (the
    /// merge's searches grow with the chunks). Rows within the limit always merge.
    pub row_merge_max_chunks: usize,
    /// A one-row cube tries the *minima bound* first for `k` up to its units over this (0:
    /// never). The smaller `k` is against the units, the fewer random keys lie under the
    /// bound (about `1.2 k` at a quarter) and the rarer a fallback.
    pub bound_units_per_k: u32,
    /// A one-row cube tries the *sampled bound* first for `k` above the minima bound's limit
    /// (one key a unit sampled, the keys under the sample's bound staged in a tile): one
    /// sweep of the row instead of one per digit, where the odds allow it (see the module
    /// docs).
    pub row_sample: bool,
    /// Tiles (of the passes' shape) the device-wide select samples from each row for its
    /// sampled bound, evenly spaced, at most one in 16: 0 to [`MAX_SAMPLE_TILES`]; 0 turns the
    /// sampled bound off (see the module docs).
    pub sample_tiles: u32,
    /// Rows shorter than this take the digit passes without the sampled bound (whose own
    /// launches cost more than they save on short rows).
    pub sample_min_len: usize,
    /// Use plane operations (the device must have them).
    pub use_planes: bool,
}

// The defaults below: the measurements behind them are in `docs/PERFORMANCE.md`, "Where top-k's
// defaults come from".

/// Keys per unit of the passes' tiles by default.
const ELEMENTS_PER_UNIT: u32 = 8;

/// Fewest tiles a cube of a device-wide pass takes by default where buffer atomics are relaxed
/// ([`TopkTuning::min_tiles_per_cube`]): eight beat two and sixteen from 2^24 to 2^26 keys
/// through CUDA (measurements: `docs/PERFORMANCE.md`, "Where top-k's defaults come from").
const MIN_TILES_PER_CUBE: u32 = 8;

/// The same where buffer atomics are ordered ([`DeviceCaps::ordered_atomics`](crate::DeviceCaps),
/// wgpu's Vulkan path): each cube's flush costs more there, and sixteen beat eight.
const ORDERED_ATOMICS_MIN_TILES_PER_CUBE: u32 = 16;

/// The minima bound runs by default for `k` up to a cube's units over this: at a quarter,
/// about `1.2 k` random keys lie under the bound, well inside the cube's one per unit.
const BOUND_UNITS_PER_K: u32 = 4;

/// Tiles sampled from a device-wide row by default: 512 tiles of 2048 keys, one key in 256 of
/// a 2^28-key row.
const SAMPLE_TILES: u32 = 512;

/// Rows of at least this many keys try the sampled bound by default (it won at 2^26 keys and
/// lost at 2^24, where its own launches cost more than the passes it saves).
const SAMPLE_MIN_LEN: usize = 1 << 26;

/// The most tiles a row's sample may take ([`TopkTuning::sample_tiles`]).
pub const MAX_SAMPLE_TILES: u32 = 1 << 16;

/// Cubes the one-cube-per-row select may cut rows into where the device does not say how many
/// multiprocessors it has (wgpu; one per multiprocessor otherwise): a few long rows must still
/// fill the device.
const ROW_SPLIT_CUBES: u32 = 128;

/// The most chunks a cut row past the row cube's limit merges by default; with more, the row
/// cube selects again over their candidates (the merge's searches grow with the chunks).
const ROW_MERGE_MAX_CHUNKS: usize = 16;

/// Whether rows past the row cube's limit are cut into chunks whose cubes have no bound to try
/// (`TopkTuning::row_long_unbounded`): such a chunk's cube sweeps it once a digit, which lost
/// to the device-wide passes through Vulkan and tied through CUDA.
const ROW_LONG_UNBOUNDED: bool = false;

/// Rows past the row cube's limit may be cut into up to this many cubes a multiprocessor by
/// default (`TopkTuning::row_long_split_cubes`): four waves took [2^25] and [2^26] rows faster
/// than the device-wide passes and left [2^27] and longer to them.
const ROW_LONG_SPLIT_WAVES: u32 = 4;

/// The shortest chunk of a cut row by default: 16,384 keys, 16 tiles of a 1024-unit row cube.
const ROW_CHUNK_MIN_LEN: usize = 1 << 14;

/// Shared memory of a tiled top-k cube: the tile's radix keys, the device-wide select's digit
/// bins (as many as its widest digit has) and the scan spine (one word per unit).
pub(crate) fn tile_shared_bytes(units: u32, elements_per_unit: u32) -> usize {
    4 * (units as usize * elements_per_unit as usize + WIDE_SELECT_DIGITS + units as usize)
}

/// Shared memory of a one-cube-per-row radix select, every allocation counted (not every
/// compiler overlaps allocations whose lifetimes do not: the SPIR-V path does not): a tile of
/// keys (the sampled bound's sample and the keys under it), the digit bins, six words per unit
/// (the scan spines of the gather's cube-wide sum and of the two digit selects, the minima
/// bound's candidate keys and positions; one more than these need since the minima bound
/// counts the keys below it without a scan, kept so every device picks the units it did) and
/// a few words (two digit choices of three words, the key range, two candidate counters). The
/// kernel for larger `k` needs less: its three selects and the gather hold four words per unit
/// and about twenty more.
pub(crate) fn row_shared_bytes(units: u32, elements_per_unit: u32) -> usize {
    4 * (units as usize * elements_per_unit as usize + SELECT_DIGITS + 6 * units as usize + 12)
}

/// Keys the one-cube-per-row select's tile holds where shared memory allows: a cube of fewer
/// units (Vulkan's 48 KiB: 512) takes more keys each (up to 32), so the sampled bound keeps
/// room for the keys under it.
const ROW_TILE_KEYS: u32 = 8192;

/// Units and keys per unit of the one-cube-per-row radix select: the most units a cube may
/// have (up to 1024), halved until its shared memory ([`row_shared_bytes`]) fits at the
/// passes' `elements_per_unit` keys a unit; then as many more keys a unit, towards
/// [`ROW_TILE_KEYS`] a tile, as still fit.
fn row_shape(caps: &crate::DeviceCaps, elements_per_unit: u32) -> (u32, u32) {
    let fits = |units: u32, epu: u32| row_shared_bytes(units, epu) <= caps.max_shared_bytes;
    let mut units = caps.max_cube_units();
    while units > caps.plane_size_max && !fits(units, elements_per_unit) {
        units /= 2;
    }
    let mut epu = elements_per_unit;
    while epu * 2 <= 32 && units * epu < ROW_TILE_KEYS && fits(units, epu * 2) {
        epu *= 2;
    }
    (units, epu)
}

/// The longest row rank-by-counting takes, whatever the shared memory: its work grows with
/// the square of the row.
pub const RANK_MAX_LEN: usize = 4096;

/// Rows up to this length go to rank-by-counting under `Auto`.
pub const RANK_AUTO_LEN: usize = 1024;

impl TopkTuning {
    /// 256 units x 8 keys per tile (fewer keys where shared memory is short: a tile takes
    /// 17 KiB with the 2048 bins of an 11-bit digit); 64 cubes per multiprocessor in a pass
    /// (4096 where the device does not say how many it has: at 2^28 k = 1000 on the H200 8448
    /// cubes took 1.59 ms, 4224 1.71, 2112 1.86), each of at least 8 tiles (16 where buffer
    /// atomics are ordered); one-cube-per-row selects of up to 1024 units
    /// for rows up to 2^17 keys, cut into chunks of at least 16,384 keys while that leaves at
    /// most one cube per multiprocessor (longer rows into chunks of up to 2^17 keys while
    /// that leaves at most four, where their chunks have a bound to try), their tile 8192
    /// keys where shared memory allows; the minima bound for `k` up to a quarter of a cube's
    /// units, the row cube's sampled bound above it; a sample of 512 tiles a row for the
    /// device-wide sampled bound, in rows of 2^26 keys or more.
    pub fn for_device(caps: &crate::DeviceCaps) -> Self {
        let units_per_cube = caps.cube_units(256);
        let mut elements_per_unit = ELEMENTS_PER_UNIT;
        while elements_per_unit > 1
            && tile_shared_bytes(units_per_cube, elements_per_unit) > caps.max_shared_bytes
        {
            elements_per_unit /= 2;
        }
        let (row_units_per_cube, row_elements_per_unit) = row_shape(caps, elements_per_unit);
        TopkTuning {
            units_per_cube,
            elements_per_unit,
            target_cubes: caps
                .multiprocessors
                .map_or(4096, |sms| sms.saturating_mul(64)),
            min_tiles_per_cube: if caps.ordered_atomics {
                ORDERED_ATOMICS_MIN_TILES_PER_CUBE
            } else {
                MIN_TILES_PER_CUBE
            },
            row_cube_max_len: 1 << 17,
            row_units_per_cube,
            row_elements_per_unit,
            row_split_cubes: caps.multiprocessors.unwrap_or(ROW_SPLIT_CUBES),
            row_long_split_cubes: caps
                .multiprocessors
                .unwrap_or(ROW_SPLIT_CUBES)
                .saturating_mul(ROW_LONG_SPLIT_WAVES),
            row_long_unbounded: ROW_LONG_UNBOUNDED,
            row_chunk_min_len: ROW_CHUNK_MIN_LEN,
            row_merge_max_chunks: ROW_MERGE_MAX_CHUNKS,
            bound_units_per_k: BOUND_UNITS_PER_K,
            row_sample: true,
            sample_tiles: SAMPLE_TILES,
            sample_min_len: SAMPLE_MIN_LEN,
            use_planes: caps.plane_ops,
        }
    }

    /// Keys per tile.
    pub fn tile(&self) -> usize {
        self.units_per_cube as usize * self.elements_per_unit as usize
    }

    /// The largest `k` for which a one-row cube of `units` tries the minima bound (see
    /// [`TopkTuning::bound_units_per_k`]; 0: never).
    pub fn bound_max_k(&self, units: u32) -> u32 {
        units.checked_div(self.bound_units_per_k).unwrap_or(0)
    }

    /// The longest row [`TopkStrategy::RankByCounting`] takes: the largest power of two of
    /// keys that fits in shared memory beside 4 KiB at 6 bytes a key (the 4-byte key, and per
    /// unit, one per 8 keys, its minimum, a scan-spine word and a candidate key and
    /// position for the minima bound), at most [`RANK_MAX_LEN`] and 16 per unit of the
    /// largest cube.
    pub fn rank_capacity(&self, caps: &crate::DeviceCaps) -> usize {
        let fit = caps.max_shared_bytes.saturating_sub(4096) / 6;
        if fit == 0 {
            return 0;
        }
        let power = 1usize << (usize::BITS - 1 - fit.leading_zeros());
        power
            .min(RANK_MAX_LEN)
            .min(caps.max_cube_units() as usize * 16)
    }
}

/// Options of one top-k call.
#[derive(Debug, Clone, Copy)]
pub struct TopkOptions {
    /// `true`: the `k` largest (top-k); `false`: the `k` smallest (bottom-k).
    pub largest: bool,
    /// `true`: outputs in rank order (see the module docs).
    pub sorted: bool,
    /// Which algorithm selects; a forced `RankByCounting` on rows that do not fit one cube is
    /// refused.
    pub strategy: TopkStrategy,
    /// `None`: [`TopkTuning::for_device`].
    pub tuning: Option<TopkTuning>,
}

impl Default for TopkOptions {
    /// Largest, sorted, `Auto`: `torch.topk`'s defaults.
    fn default() -> Self {
        TopkOptions {
            largest: true,
            sorted: true,
            strategy: TopkStrategy::Auto,
            tuning: None,
        }
    }
}

/// What one top-k call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopkReport {
    /// The strategy that ran (`Auto` resolved).
    pub strategy: TopkStrategy,
    /// Counting passes over the input the boundary search queued: one per select digit
    /// (`RadixSelect`: one cube per row 4, 2 or 1 by the key's bits, device-wide 3, 2 or 1:
    /// the most it runs: the host does not learn
    /// which digit passes a row skipped, or whether the row cube's minima bound answered
    /// instead); 0 for the other strategies, and when no search is needed (`k = 0`, `k =
    /// len`, empty problems).
    pub counting_passes: u32,
    /// Whether the device-wide select tried the sampled bound first (the module docs; rows it
    /// answered skip the digit passes, which `counting_passes` still counts).
    pub sampled_bound: bool,
}
