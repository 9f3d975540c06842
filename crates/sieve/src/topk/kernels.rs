//! Kernel entry points of the top-k family: thin `#[cube]` functions over [`super::tile`].
//! Passes over the input give each cube a chunk of consecutive tiles of one row
//! (`tile::chunk_of_cube`: `cubes_per_row` cubes per row, `tiles_per_cube` tiles each);
//! per-row kernels run one cube (rank, digit choice) or one unit (state updates) per row;
//! elementwise kernels one unit per output element. Grids come from `cube_count_1d`, so the
//! cube index is always `linear_cube_index()`.
//!
//! Control flow around cube-wide sums depends only on launch constants, cube positions and
//! per-row state every unit of a cube reads alike, never on the keys: cubes with nothing to
//! do still take part, with no keys.
//!
//! Every kernel here keeps the rules of `docs/ARCHITECTURE.md` ("Rules every kernel keeps"):
//! every unit reaches every `sync_cube` and plane operation on every path; a nest of
//! `#[unroll]` loops stays within [`crate::common::UNROLL_BODIES`] bodies; `PLANE_DIM`, never
//! 32; `address_type = "dynamic"`, with 64-bit addresses only where a launch needs them.

use cubecl::prelude::*;

// The kernels below write these as literals (so their variables are runtime ones).
const _: () = assert!(SOURCE_INPUT == 0 && SOURCE_A == 1 && SOURCE_B == 2);

use super::tile::{
    DIGITS, GatherSlots, KeyRead, SOURCE_A, SOURCE_B, SOURCE_INPUT, STATE_BOUND, STATE_DONE,
    STATE_HI_COUNT, STATE_LO, STATE_NEED, STATE_SHARED_FROM, STATE_SOURCE, STATE_SOURCE_LEN,
    STATE_TARGET, STATE_WORDS, TopkBlueprint, chunk_of_cube, clear_bins, count_chunk, find_digit,
    gather_tile, histogram_tile, key_at, rank_under_minima_bound, ranks_in_row, row_histogram_tile,
    select_under_minima_bound,
};
use crate::common::cube::{U32Range, cube_exclusive_sum, cube_range};
use crate::common::grid::linear_cube_index;

/// Rank by counting: one cube per row, the row's radix keys in shared memory; every element
/// whose rank is below `k` writes itself to output slot `rank`. With `k <= bound_max_k` only
/// the keys under the minima bound are ranked, among themselves
/// ([`rank_under_minima_bound`]), unless too many lie under it.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn rank_kernel<K: Numeric, I: Numeric>(
    values: &[K],
    values_out: &mut [K],
    indices_out: &mut [I],
    len: usize,
    k: usize,
    rows: usize,
    bound_max_k: u32,
    #[comptime] read: KeyRead,
    #[comptime] write_values: bool,
    #[comptime] write_indices: bool,
    #[comptime] blueprint: TopkBlueprint,
    #[define(K, I)] _dtypes: [ElemType; 2],
) {
    let row = linear_cube_index();
    if row >= rows {
        terminate!();
    }
    let row_base = row * len;
    let mut keys = Shared::<[u32]>::new_slice(comptime!(blueprint.tile()));
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let local = (e * CUBE_DIM + UNIT_POS) as usize;
        // Padding past the row: the largest radix key, which `ranks_in_row` never counts.
        keys[local] = 0xFFFF_FFFFu32;
        if local < len {
            keys[local] = key_at::<K>(values, row_base + local, read);
        }
    }
    sync_cube();
    let mut ranked = false;
    // Uniform per cube, as is `fits`.
    if k <= bound_max_k as usize {
        let candidate = rank_under_minima_bound(&keys, len, k as u32, blueprint);
        ranked = candidate.fits;
        let rank = candidate.rank as usize;
        if rank < k {
            let local = candidate.position as usize;
            if write_values {
                values_out[row * k + rank] = values[row_base + local];
            }
            if write_indices {
                indices_out[row * k + rank] = I::cast_from(candidate.position);
            }
        }
    }
    if !ranked {
        let ranks = ranks_in_row(&keys, blueprint);
        #[unroll]
        for e in 0..blueprint.elements_per_unit {
            let local = (e * CUBE_DIM + UNIT_POS) as usize;
            if local < len {
                let rank = ranks[e as usize] as usize;
                if rank < k {
                    if write_values {
                        values_out[row * k + rank] = values[row_base + local];
                    }
                    if write_indices {
                        indices_out[row * k + rank] = I::cast_from(local as u32);
                    }
                }
            }
        }
    }
}

/// The search state of every row before the first pass (see `tile::STATE_*`). With
/// `k == len` every key is taken: the boundary is the largest radix key and no pass runs.
#[cube(launch_unchecked, address_type = "dynamic")]
pub(crate) fn init_state_kernel(state: &mut [u32], rows: usize, len: u32, k: u32) {
    let row = linear_cube_index() * CUBE_DIM as usize + UNIT_POS as usize;
    if row >= rows {
        terminate!();
    }
    let s = row * STATE_WORDS;
    state[s + STATE_BOUND] = if k == len { 0xFFFF_FFFFu32 } else { 0u32 };
    state[s + STATE_LO] = 0u32;
    state[s + STATE_HI_COUNT] = len;
    state[s + STATE_DONE] = 0u32;
    state[s + STATE_NEED] = k;
    state[s + STATE_SOURCE] = SOURCE_INPUT;
    state[s + STATE_SOURCE_LEN] = len;
    state[s + STATE_TARGET] = SOURCE_INPUT;
    state[s + STATE_SHARED_FROM] = 32u32;
}

/// Bisection step, counting pass: how many keys of each unfinished row are below the row's
/// guess `lo | 1 << bit`, added into `counts[row]` (one atomic add per cube, after its
/// chunk of tiles).
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn bisect_count_kernel<K: Numeric>(
    values: &[K],
    state: &[u32],
    counts: &mut [Atomic<u32>],
    len: usize,
    tiles_per_row: usize,
    cubes_per_row: usize,
    tiles_per_cube: usize,
    total_cubes: usize,
    bit: u32,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let cube = linear_cube_index();
    if cube >= total_cubes {
        terminate!();
    }
    let chunk = chunk_of_cube(cube, tiles_per_row, cubes_per_row, tiles_per_cube);
    let s = chunk.row * STATE_WORDS;
    // Uniform per cube: a finished row's cubes leave at once.
    if state[s + STATE_DONE] != 0u32 {
        terminate!();
    }
    let guess = state[s + STATE_LO] | (1u32 << bit);
    let counts_here = count_chunk::<K>(values, &chunk, len, guess, read, blueprint);
    let below = cube_exclusive_sum(counts_here.below, blueprint.units, blueprint.use_planes);
    if UNIT_POS == 0 {
        counts[chunk.row].fetch_add(below.total);
    }
}

/// Bisection step, decision (one unit per row): keep the half the `k`-th key is in; the row
/// is done once exactly `k` keys lie below the interval's end (that end is the boundary) or
/// the interval is one key wide. Clears the row's count.
#[cube(launch_unchecked, address_type = "dynamic")]
pub(crate) fn bisect_update_kernel(
    state: &mut [u32],
    counts: &mut [u32],
    rows: usize,
    k: u32,
    bit: u32,
) {
    let row = linear_cube_index() * CUBE_DIM as usize + UNIT_POS as usize;
    if row >= rows {
        terminate!();
    }
    let s = row * STATE_WORDS;
    let below = counts[row];
    counts[row] = 0u32;
    if state[s + STATE_DONE] == 0u32 {
        let lo = state[s + STATE_LO];
        let guess = lo | (1u32 << bit);
        let mut done = false;
        if below < k {
            state[s + STATE_LO] = guess;
            if bit == 0u32 {
                state[s + STATE_BOUND] = guess;
                done = true;
            }
        } else {
            state[s + STATE_HI_COUNT] = below;
            if below == k {
                state[s + STATE_BOUND] = guess;
                done = true;
            } else if bit == 0u32 {
                state[s + STATE_BOUND] = lo;
                done = true;
            }
        }
        if done {
            state[s + STATE_DONE] = 1u32;
        }
    }
}

/// Radix select, one digit pass over each row's candidate source, whose tiles the row's
/// `cubes_per_row` cubes take in turn: the
/// digit histogram of the keys matching the row's prefix, added into `histograms[row]`, and
/// the matching keys appended to the row's target buffer when it has one. The first pass
/// also records the range of the row's keys in `ranges[row]` (`[!min, max]`, both kept by
/// `fetch_max` from zero, so one zero fill initialises them); a later pass whose digit every
/// key of the row shares (`shift >= STATE_SHARED_FROM`, see `radix_digit_kernel`) reads
/// nothing, as its digit is the minimum's.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn radix_histogram_kernel<K: Numeric>(
    values: &[K],
    cand_a: &mut [u32],
    cand_b: &mut [u32],
    state: &[u32],
    histograms: &mut [Atomic<u32>],
    appended: &mut [Atomic<u32>],
    ranges: &mut [Atomic<u32>],
    len: usize,
    cubes_per_row: usize,
    total_cubes: usize,
    shift: u32,
    #[comptime] first_pass: bool,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let cube = linear_cube_index();
    if cube >= total_cubes {
        terminate!();
    }
    let row = cube / cubes_per_row;
    let s = row * STATE_WORDS;
    // Uniform per cube: the whole cube leaves, before any synchronisation.
    if !first_pass && shift >= state[s + STATE_SHARED_FROM] {
        terminate!();
    }
    let bins = Shared::<[Atomic<u32>]>::new_slice(DIGITS);
    clear_bins(&bins);
    sync_cube();
    // Literals, not the constants, so the variables are runtime ones: SOURCE_INPUT is 0.
    let mut source = 0u32;
    let mut source_len = len;
    let mut target = 0u32;
    if !first_pass {
        source = state[s + STATE_SOURCE];
        source_len = state[s + STATE_SOURCE_LEN] as usize;
        target = state[s + STATE_TARGET];
    }
    let prefix = state[s + STATE_BOUND];
    let mut range = U32Range {
        min: 0xFFFF_FFFFu32,
        max: 0u32,
    };
    // The row's cubes take the source's tiles in turn (order does not matter here), so a
    // candidate buffer far shorter than the row is still spread over all of them.
    let tile_keys = comptime!(blueprint.tile());
    let source_tiles = source_len.div_ceil(tile_keys);
    let mut tile = cube % cubes_per_row;
    while tile < source_tiles {
        let tile_range = histogram_tile::<K>(
            values,
            cand_a,
            cand_b,
            &bins,
            appended,
            row,
            row * len,
            tile * tile_keys,
            source,
            source_len,
            target,
            prefix,
            shift,
            first_pass,
            read,
            blueprint,
        );
        range.min = min(range.min, tile_range.min);
        range.max = max(range.max, tile_range.max);
        tile += cubes_per_row;
    }
    if first_pass {
        let cube_range = cube_range(range, blueprint.use_planes);
        if UNIT_POS == 0 && cube_range.min <= cube_range.max {
            ranges[2 * row].fetch_max(!cube_range.min);
            ranges[2 * row + 1].fetch_max(cube_range.max);
        }
    }
    sync_cube();
    let mut d = UNIT_POS as usize;
    while d < DIGITS {
        let count = bins[d].load();
        if count > 0u32 {
            histograms[row * DIGITS + d].fetch_add(count);
        }
        d += CUBE_DIM as usize;
    }
}

/// Radix select, digit choice: one cube of `units` per row (any power of two up to 256,
/// each owning `256 / units` consecutive bins). The exclusive sum of the bins finds the digit
/// whose keys hold the row's `need`-th key; the digit joins
/// the prefix, `need` drops by the keys of smaller digits. The candidates the pass appended
/// become the next source, and the next pass appends (to the other buffer) only if
/// `append_next` and the matching keys are fewer than the source holds. Clears the histogram
/// and the append counter. It also stores in `STATE_SHARED_FROM` the lowest bit from which
/// every key of the row agrees (from the range the first pass recorded). A digit every key
/// shares (its pass counted nothing, or, in the first pass, counted every key in one bin)
/// is the minimum's, and changes nothing else: every earlier digit was shared too, so no
/// candidates were ever appended.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn radix_digit_kernel(
    state: &mut [u32],
    histograms: &mut [u32],
    appended: &mut [u32],
    ranges: &[u32],
    rows: usize,
    shift: u32,
    #[comptime] append_next: bool,
    #[comptime] units: u32,
    #[comptime] use_planes: bool,
) {
    let row = linear_cube_index();
    if row >= rows {
        terminate!();
    }
    let s = row * STATE_WORDS;
    let min = !ranges[2 * row];
    let differ = min ^ ranges[2 * row + 1];
    // Bits from `shared_from` up are the same in every key of the row.
    let shared_from = 32u32 - u32::leading_zeros(differ);
    let per_unit = comptime!(DIGITS.div_ceil(units as usize) as u32);
    let first = row * DIGITS + (UNIT_POS * per_unit) as usize;
    if shift >= shared_from {
        // Uniform per cube. The first pass did count (the bins hold every key in one digit):
        // clear them.
        #[unroll]
        for j in 0..per_unit {
            histograms[first + j as usize] = 0u32;
        }
        if UNIT_POS == 0 {
            state[s + STATE_BOUND] = state[s + STATE_BOUND] | (min & (0xFFu32 << shift));
            state[s + STATE_SHARED_FROM] = shared_from;
        }
        terminate!();
    }
    let mut counts = Array::<u32>::new(per_unit as usize);
    let mut run = 0u32;
    #[unroll]
    for j in 0..per_unit {
        let count = histograms[first + j as usize];
        histograms[first + j as usize] = 0u32;
        counts[j as usize] = count;
        run += count;
    }
    let need = state[s + STATE_NEED];
    let counted = cube_exclusive_sum(run, units, use_planes);
    // The one bin (of one unit) whose keys hold the `need`-th: its digit, the keys before it.
    // `none` (no digit of this unit) is written as a literal, so the variable is a runtime one.
    let none = comptime!(DIGITS as u32);
    let mut digit = 256u32;
    let mut before = counted.before;
    let mut count = 0u32;
    #[unroll]
    for j in 0..per_unit {
        let c = counts[j as usize];
        if digit == none && before < need && need <= before + c {
            digit = UNIT_POS * per_unit + j;
            count = c;
        } else if digit == none {
            before += c;
        }
    }
    if digit < none {
        let mut source = state[s + STATE_SOURCE];
        let mut source_len = state[s + STATE_SOURCE_LEN];
        let target = state[s + STATE_TARGET];
        if target != SOURCE_INPUT {
            source = target;
            source_len = appended[row];
        }
        appended[row] = 0u32;
        // A literal, so the variable is a runtime one: SOURCE_INPUT (0) means "no target";
        // the target is the candidate buffer the row is not reading.
        let mut next_target = 0u32;
        if append_next {
            if count < source_len {
                next_target = 1u32;
                if source == SOURCE_A {
                    next_target = 2u32;
                }
            }
        }
        state[s + STATE_BOUND] = state[s + STATE_BOUND] | (digit << shift);
        state[s + STATE_NEED] = need - before;
        state[s + STATE_SOURCE] = source;
        state[s + STATE_SOURCE_LEN] = source_len;
        state[s + STATE_TARGET] = next_target;
        state[s + STATE_SHARED_FROM] = shared_from;
    }
}

/// Radix select of whole rows, one cube per row, in one launch, writing the chosen radix keys
/// and positions to `[rows, k]` candidates as the device-wide gather does. With `k <=
/// bound_max_k` the cube first tries [`select_under_minima_bound`] (two sweeps; sorted
/// candidates); where too many keys lie under the bound, or `k` is larger, it runs the
/// MSB-first digit passes, one per 8 bits of the key (each a sweep over the row's tiles
/// into the cube's shared histogram, then [`find_digit`]), and the gather (`gather_tile` over the row's tiles in
/// order). Later sweeps find the row in cache. The first digit sweep also takes the row's
/// key range: digits every key shares are the smallest key's, and their sweeps are skipped.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn row_select_kernel<K: Numeric>(
    values: &[K],
    cand_keys: &mut [u32],
    cand_positions: &mut [u32],
    len: usize,
    k: u32,
    rows: usize,
    bound_max_k: u32,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let row = linear_cube_index();
    if row >= rows {
        terminate!();
    }
    let row_base = row * len;
    let bins = Shared::<[Atomic<u32>]>::new_slice(DIGITS);
    let mut selected = false;
    // Uniform per cube, as is the result.
    if k <= bound_max_k {
        selected = select_under_minima_bound::<K>(
            values,
            &bins,
            cand_keys,
            cand_positions,
            row_base,
            row * k as usize,
            len,
            k,
            read,
            blueprint,
        );
    }
    if !selected {
        select_by_digits::<K>(
            values,
            &bins,
            cand_keys,
            cand_positions,
            row,
            len,
            k,
            read,
            blueprint,
        );
    }
}

/// The digit passes and the gather of [`row_select_kernel`], for one row.
#[cube]
#[allow(clippy::too_many_arguments)]
fn select_by_digits<K: Numeric>(
    values: &[K],
    bins: &Shared<[Atomic<u32>]>,
    cand_keys: &mut [u32],
    cand_positions: &mut [u32],
    row: usize,
    len: usize,
    k: u32,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
) {
    let row_base = row * len;
    let tile_keys = comptime!(blueprint.tile());
    let tiles = len.div_ceil(tile_keys);
    let mut prefix = 0u32;
    let mut need = k;
    let mut smallest = 0u32;
    // Bits from `shared_from` up are the same in every key of the row (32: unknown yet).
    let mut shared_from = 32u32;
    // MSB-first digits of the key's bits (the bits above are zero in every radix key).
    let key_bits = comptime!(read.kind.key_bits());
    for pass in 0..comptime!(key_bits / 8) {
        let shift = comptime!(key_bits - 8) - 8u32 * pass;
        // Uniform per cube (from the cube-wide range).
        if shift >= shared_from {
            prefix |= smallest & (0xFFu32 << shift);
        } else {
            clear_bins(bins);
            sync_cube();
            // The prefix bits chosen so far (none in the first pass; `shift + 8` is 32 there).
            let mut high_mask = 0u32;
            if pass > 0u32 {
                high_mask = 0xFFFF_FFFFu32 << (shift + 8u32);
            }
            let mut range = U32Range {
                min: 0xFFFF_FFFFu32,
                max: 0u32,
            };
            for tile in 0..tiles {
                let tile_range = row_histogram_tile::<K>(
                    values,
                    bins,
                    row_base,
                    tile * tile_keys,
                    len,
                    prefix,
                    high_mask,
                    shift,
                    read,
                    blueprint,
                );
                range.min = min(range.min, tile_range.min);
                range.max = max(range.max, tile_range.max);
            }
            if pass == 0u32 {
                let row_range = cube_range(range, blueprint.use_planes);
                smallest = row_range.min;
                shared_from = 32u32 - u32::leading_zeros(row_range.min ^ row_range.max);
            }
            sync_cube();
            let choice = find_digit(bins, need, blueprint);
            prefix |= choice.digit << shift;
            need -= choice.before;
        }
    }
    // `prefix` is the boundary: the `k - need` keys below it all go, then ties in index order.
    let mut less = 0u32;
    let mut equal = k - need;
    for tile in 0..tiles {
        let slots = GatherSlots {
            out_base: row * k as usize,
            less,
            equal,
            k,
        };
        let taken = gather_tile::<K>(
            values,
            cand_keys,
            cand_positions,
            row_base,
            tile * tile_keys,
            len,
            prefix,
            slots,
            read,
            blueprint,
        );
        less += taken & 0xFFFFu32;
        equal += taken >> 16u32;
    }
}

/// Gather, pass 1: per cube (a chunk of tiles), how many keys are below the row's boundary
/// and how many equal it, written as `[row][below: cubes | equal: cubes]`, so an exclusive
/// scan of a row gives each cube the first slot of its keys below, and of its ties (after
/// every key below).
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_count_kernel<K: Numeric>(
    values: &[K],
    state: &[u32],
    cube_counts: &mut [u32],
    len: usize,
    tiles_per_row: usize,
    cubes_per_row: usize,
    tiles_per_cube: usize,
    total_cubes: usize,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let cube = linear_cube_index();
    if cube >= total_cubes {
        terminate!();
    }
    let chunk = chunk_of_cube(cube, tiles_per_row, cubes_per_row, tiles_per_cube);
    let bound = state[chunk.row * STATE_WORDS + STATE_BOUND];
    let counts = count_chunk::<K>(values, &chunk, len, bound, read, blueprint);
    let below = cube_exclusive_sum(counts.below, blueprint.units, blueprint.use_planes);
    let equal = cube_exclusive_sum(counts.equal, blueprint.units, blueprint.use_planes);
    if UNIT_POS == 0 {
        let base = chunk.row * 2 * cubes_per_row;
        cube_counts[base + chunk.part] = below.total;
        cube_counts[base + cubes_per_row + chunk.part] = equal.total;
    }
}

/// Gather, pass 2: every key below the boundary, and the ties whose slot is below `k`, to
/// their slots (radix keys and positions, `[rows, k]`); the cube walks its chunk in order,
/// in tiles of the `gather` shape, so its slots follow index order. A cube whose chunk has
/// nothing to write (by pass 1's counts) reads nothing.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_scatter_kernel<K: Numeric>(
    values: &[K],
    state: &[u32],
    cube_counts: &[u32],
    cube_offsets: &[u32],
    cand_keys: &mut [u32],
    cand_positions: &mut [u32],
    len: usize,
    k: u32,
    tiles_per_row: usize,
    cubes_per_row: usize,
    tiles_per_cube: usize,
    total_cubes: usize,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
    #[comptime] gather: TopkBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let cube = linear_cube_index();
    if cube >= total_cubes {
        terminate!();
    }
    let chunk = chunk_of_cube(cube, tiles_per_row, cubes_per_row, tiles_per_cube);
    let base = chunk.row * 2 * cubes_per_row;
    let mut less = cube_offsets[base + chunk.part];
    let mut equal = cube_offsets[base + cubes_per_row + chunk.part];
    // Uniform per cube: a chunk with no key below the boundary and no tie that gets a slot
    // (most chunks when `k` is small) reads nothing.
    let ties_here = cube_counts[base + cubes_per_row + chunk.part];
    if cube_counts[base + chunk.part] == 0u32 && (ties_here == 0u32 || equal >= k) {
        terminate!();
    }
    let bound = state[chunk.row * STATE_WORDS + STATE_BOUND];
    // The chunk's keys, walked in gather tiles (`gather`, a multiple of the passes' tile:
    // fewer cube-wide sums per key when most tiles have keys to write, i.e. large `k`).
    let tile_keys = comptime!(blueprint.tile());
    let chunk_end = min(chunk.end * tile_keys, len);
    let mut start = chunk.first * tile_keys;
    while start < chunk_end {
        let slots = GatherSlots {
            out_base: chunk.row * k as usize,
            less,
            equal,
            k,
        };
        let taken = gather_tile::<K>(
            values,
            cand_keys,
            cand_positions,
            chunk.row * len,
            start,
            chunk_end,
            bound,
            slots,
            read,
            gather,
        );
        less += taken & 0xFFFFu32;
        equal += taken >> 16u32;
        start += comptime!(gather.tile());
    }
}

/// The outputs: output `j` of row `r` is the input element at position
/// `positions[r * position_stride + c]`, where `c = order[j]` (`reorder`) or `j % k`; each
/// element is `words` values of `K` (64-bit values move as two `u32` words).
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish_kernel<K: Numeric, I: Numeric>(
    values: &[K],
    positions: &[u32],
    order: &[u32],
    values_out: &mut [K],
    indices_out: &mut [I],
    len: usize,
    k: usize,
    position_stride: usize,
    total: usize,
    #[comptime] words: u32,
    #[comptime] reorder: bool,
    #[comptime] write_values: bool,
    #[comptime] write_indices: bool,
    #[define(K, I)] _dtypes: [ElemType; 2],
) {
    let index = linear_cube_index() * CUBE_DIM as usize + UNIT_POS as usize;
    if index >= total {
        terminate!();
    }
    let row = index / k;
    let mut column = index % k;
    if reorder {
        column = order[index] as usize;
    }
    let position = positions[row * position_stride + column];
    if write_values {
        let source = row * len + position as usize;
        #[unroll]
        for w in 0..words {
            values_out[index * words as usize + w as usize] =
                values[source * words as usize + w as usize];
        }
    }
    if write_indices {
        indices_out[index] = I::cast_from(position);
    }
}
