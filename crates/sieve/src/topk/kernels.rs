//! Kernel entry points of the top-k family: thin `#[cube]` functions over [`super::tile`].
//! Tiled kernels take tile `t` as tile `t % tiles_per_row` of row `t / tiles_per_row`;
//! per-row kernels run one cube (rank, digit choice) or one unit (state updates) per row;
//! elementwise kernels one unit per output element. Grids come from `cube_count_1d`, so the
//! cube index is always `linear_cube_index()`.
//!
//! Control flow around cube-wide sums depends only on launch constants and cube positions,
//! never on buffer contents: cubes with nothing to do still take part, with no keys.

use cubecl::prelude::*;

// The kernels below write these as literals (so their variables are runtime ones).
const _: () = assert!(SOURCE_INPUT == 0 && SOURCE_A == 1 && SOURCE_B == 2);

use super::tile::{
    DIGITS, GatherSlots, KeyRead, SOURCE_A, SOURCE_B, SOURCE_INPUT, STATE_BOUND, STATE_DONE,
    STATE_HI_COUNT, STATE_LO, STATE_NEED, STATE_SOURCE, STATE_SOURCE_LEN, STATE_TARGET,
    STATE_WORDS, TopkBlueprint, count_tile, gather_tile, histogram_tile, key_at, rank_in_row,
};
use crate::common::cube::{cube_exclusive_sum, cube_range};
use crate::common::grid::linear_cube_index;

/// Rank by counting: one cube per row, the row's radix keys in shared memory; every element
/// whose rank is below `k` writes itself to output slot `rank`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn rank_kernel<K: Numeric, I: Numeric>(
    values: &[K],
    values_out: &mut [K],
    indices_out: &mut [I],
    len: usize,
    k: usize,
    rows: usize,
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
        if local < len {
            keys[local] = key_at::<K>(values, row_base + local, read);
        }
    }
    sync_cube();
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let local = (e * CUBE_DIM + UNIT_POS) as usize;
        if local < len {
            let rank = rank_in_row(&keys, local, len) as usize;
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

/// The search state of every row before the first pass (see `tile::STATE_*`). With
/// `k == len` every key is taken: the boundary is the largest radix key and no pass runs.
#[cube(launch_unchecked)]
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
}

/// Bisection step, counting pass: how many keys of each unfinished row are below the row's
/// guess `lo | 1 << bit`, added into `counts[row]` (one atomic add per cube).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn bisect_count_kernel<K: Numeric>(
    values: &[K],
    state: &[u32],
    counts: &mut [Atomic<u32>],
    len: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    bit: u32,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let row = tile / tiles_per_row;
    let start = (tile % tiles_per_row) * comptime!(blueprint.tile());
    let s = row * STATE_WORDS;
    let active = state[s + STATE_DONE] == 0u32;
    let guess = state[s + STATE_LO] | (1u32 << bit);
    let packed = count_tile::<K>(
        values,
        row * len,
        start,
        len,
        guess,
        active,
        read,
        blueprint,
    );
    if active && UNIT_POS == 0 {
        counts[row].fetch_add(packed & 0xFFFFu32);
    }
}

/// Bisection step, decision (one unit per row): keep the half the `k`-th key is in; the row
/// is done once exactly `k` keys lie below the interval's end (that end is the boundary) or
/// the interval is one key wide. Clears the row's count; counts the rows still searching
/// into `searching`.
#[cube(launch_unchecked)]
pub(crate) fn bisect_update_kernel(
    state: &mut [u32],
    counts: &mut [u32],
    searching: &mut [Atomic<u32>],
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
        } else {
            searching[0].fetch_add(1u32);
        }
    }
}

/// Radix select, one digit pass over one tile of each row's candidate source: the digit
/// histogram of the keys matching the row's prefix, added into `histograms[row]`, and the
/// matching keys appended to the row's target buffer when it has one. The first pass also
/// records the range of the row's keys in `ranges[row]` (`[!min, max]`, both kept by
/// `fetch_max` from zero, so one zero fill initialises them); a later pass whose digit every
/// key of the row shares (the range agrees on every bit from `shift` up) reads nothing, as
/// its digit is the minimum's.
#[cube(launch_unchecked)]
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
    tiles_per_row: usize,
    total_tiles: usize,
    shift: u32,
    #[comptime] first_pass: bool,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let row = tile / tiles_per_row;
    if !first_pass {
        // Uniform per cube: the whole cube leaves, before any synchronisation.
        let min = !ranges[2 * row].load();
        let max = ranges[2 * row + 1].load();
        if (min >> shift) == (max >> shift) {
            terminate!();
        }
    }
    let start = (tile % tiles_per_row) * comptime!(blueprint.tile());
    let s = row * STATE_WORDS;
    let bins = Shared::<[Atomic<u32>]>::new_slice(DIGITS);
    let mut d = UNIT_POS as usize;
    while d < DIGITS {
        bins[d].store(0u32);
        d += CUBE_DIM as usize;
    }
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
    let unit_range = histogram_tile::<K>(
        values,
        cand_a,
        cand_b,
        &bins,
        appended,
        row,
        row * len,
        start,
        source,
        source_len,
        target,
        state[s + STATE_BOUND],
        shift,
        first_pass,
        read,
        blueprint,
    );
    if first_pass {
        let range = cube_range(unit_range, blueprint.use_planes);
        if UNIT_POS == 0 && range.min <= range.max {
            ranges[2 * row].fetch_max(!range.min);
            ranges[2 * row + 1].fetch_max(range.max);
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

/// Radix select, digit choice: one cube of 256 units per row, one bin each. The exclusive
/// sum of the bins finds the digit whose keys hold the row's `need`-th key; the digit joins
/// the prefix, `need` drops by the keys of smaller digits. The candidates the pass appended
/// become the next source, and the next pass appends (to the other buffer) only if
/// `append_next` and the matching keys are fewer than the source holds. Clears the histogram
/// and the append counter. A digit every key of the row shares (see `radix_histogram_kernel`;
/// its pass counted nothing) is the minimum's, and changes nothing else: every earlier digit
/// was shared too, so no candidates were ever appended.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn radix_digit_kernel(
    state: &mut [u32],
    histograms: &mut [u32],
    appended: &mut [u32],
    ranges: &[u32],
    rows: usize,
    shift: u32,
    #[comptime] append_next: bool,
    #[comptime] use_planes: bool,
) {
    let row = linear_cube_index();
    if row >= rows {
        terminate!();
    }
    let s = row * STATE_WORDS;
    let min = !ranges[2 * row];
    if (min >> shift) == (ranges[2 * row + 1] >> shift) {
        // Uniform per cube. The first pass did count (the bins hold every key in one digit):
        // clear them.
        let bin = row * DIGITS + UNIT_POS as usize;
        histograms[bin] = 0u32;
        if UNIT_POS == 0 {
            state[s + STATE_BOUND] = state[s + STATE_BOUND] | (min & (0xFFu32 << shift));
        }
        terminate!();
    }
    let digit = UNIT_POS;
    let bin = row * DIGITS + digit as usize;
    let count = histograms[bin];
    let need = state[s + STATE_NEED];
    let counted = cube_exclusive_sum(count, comptime!(DIGITS as u32), use_planes);
    histograms[bin] = 0u32;
    let before = counted.before;
    if before < need && need <= before + count {
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
    }
}

/// Gather, pass 1: per tile, how many keys are below the row's boundary and how many equal
/// it, written as `[row][below: tiles | equal: tiles]`, so an exclusive scan of a row gives
/// each tile the first slot of its keys below, and of its ties (after every key below).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_count_kernel<K: Numeric>(
    values: &[K],
    state: &[u32],
    tile_counts: &mut [u32],
    len: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let row = tile / tiles_per_row;
    let part = tile % tiles_per_row;
    let bound = state[row * STATE_WORDS + STATE_BOUND];
    let packed = count_tile::<K>(
        values,
        row * len,
        part * comptime!(blueprint.tile()),
        len,
        bound,
        true,
        read,
        blueprint,
    );
    if UNIT_POS == 0 {
        let base = row * 2 * tiles_per_row;
        tile_counts[base + part] = packed & 0xFFFFu32;
        tile_counts[base + tiles_per_row + part] = packed >> 16u32;
    }
}

/// Gather, pass 2: every key below the boundary, and the ties whose slot is below `k`, to
/// their slots (radix keys and positions, `[rows, k]`).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_scatter_kernel<K: Numeric>(
    values: &[K],
    state: &[u32],
    tile_offsets: &[u32],
    cand_keys: &mut [u32],
    cand_positions: &mut [u32],
    len: usize,
    k: u32,
    tiles_per_row: usize,
    total_tiles: usize,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let row = tile / tiles_per_row;
    let part = tile % tiles_per_row;
    let base = row * 2 * tiles_per_row;
    let slots = GatherSlots {
        out_base: row * k as usize,
        less: tile_offsets[base + part],
        equal: tile_offsets[base + tiles_per_row + part],
        k,
    };
    gather_tile::<K>(
        values,
        cand_keys,
        cand_positions,
        row * len,
        part * comptime!(blueprint.tile()),
        len,
        state[row * STATE_WORDS + STATE_BOUND],
        slots,
        read,
        blueprint,
    );
}

/// The outputs: output `j` of row `r` is the input element at position
/// `positions[r * position_stride + c]`, where `c = order[j]` (`reorder`) or `j % k`.
#[cube(launch_unchecked)]
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
        values_out[index] = values[row * len + position as usize];
    }
    if write_indices {
        indices_out[index] = I::cast_from(position);
    }
}
