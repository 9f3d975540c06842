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
//! # Strategies (`docs/ARCHITECTURE.md` walks through each pass)
//! - [`TopkStrategy::RankByCounting`]: one cube per row, its radix keys in shared memory;
//!   each key's rank is the count of keys that outrank it, and ranks below `k` write
//!   themselves (sorted output, one launch). `O(len^2 / units)`: rows up to
//!   [`TopkTuning::rank_capacity`] keys.
//! - [`TopkStrategy::RadixSelect`]: each row's *boundary* key `T` (the `k`-th smallest) by the
//!   MSB digit select ([`crate::radix::select`]), then the *gather*: every key below `T` and
//!   the first `k - count(< T)` keys equal to `T`, in index order, sorted by (key, index)
//!   after. Rows up to [`TopkTuning::row_cube_max_len`] run one cube per row, everything in
//!   one launch (a few long rows cut into chunks, [`TopkTuning::row_split_cubes`], whose
//!   candidates are merged by the sort: such rows come sorted even with `sorted: false`);
//!   so do longer rows cut into chunks no longer than that with at most a row cube's worth of
//!   candidates (few rows, `k` up to ~1000 at 2^24 keys; up to 2^26 keys a row by default,
//!   there `k` up to 128: [`TopkTuning::row_long_split_cubes`]; only where each chunk has
//!   a bound to try, [`TopkTuning::row_long_unbounded`]), merged where they have few
//!   chunks ([`TopkTuning::row_merge_max_chunks`]), else the row cube again over those
//!   candidates (then sorted too); other rows run device-wide passes.
//!   First the *sampled bound* (where a row has at
//!   least 16 tiles, [`TopkTuning::sample_tiles`]): the digit select over a sample of evenly
//!   spaced whole tiles finds a key that, by the sample's odds, at least `k` keys of the row
//!   reach and few lie below; one pass over the row counts each tile's keys under it, and
//!   where at least `k` reach it and at most the gather's capacity lie below, the row is
//!   answered without digit passes: its keys under the bound are gathered in index order and
//!   the first `k` by (key, index) selected from them by one cube. Rows where the sample
//!   misled (adversarial orders) run the digit passes (11, 11 and 10 bits for 32-bit keys in
//!   rows of 2^16 keys or more, else 8-bit), the matching keys compacted between passes, each
//!   row's progress in a per-row state, and a row whose keys all share a digit skips its
//!   pass. The gather counts every tile's keys below and at the boundary, scans the counts,
//!   and writes from the tiles that hold chosen keys only.
//! - The *minima bound* (the one-row cubes, `k` up to [`TopkTuning::bound_units_per_k`]): the
//!   `k`-th smallest of the units' minima bounds the row's `k`-th key from above (`k` distinct
//!   units each read a key at or below it), so the keys under it, ranked among themselves,
//!   are the answer: two sweeps of the row. Where more keys than units lie under it (low
//!   entropy) but fewer than `k` below it, the bound is the row's `k`-th key: the radix
//!   select's row cube stages the keys below it apart from the ties, so they are ranked all
//!   the same, and takes the first ties from the row's start (stopping once it has them);
//!   otherwise the cube runs its full method.
//! - The row cube's *sampled bound* (larger `k`, [`TopkTuning::row_sample`]): one key a unit,
//!   evenly spaced, is the sample; its key of rank `mu + 4 sqrt(mu) + 8` (`mu` its expected
//!   share of the row's `k` smallest) the bound. One sweep stages the row's keys at or below
//!   it in a tile of shared memory; where at least `k` and at most a tile of them were found,
//!   the MSB select over the staged keys gives the row's boundary and the gather follows (two
//!   sweeps in all, against one per digit and the gather). Rows the sample misled run the
//!   full method after it.
//! - [`TopkStrategy::SortAndSlice`]: [`crate::sort::sort`] of the row with positions (stable,
//!   descending for top-k), the first `k` of each row copied.
//! - [`TopkStrategy::Auto`] (the fastest on every H200 row of `docs/PERFORMANCE.md`):
//!   `RankByCounting` for rows up to [`RANK_AUTO_LEN`] that fit; else `SortAndSlice` where a
//!   row fits the sort's one-cube capacity or `2 k > len`; else `RadixSelect`. 64-bit values
//!   always take `SortAndSlice` (the sort ranks them as two radix words; the selects hold one
//!   32-bit key per value).

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

/// Keys per unit of the passes' tiles by default.
const ELEMENTS_PER_UNIT: u32 = 8;

/// Fewest tiles a cube of a device-wide pass takes by default where buffer atomics are relaxed
/// ([`TopkTuning::min_tiles_per_cube`]). On an H100 (raw radix select, ms, CUDA / Vulkan;
/// `bench/results/h100/40-cs`, `40-ab`) eight against two: [2^24] k = 100000 0.335 / 0.435
/// against 0.350 / 0.605, tied 0.299 / 0.370 against 0.299 / 0.458; [2^25] k = 1000 0.289 /
/// 0.469 against 0.332 / 0.574, k = 100000 0.468 / 0.649 against 0.506 / 0.750; [2^26] (four
/// tiles a cube at CUDA's 8448 cubes) k = 1000 0.272 against 0.281, k = 100000 0.487 against
/// 0.493. Sixteen lost through CUDA (`40-c2`: [2^24] 0.350 against 0.337, [2^25] 0.294 / 0.484
/// against 0.289 / 0.473, [2^26] 0.504 against 0.499). Rows of 2^28 keys take 16 tiles a cube
/// through CUDA and 32 through wgpu at the default cube counts, where more cubes of ~16 tiles
/// beat fewer of ~31 on the H200 (`bench/results/h200/14-b`) and 4096 to 512 cubes were
/// within 2% through Vulkan (`40-tv`).
const MIN_TILES_PER_CUBE: u32 = 8;

/// The same where buffer atomics are ordered ([`DeviceCaps::ordered_atomics`](crate::DeviceCaps),
/// wgpu's Vulkan path): sixteen against eight through Vulkan on the H100 (`40-c2`), [2^24] k =
/// 100000 0.406 against 0.433, [2^25] k = 1000 / 100000 0.421 / 0.600 against 0.470 / 0.649,
/// [2^26] k = 100000 0.551 against 0.548.
const ORDERED_ATOMICS_MIN_TILES_PER_CUBE: u32 = 16;

/// The minima bound runs by default for `k` up to a cube's units over this. With `k` a
/// quarter of the units, about `1.2 k` random keys lie under the bound (`len * p` where
/// `(1 - p)^(len / units) = 3 / 4`), well inside the cube's capacity of one per unit.
const BOUND_UNITS_PER_K: u32 = 4;

/// Tiles sampled from a device-wide row by default: 512 tiles of 2048 keys are 2^20 keys, one
/// in 256 of a 2^28-key row.
const SAMPLE_TILES: u32 = 512;

/// Rows of at least this many keys try the sampled bound by default: on the H200 it took
/// 0.42 ms against the digit passes' 0.52 at 2^26 keys, k = 1000, and 0.36-0.40 against
/// 0.21-0.23 at 2^24 (`bench/results/h200/15-c`).
const SAMPLE_MIN_LEN: usize = 1 << 26;

/// The most tiles a row's sample may take ([`TopkTuning::sample_tiles`]).
pub const MAX_SAMPLE_TILES: u32 = 1 << 16;

/// Cubes the one-cube-per-row select may cut rows into where the device does not say how many
/// multiprocessors it has (wgpu never does; one per multiprocessor otherwise: at [64, 128256]
/// on the H200 two chunks a row beat four by 20-37% at k = 50 and 1000, uniform and tied, and
/// one chunk (64 cubes) lost to both; `bench/results/h200/18-c`). Through the H200's Vulkan
/// (`27-g`, ms): k = 1000 0.210 at 32 cubes (one chunk a row), 0.123 at 128, 0.126 at 256;
/// k = 50 0.064 / 0.049 / 0.047; tied k = 1000 0.209 / 0.123, tied k = 50 0.118 / 0.076.
const ROW_SPLIT_CUBES: u32 = 128;

/// The most chunks a cut row past the row cube's limit merges by default: on an H100 at
/// [2^24] (132 chunks, `bench/results/h100/34-lx`) selecting again took 0.089 / 0.092 / 0.134
/// ms at `k` = 10 / 32 / 64 against the merge's 0.130 / 0.174 / 0.185 through CUDA (0.102 /
/// 0.116 / 0.121 against 0.139 / 0.186 / 0.200 through Vulkan), while at [64, 128256] (two
/// chunks a row) the merge won, 0.043-0.073 against 0.074-0.095; [8, 2^21] (16 chunks a row)
/// merged took 0.077 against the device-wide 0.200 (`33-lr`). Between 16 and 128 chunks
/// neither was timed.
const ROW_MERGE_MAX_CHUNKS: usize = 16;

/// Whether rows past the row cube's limit are cut into chunks whose cubes have no bound to
/// try (`TopkTuning::row_long_unbounded`). Measured on an H100 (`bench/results/h100/43-tk`,
/// `43-kt`; raw radix select, ms, chunked row cube against device-wide passes): through
/// Vulkan (a row cube of 512 units: 48 KiB of shared memory), whose chunks of 2^17 keys
/// lack the sampled bound's odds past `k` = 128, [2^24] `k` = 200 / 300 / 1000 took 0.293 /
/// 0.283 / 0.338 against 0.252 / 0.252 / 0.265, [2^22] `k` = 1000 0.150 against 0.154, but
/// [2^25] `k` = 256 0.402 against 0.422; through CUDA (1024 units) at [2^24] `k` = 1000 the
/// row cube without its sampled bound took 0.250 against 0.188 (0.160 with it). Those Vulkan
/// rows ran with a 4096-key row tile. At its 8192 ([`ROW_TILE_KEYS`]; `h100/44-kv`, Vulkan,
/// this `false` against `true`): [2^22] `k` = 1000 0.1226 against 0.1221 (no difference),
/// [2^24] `k` = 1000 0.2502 against 0.2965 and `k` = 200 0.2458 against 0.2631; through CUDA
/// the same rows within 0.2%.
const ROW_LONG_UNBOUNDED: bool = false;

/// Rows past the row cube's limit may be cut into up to this many cubes a multiprocessor by
/// default (`TopkTuning::row_long_split_cubes`). On an H100 (`bench/results/h100/35-lc`, raw
/// radix select, ms, CUDA / Vulkan): [2^26] cut into 512 chunks of 2^17 keys took 0.247 /
/// 0.228 at k = 10 and 0.294 / 0.258 at k = 64 against the device-wide passes' 0.387 / 0.519
/// and 0.371 / 0.468; [2^28] in 2048 chunks lost, 0.895 / 0.799 against 0.574 / 0.690 (k =
/// 10) and 0.983 / 0.817 against 0.586 / 0.658 (k = 64). Four waves take [2^26] (512 chunks
/// on 132 multiprocessors, or on wgpu's 128) and leave [2^27] (1024) device-wide: there
/// (`35-fin`) the cut lost through CUDA (0.545 / 0.524 against 0.364 / 0.443 at k = 10 /
/// 64) and won or tied through Vulkan (0.408 / 0.437 against 0.458 / 0.434). [2^25] in 256
/// chunks: 0.139 / 0.218 / 0.205 against 0.329 / 0.425 / 0.326 at k = 10 / 64 / 256 (CUDA),
/// 0.140 / 0.162 / 0.394 against 0.633 / 0.644 / 0.631 (Vulkan). But [2^26] k = 256 (a full
/// row cube of candidates) took 0.664 against 0.415 through Vulkan (0.359 against 0.399
/// through CUDA): hence the half-cube limit on the candidates.
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
/// units takes more keys each (up to 32). Through Vulkan's 48 KiB the row cube has 512 units,
/// and 16 keys a unit keep the tile CUDA's 1024 units x 8 have, so the sampled bound has the
/// same room for the keys under it: through Vulkan on an H100 [64, 128256] `k` = 1000 took
/// 0.091 ms against 0.121 at 8 keys a unit, tied 0.072 against 0.108; through CUDA 16 keys a
/// unit (a 16,384-key tile) lost there, 0.077 against 0.072 (`bench/results/h100/43-kf`).
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
