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
//!   order), except where a one-row cube's minima bound answered (sorted order).
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
//! Every strategy works on the sort's order-preserving *radix keys* (flipped for top-k), in
//! a `u32` (`radix::keys`): top-k becomes "the `k` smallest radix keys, ties to the lower
//! index". 8- and 16-bit keys occupy the low 8 or 16 bits, the bits above zero in both
//! directions, so the boundary searches run over the key's own bits only: one or two digit
//! passes.
//!
//! # Strategies
//! - [`TopkStrategy::RankByCounting`]: one cube per row, the row's radix keys in shared
//!   memory; every element counts the elements that outrank it (a smaller key, or an equal
//!   key at a lower index): that count is its rank, and ranks below `k` write themselves to
//!   output slot `rank` (sorted output directly). Each unit sweeps the row once for all of
//!   its keys. `O(len^2 / units)` work per row: rows up to [`TopkTuning::rank_capacity`]
//!   keys (a few thousand). For small `k` (see [`TopkTuning::bound_units_per_k`]) the cube
//!   first takes the *minima bound* (below): only the keys at or under it are ranked, among
//!   themselves (about `k` against about `k` on random data), unless more keys than the
//!   cube has units lie under it.
//! - [`TopkStrategy::RadixSelect`]: each row's *boundary* key `T` (the `k`-th smallest
//!   radix key) found by the digit select of [`crate::radix::digits`], MSB-first digits
//!   (in one cube: 8-bit, four for 32-bit keys, two for 16-bit, one for 8-bit; device-wide:
//!   11, 11 and 10 bits for 32-bit keys in rows of 2^16 keys or more, else 8-bit digits), then
//!   the *gather*: every
//!   key below `T`, plus the first `k - count(< T)` keys equal to `T` in index order,
//!   placed by a scan of per-cube counts (each cube of a pass takes a chunk of consecutive
//!   tiles, see [`TopkTuning::target_cubes`]; a chunk with nothing to write is not read
//!   again); then the `k` chosen are sorted by (key, index) with [`crate::sort`]. Rows up
//!   to [`TopkTuning::row_cube_max_len`] keys run one cube per row, everything in one
//!   launch (a few long rows are first cut into chunks, one cube each, while the cubes stay
//!   within [`TopkTuning::row_split_cubes`]: each chunk's top-k is selected as a row's, and
//!   the chunks' candidates, sorted by (key, index), give the row's first `k`; such rows'
//!   outputs come sorted even with `sorted: false`): each digit pass sweeps the row (re-read from cache) into the cube's shared
//!   histogram and picks the digit; the first sweep's
//!   key range skips the digits every key shares; then the cube gathers the row's chosen
//!   keys tile by tile in index order. Before that, for small `k` (see
//!   [`TopkTuning::bound_units_per_k`]), the cube tries the *minima bound*: one sweep takes
//!   each unit's smallest key, the `k`-th smallest of those minima bounds the row's `k`-th
//!   key from above (`k` distinct units each read a key at or below it), so every chosen
//!   key, and every key that outranks one, lies at or under it; a second sweep collects
//!   those keys into shared memory (about `k` of them on random data), and each is ranked
//!   among them by (key, index): two sweeps instead of five, and sorted candidates. Where
//!   more keys than the cube has units lie under the bound (all-equal or low-entropy rows,
//!   where the bound is a common key) the cube runs the digit passes after all, having
//!   spent two sweeps. Longer rows run device-wide passes: each pass builds a histogram of
//!   the next digit (2048 bins for an 11-bit digit) of the keys that match the boundary
//!   prefix found so far (each cube's shared-memory counters, over all of its tiles, added
//!   into a per-row histogram), and a prefix sum over the bins picks the digit the `k`-th
//!   key has. The second pass compacts the keys matching the first digit (the candidates),
//!   so the third reads only those (their tiles dealt out to all of the row's cubes in
//!   turn); a row whose candidates would not shrink keeps reading its current source
//!   instead of copying it. The first pass also records each row's smallest and
//!   largest key: a digit that every key of the row shares (their range agrees on it and on
//!   every bit above) is the smallest key's, and its pass reads nothing, so all-equal and
//!   low-entropy rows cost one histogram pass, not three. With planes, a tile whose keys
//!   across a whole plane share one digit goes into the shared histogram as one add
//!   instead of one per key. Then the gather and the sort.
//! - [`TopkStrategy::SortAndSlice`]: [`crate::sort::sort`] of the whole row with positions
//!   (stable, descending for top-k) into a workspace, then the first `k` of each row copied.
//! - [`TopkStrategy::Auto`] (checked against the H200 rows in `docs/PERFORMANCE.md`:
//!   rank-by-counting wins at [16384, 128], radix select at [64, 128256], [4096, 32768],
//!   [2^24] and [2^28]; sort-and-slice is 2-5x slower there):
//!   1. `len <= 1024` and the row fits [`TopkTuning::rank_capacity`]: `RankByCounting` (one
//!      launch, at most 1024 comparisons per element);
//!   2. else a row fits the sort's in-cube capacity ([`crate::sort::SortTuning::in_cube_capacity`]):
//!      `SortAndSlice` (one cube per row sorts it in one launch);
//!   3. else `2 * k > len`: `SortAndSlice` (the chosen set is most of the row: sorting it is
//!      most of a full sort anyway);
//!   4. else `RadixSelect` (one cube per row for rows up to 2^17 keys; longer rows: at most
//!      three device-wide digit passes, the input read by the first two, the gather's count
//!      and the chunks of its scatter that hold chosen keys).
//!
//!   64-bit values always take `SortAndSlice`: the sort already ranks them as two radix
//!   words, while the selecting strategies hold one 32-bit radix key per value (shared
//!   memory, candidate buffers, per-row state); a two-word select is not written.

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

/// Tile shapes of the counting, histogram and gather passes: plain data, chosen from the
/// device, overridable. The device's limits (units per cube, shared memory) are not fields:
/// they come from [`DeviceCaps`](crate::DeviceCaps) at each call, and a tuning that does not
/// fit them is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TopkTuning {
    /// Units per cube of the tiled passes (a power of two, at least the plane width).
    pub units_per_cube: u32,
    /// Keys per unit per tile, 1 to 32 (a tile holds fewer than 65,536 keys).
    pub elements_per_unit: u32,
    /// About how many cubes a pass over the input launches: each takes a chunk of
    /// consecutive tiles of one row (two at least where the row has them), so its fixed
    /// costs (clearing and flushing a histogram, cube-wide sums, atomics into per-row
    /// counters) are paid once per chunk. Enough to fill
    /// the device a few times over.
    pub target_cubes: u32,
    /// Rows up to this long run [`TopkStrategy::RadixSelect`] with one cube per row: every
    /// digit pass and the gather in one launch, the row read from cache after the first
    /// sweep. Longer rows run device-wide passes (each row's tiles spread over many cubes).
    pub row_cube_max_len: usize,
    /// Units of a one-cube-per-row radix select (a power of two, at least the plane width);
    /// its tiles hold `row_units_per_cube * elements_per_unit` keys.
    pub row_units_per_cube: u32,
    /// The one-cube-per-row radix select cuts each row into chunks, one cube each, while
    /// `rows * chunks` stays within this many cubes (so a few long rows still fill the
    /// device); 0 never cuts. See [`TopkTuning::row_chunk_min_len`].
    pub row_split_cubes: u32,
    /// The shortest chunk a cut row gets (below it a cube's fixed costs dominate).
    pub row_chunk_min_len: usize,
    /// The *minima bound* (see the module docs) is tried first by a one-row cube (the
    /// rank-by-counting cube, the one-cube-per-row radix select) whose `k` is at most its
    /// units over this; 0 turns it off, 1 tries it for every `k` up to the units. It falls
    /// back to the full method where more keys than the cube has units lie under the bound.
    /// The bound is the `k`-th smallest of the units' minima: the smaller `k` is against the
    /// units, the fewer random keys lie under it (about `1.2 k` at a quarter), and the rarer
    /// a fallback.
    pub bound_units_per_k: u32,
    /// Keys per unit of the gather's scatter tiles: a multiple of `elements_per_unit`, at
    /// most 32. Larger tiles mean fewer cube-wide sums per key where most tiles hold chosen
    /// keys (large `k`).
    pub gather_elements_per_unit: u32,
    /// Use plane operations (the device must have them).
    pub use_planes: bool,
}

/// Keys per unit of the passes' tiles by default.
const ELEMENTS_PER_UNIT: u32 = 8;

/// The minima bound runs by default for `k` up to a cube's units over this. With `k` a
/// quarter of the units, about `1.2 k` random keys lie under the bound (`len * p` where
/// `(1 - p)^(len / units) = 3 / 4`), well inside the cube's capacity of one per unit.
const BOUND_UNITS_PER_K: u32 = 4;

/// The shortest chunk of a cut row by default: 16,384 keys, 16 tiles of a 1024-unit row cube.
const ROW_CHUNK_MIN_LEN: usize = 1 << 14;

/// Shared memory of a tiled top-k cube: the tile's radix keys, the device-wide select's digit
/// bins (as many as its widest digit has) and the scan spine (one word per unit).
pub(crate) fn tile_shared_bytes(units: u32, elements_per_unit: u32) -> usize {
    4 * (units as usize * elements_per_unit as usize + WIDE_SELECT_DIGITS + units as usize)
}

/// Shared memory of a one-cube-per-row radix select, every allocation counted (not every
/// compiler overlaps allocations whose lifetimes do not: the SPIR-V path does not): the
/// gather's tile of keys, the digit bins, six words per unit (the scan spines of the
/// gather's two cube-wide sums and of the two digit selects, the minima bound's candidate
/// keys and positions) and a few words (two digit choices of three words, the key range,
/// the candidate counter).
pub(crate) fn row_shared_bytes(units: u32, elements_per_unit: u32) -> usize {
    4 * (units as usize * elements_per_unit as usize + SELECT_DIGITS + 6 * units as usize + 12)
}

/// Units of the one-cube-per-row radix select: the most a cube may have (up to 1024), halved
/// until its shared memory ([`row_shared_bytes`]) fits.
fn row_units(caps: &crate::DeviceCaps, elements_per_unit: u32) -> u32 {
    let fits = |units: u32| row_shared_bytes(units, elements_per_unit) <= caps.max_shared_bytes;
    let mut units = caps.max_cube_units();
    while units > caps.plane_size_max && !fits(units) {
        units /= 2;
    }
    units
}

/// The longest row rank-by-counting takes, whatever the shared memory: its work grows with
/// the square of the row.
pub const RANK_MAX_LEN: usize = 4096;

/// Rows up to this length go to rank-by-counting under `Auto`.
pub const RANK_AUTO_LEN: usize = 1024;

impl TopkTuning {
    /// 256 units (or as many as a cube may have) x 8 keys per tile; 64 cubes per multiprocessor in
    /// a pass (8 waves of 8 resident 256-unit cubes; at 2^28 k = 1000 on the H200 8448 cubes took
    /// 1.59 ms, 4224 1.71, 2112 1.86, 1056 2.06; at k = 100000 8448 and 4224 were within 1%), 4096
    /// cubes where the device does not say how many it has; one-cube-per-row selects of up to 1024
    /// units (as many as fit) for rows up to 2^17 keys, rows cut into chunks of at least 16,384
    /// keys while that leaves at most two cubes per multiprocessor (64 cubes where the device does
    /// not say); the minima bound for `k` up to a quarter of a one-row cube's units; scatter tiles
    /// as the passes' (larger ones measured slower on the H200: 16 and 32 keys per unit took 1.1x
    /// and 1.4x at [2^28] k = 100000). A tile of 256 x 8 keys takes 17 KiB of shared memory with
    /// the 2048 bins of an 11-bit digit (the bins are counted whatever the row length); fewer keys
    /// per unit where it would not fit.
    pub fn for_device(caps: &crate::DeviceCaps) -> Self {
        let units_per_cube = caps.cube_units(256);
        let mut elements_per_unit = ELEMENTS_PER_UNIT;
        while elements_per_unit > 1
            && tile_shared_bytes(units_per_cube, elements_per_unit) > caps.max_shared_bytes
        {
            elements_per_unit /= 2;
        }
        TopkTuning {
            units_per_cube,
            elements_per_unit,
            target_cubes: caps
                .multiprocessors
                .map_or(4096, |sms| sms.saturating_mul(64)),
            row_cube_max_len: 1 << 17,
            row_units_per_cube: row_units(caps, elements_per_unit),
            row_split_cubes: caps.multiprocessors.map_or(64, |sms| sms.saturating_mul(2)),
            row_chunk_min_len: ROW_CHUNK_MIN_LEN,
            bound_units_per_k: BOUND_UNITS_PER_K,
            gather_elements_per_unit: elements_per_unit,
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
}
