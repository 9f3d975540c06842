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

use super::tile::{
    ChunkGrid, GatherSlots, RowState, SOURCE_A, SOURCE_B, SOURCE_INPUT, append_staged,
    candidate_row_position, chunk_of_cube, count_chunk_tiles, gather_tile, histogram_tile,
    load_row_state, minima_bound, ranks_in_row, sampled_row_select, store_row_state,
};
use crate::common::cube::{U32Range, cube_range};
use crate::common::gather::write_gathered;
use crate::common::grid::{linear_cube_index, linear_unit_index};
use crate::radix::digits::{SELECT_DIGITS, clear_bins};
use crate::radix::select::{
    CubeKeys, DigitSelect, cube_select, select_digit, shared_digit, shared_from,
};
use crate::radix::tile::{KeyRead, RadixBlueprint, key_at};

// The kernels below write these as literals (so their variables are runtime ones).
const _: () = assert!(SOURCE_INPUT == 0 && SOURCE_A == 1 && SOURCE_B == 2);

/// Rank by counting: one cube per row, the row's radix keys in shared memory; every element
/// whose rank is below `k` writes itself to output slot `rank`. With `try_bound` (the host's
/// `k <= bound_max_k`) only the keys under the minima bound are ranked, among themselves
/// ([`minima_bound`]), unless too many lie under it.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn rank_kernel<K: Numeric, I: Numeric>(
    values: &[K],
    values_out: &mut [K],
    indices_out: &mut [I],
    len: usize,
    k: usize,
    rows: usize,
    #[comptime] try_bound: bool,
    #[comptime] read: KeyRead,
    #[comptime] write_values: bool,
    #[comptime] write_indices: bool,
    #[comptime] blueprint: RadixBlueprint,
    #[define(K, I)] _dtypes: [ElemType; 2],
) {
    let row = linear_cube_index();
    if row >= rows {
        terminate!();
    }
    let row_base = row * len;
    let mut ranked = false;
    // Uniform per cube, as is `fits`.
    if try_bound {
        let bins = Shared::<[Atomic<u32>]>::new_slice(SELECT_DIGITS);
        let candidate = minima_bound::<K>(
            values, &bins, row_base, len, k as u32, false, read, blueprint,
        );
        ranked = candidate.fits;
        let rank = candidate.rank as usize;
        if rank < k {
            if write_values {
                values_out[row * k + rank] = values[row_base + candidate.position as usize];
            }
            if write_indices {
                indices_out[row * k + rank] = I::cast_from(candidate.position);
            }
        }
    }
    // Uniform per cube.
    if !ranked {
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

/// Every row's [`RowState`] before the first pass: no digit chosen, the `k`-th key wanted,
/// the input as source, nowhere to append. With `k == len` every key is taken: the boundary
/// is the largest radix key and no pass runs.
#[cube(launch_unchecked, address_type = "dynamic")]
pub(crate) fn init_state_kernel(state: &mut [u32], rows: usize, len: u32, k: u32) {
    let row = linear_unit_index();
    if row >= rows {
        terminate!();
    }
    let mut bound = 0u32;
    if k == len {
        bound = 0xFFFF_FFFFu32;
    }
    // Literals, so the fields are runtime values: SOURCE_INPUT is 0.
    let initial = RowState {
        bound,
        need: k,
        source: 0u32,
        source_len: len,
        target: 0u32,
        shared_from: 32u32,
        sampled: 0u32,
    };
    store_row_state(state, row, &initial);
}

/// Radix select, one digit pass over each row's candidate source, whose tiles the row's
/// `cubes_per_row` cubes take in turn: the histogram of the `digit_bits`-bit digit at `shift` of
/// the keys matching the row's bound so far, added into `histograms[row]` (a row's bins start at
/// `row * row_bins`, the widest digit's bins, whatever this digit's width), and those keys appended
/// to the row's target buffer when it has one. The first pass also records the range of the row's
/// keys in `ranges[row]` (`[!min, max]`, both kept by `fetch_max` from zero, so one zero fill
/// initialises them); a later pass whose digit every key of the row shares (`shift >= shared_from`,
/// see `radix_digit_kernel`) reads nothing, as its digit is the minimum's.
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
    grid: &ChunkGrid,
    row_bins: usize,
    shift: u32,
    #[comptime] digit_bits: u32,
    #[comptime] first_pass: bool,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let cube = linear_cube_index();
    if cube >= grid.total_cubes {
        terminate!();
    }
    let row = cube / grid.cubes_per_row;
    let row_state = load_row_state(state, row);
    // Uniform per cube: the whole cube leaves, before any synchronisation.
    if shift >= row_state.shared_from || row_state.sampled == 1u32 {
        terminate!();
    }
    let digits = comptime!(1usize << digit_bits);
    let bins = Shared::<[Atomic<u32>]>::new_slice(digits);
    clear_bins(&bins, digits);
    sync_cube();
    let mut range = U32Range {
        min: 0xFFFF_FFFFu32,
        max: 0u32,
    };
    // The row's cubes take the source's tiles in turn (order does not matter here), so a
    // candidate buffer far shorter than the row is still spread over all of them.
    let tile_keys = comptime!(blueprint.tile());
    let mut staging = Shared::<[u32]>::new_slice(tile_keys);
    let mut staged = 0u32;
    let source_tiles = (row_state.source_len as usize).div_ceil(tile_keys);
    let mut tile = cube % grid.cubes_per_row;
    while tile < source_tiles {
        let tile_count = histogram_tile::<K>(
            values,
            cand_a,
            cand_b,
            &bins,
            &mut staging,
            staged,
            appended,
            row,
            row * grid.len,
            tile * tile_keys,
            &row_state,
            shift,
            digit_bits,
            read,
            blueprint,
        );
        staged = tile_count.staged;
        range.min = min(range.min, tile_count.range.min);
        range.max = max(range.max, tile_count.range.max);
        tile += grid.cubes_per_row;
    }
    // Uniform per cube: `staged` is the cube-wide total of its tiles' hits.
    if staged > 0u32 {
        append_staged(
            cand_a,
            cand_b,
            &mut staging,
            staged,
            appended,
            row,
            row * grid.len,
            &row_state,
        );
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
    while d < digits {
        let count = bins[d].load();
        if count > 0u32 {
            histograms[row * row_bins + d].fetch_add(count);
        }
        d += CUBE_DIM as usize;
    }
}

/// Radix select, digit choice: one cube per row takes the row's histogram (clearing it for
/// the next pass) into its bins and [`select_digit`] picks the digit whose keys hold the
/// row's `need`-th key. The candidates the pass appended become the next source, and the
/// next pass appends (to the other buffer) only if `append_next` and the chosen digit's keys
/// are fewer than the source holds. Clears the append counter. It also stores the lowest bit
/// from which every key of the row agrees (from the range the first pass recorded): a digit
/// every key shares (its pass counted nothing, or, in the first pass, counted every key in
/// one bin) is the minimum's, and changes nothing else: every earlier digit was shared too,
/// so no candidates were ever appended.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn radix_digit_kernel(
    state: &mut [u32],
    histograms: &mut [u32],
    appended: &mut [u32],
    ranges: &[u32],
    rows: usize,
    row_bins: usize,
    shift: u32,
    #[comptime] digit_bits: u32,
    #[comptime] append_next: bool,
    #[comptime] units: u32,
    #[comptime] use_planes: bool,
) {
    let row = linear_cube_index();
    if row >= rows {
        terminate!();
    }
    let mut row_state = load_row_state(state.slice(0usize, state.len()), row);
    // Uniform per cube: the sampled bound answered (nothing was counted).
    if row_state.sampled == 1u32 {
        terminate!();
    }
    let min = !ranges[2 * row];
    row_state.shared_from = shared_from(min, ranges[2 * row + 1]);
    let digits = comptime!(1usize << digit_bits);
    let bins = Shared::<[Atomic<u32>]>::new_slice(digits);
    let mut d = UNIT_POS as usize;
    while d < digits {
        bins[d].store(histograms[row * row_bins + d]);
        histograms[row * row_bins + d] = 0u32;
        d += CUBE_DIM as usize;
    }
    // Uniform per cube (`shared_from` comes from the read-only key ranges). Unit 0's store
    // may land while other units still load the row's state: safe only because it leaves
    // `sampled` (the exit above) as it was and those units use nothing else before leaving.
    if shift >= row_state.shared_from {
        if UNIT_POS == 0 {
            row_state.bound |= shared_digit(min, shift, digit_bits);
            store_row_state(state, row, &row_state);
        }
        terminate!();
    }
    sync_cube();
    let mut select = DigitSelect {
        prefix: row_state.bound,
        need: row_state.need,
    };
    let choice = select_digit(&bins, &mut select, shift, digit_bits, units, use_planes);
    if UNIT_POS == 0 {
        if row_state.target != SOURCE_INPUT {
            row_state.source = row_state.target;
            row_state.source_len = appended[row];
        }
        appended[row] = 0u32;
        // The target is the candidate buffer the row is not reading; none where the next
        // pass reads nothing after it, or the candidates would not shrink.
        // (Literals, so the variable is a runtime one: SOURCE_INPUT, SOURCE_A, SOURCE_B.)
        let mut next_target = 0u32;
        if append_next && choice.count < row_state.source_len {
            next_target = 1u32;
            if row_state.source == SOURCE_A {
                next_target = 2u32;
            }
        }
        row_state.bound = select.prefix;
        row_state.need = select.need;
        row_state.target = next_target;
        store_row_state(state, row, &row_state);
    }
}

/// Radix select of whole rows (or of chunks of rows: each chunk's own top-k), one cube per
/// row (chunk), in one launch, writing the chosen radix keys and positions to `[cubes, k]`
/// candidates as the device-wide gather does. With `try_bound` (the host's `k <=
/// bound_max_k`: the kernel for larger `k` holds none of its code) the cube first tries
/// [`minima_bound`] (two sweeps; sorted candidates); where too many keys lie under the bound
/// but fewer than `k` below it (tied rows), the bound is the row's `k`-th key, the keys below
/// it are ranked already and the cube takes the first ties ([`gather_row`] from the row's
/// start, stopping once it has them: a tied row's are near its start). With `try_sample`
/// (larger `k`, where the host found a sample rank for it: `sample_rank`, or
/// `sample_rank_last` for a row's last chunk) the cube first tries [`sampled_row_select`]
/// (one sweep, then the gather).
/// Otherwise, or where those fail, it runs the MSB select over the row ([`cube_select`], one
/// sweep per digit it cannot skip) and the gather.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn row_select_kernel<K: Numeric>(
    values: &[K],
    cand_keys: &mut [u32],
    cand_positions: &mut [u32],
    len: usize,
    k: u32,
    chunk_len: usize,
    chunks: usize,
    cubes: usize,
    sample_rank: u32,
    sample_rank_last: u32,
    #[comptime] try_bound: bool,
    #[comptime] try_sample: bool,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    // Cube `c` selects from chunk `c % chunks` of row `c / chunks` (a whole row when
    // `chunks` is 1), writing `k` candidates at `c * k` with positions in its chunk.
    let cube = linear_cube_index();
    if cube >= cubes {
        terminate!();
    }
    let start = (cube % chunks) * chunk_len;
    let row_base = (cube / chunks) * len + start;
    let len = min(chunk_len, len - start);
    let out_base = cube * k as usize;
    let bins = Shared::<[Atomic<u32>]>::new_slice(SELECT_DIGITS);
    // A tile of keys for the sampled bound (the sample, then the keys under its bound); one
    // word where it is not compiled in.
    let mut staged = Shared::<[u32]>::new_slice(comptime!(if try_sample {
        blueprint.tile()
    } else {
        1usize
    }));
    let mut ranked = false;
    // Whether the boundary is known (the minima bound's tied case, or the sampled bound).
    let mut known = false;
    // Whether the keys below the boundary are written already (the minima bound's tied case).
    let mut ties_only = false;
    // The row's boundary: the bound where the minima bound finds it is the `k`-th key.
    let mut boundary = DigitSelect {
        prefix: 0u32,
        need: k,
    };
    // Uniform per cube, as are `fits` and `below`.
    if try_bound {
        let candidate = minima_bound::<K>(values, &bins, row_base, len, k, true, read, blueprint);
        ranked = candidate.fits;
        if candidate.rank < k {
            cand_keys[out_base + candidate.rank as usize] = candidate.key;
            cand_positions[out_base + candidate.rank as usize] = candidate.position;
        }
        // Too many keys under the bound, but fewer than `k` below it (tied rows): the bound
        // is the row's `k`-th key and the keys below it are ranked (written above); only the
        // first ties remain to take, from the row's start.
        if !candidate.fits && candidate.below < k {
            known = true;
            ties_only = true;
            boundary.prefix = candidate.bound;
            boundary.need = k - candidate.below;
        }
    }
    // Never after the minima bound (the host sets one or the other; both would overwrite its
    // tied boundary): compiled out if both are asked.
    if comptime!(try_sample && !try_bound) {
        let rank = if cube % chunks == chunks - 1 {
            sample_rank_last
        } else {
            sample_rank
        };
        let sampled = sampled_row_select::<K>(
            values,
            &mut staged,
            &bins,
            row_base,
            len,
            k,
            rank,
            read,
            blueprint,
        );
        known = sampled.found;
        boundary.prefix = sampled.prefix;
        boundary.need = sampled.need;
    }
    if !ranked && !known {
        let selected = cube_select::<K>(
            values,
            &staged,
            &bins,
            row_base,
            len,
            k,
            CubeKeys::Row,
            read,
            blueprint,
        );
        boundary.prefix = selected.prefix;
        boundary.need = selected.need;
    }
    // One call site: a second would hold a second set of the gather's shared memory.
    if !ranked {
        gather_row::<K>(
            values,
            cand_keys,
            cand_positions,
            row_base,
            out_base,
            len,
            k,
            boundary,
            ties_only,
            read,
            blueprint,
        );
    }
}

/// The gather of [`row_select_kernel`], for one row (or chunk) of `len` keys from `row_base`,
/// its `k` candidates written from `out_base`, by the row's boundary (`select.prefix`, of which
/// the first `select.need` ties are taken). With `ties_only` the keys below the boundary are
/// written already and only the ties are taken. Tile by tile from the row's start, it stops
/// once every key it must take is taken: a tied row's first ties are near its start.
#[cube]
#[allow(clippy::too_many_arguments)]
fn gather_row<K: Numeric>(
    values: &[K],
    cand_keys: &mut [u32],
    cand_positions: &mut [u32],
    row_base: usize,
    out_base: usize,
    len: usize,
    k: u32,
    select: DigitSelect,
    ties_only: bool,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
) {
    let tile_keys = comptime!(blueprint.tile());
    let tiles = len.div_ceil(tile_keys);
    // `select.prefix` is the boundary: the `k - need` keys below it all go, then ties in
    // index order.
    let below = k - select.need;
    let mut less = 0u32;
    let mut equal = below;
    let mut tile = 0usize;
    // Uniform per cube: the counts come from cube-wide sums.
    while tile < tiles && (equal < k || (!ties_only && less < below)) {
        let slots = GatherSlots {
            out_base,
            less,
            equal,
            k,
            ties_only,
        };
        let taken = gather_tile::<K>(
            values,
            cand_keys,
            cand_positions,
            row_base,
            tile * tile_keys,
            len,
            select.prefix,
            slots,
            read,
            blueprint,
        );
        less += taken & 0xFFFFu32;
        equal += taken >> 16u32;
        tile += 1;
    }
}

/// Gather, pass 1: how many keys of each tile are below the row's boundary and how many
/// equal it ([`count_chunk_tiles`] over each cube's chunk of tiles, vectors of `vector` keys),
/// as `[row][below: tiles | equal: tiles]`. With `skip_sampled`, rows the sampled bound
/// answered keep their counts.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_count_kernel<K: Numeric, N: Size>(
    values: &[Vector<K, N>],
    state: &[u32],
    tile_counts: &mut [u32],
    grid: &ChunkGrid,
    #[comptime] skip_sampled: bool,
    #[comptime] vector: usize,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let cube = linear_cube_index();
    if cube >= grid.total_cubes {
        terminate!();
    }
    let chunk = chunk_of_cube(cube, grid);
    let row_state = load_row_state(state, chunk.row);
    // Uniform per cube.
    if skip_sampled && row_state.sampled == 1u32 {
        terminate!();
    }
    count_chunk_tiles::<K, N>(
        values,
        tile_counts,
        &chunk,
        grid,
        row_state.bound,
        vector,
        read,
        blueprint,
    );
}

/// Gather, pass 2: every key below the boundary, and the ties whose slot is below the row's
/// limit (`k`, or `sampled_cap` where the sampled bound answered), to their slots of the row's
/// `per_row` (radix keys and positions) by [`gather_tile`], in index order. Each cube walks its
/// chunk of tiles; a tile with nothing to write (by pass 1's counts: most tiles when `k` is
/// small) is not read.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_scatter_kernel<K: Numeric>(
    values: &[K],
    state: &[u32],
    tile_counts: &[u32],
    tile_offsets: &[u32],
    cand_keys: &mut [u32],
    cand_positions: &mut [u32],
    grid: &ChunkGrid,
    k: u32,
    sampled_cap: u32,
    per_row: usize,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
    #[define(K)] _dtype: ElemType,
) {
    let cube = linear_cube_index();
    if cube >= grid.total_cubes {
        terminate!();
    }
    let chunk = chunk_of_cube(cube, grid);
    let row_state = load_row_state(state, chunk.row);
    let limit = if row_state.sampled == 1u32 {
        sampled_cap
    } else {
        k
    };
    for tile in chunk.first..chunk.end {
        let base = chunk.row * 2 * grid.tiles_per_row + tile;
        let equal = tile_offsets[base + grid.tiles_per_row];
        // Uniform per cube.
        if tile_counts[base] > 0u32
            || (tile_counts[base + grid.tiles_per_row] > 0u32 && equal < limit)
        {
            let slots = GatherSlots {
                out_base: chunk.row * per_row,
                less: tile_offsets[base],
                equal,
                k: limit,
                ties_only: false,
            };
            gather_tile::<K>(
                values,
                cand_keys,
                cand_positions,
                chunk.row * grid.len,
                tile * comptime!(blueprint.tile()),
                grid.len,
                row_state.bound,
                slots,
                read,
                blueprint,
            );
        }
    }
}

/// The sampled bound's sample: `[rows, sample_len]` radix keys, row `r`'s from its tiles `0,
/// stride, 2 stride, ...` (whole tiles of `tile` keys), one unit per sample key.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sample_kernel<K: Numeric>(
    values: &[K],
    sample: &mut [u32],
    len: usize,
    sample_len: usize,
    tile: usize,
    stride: usize,
    total: usize,
    #[comptime] read: KeyRead,
    #[define(K)] _dtype: ElemType,
) {
    let index = linear_unit_index();
    if index >= total {
        terminate!();
    }
    let row = index / sample_len;
    let at = index % sample_len;
    let position = (at / tile) * stride * tile + at % tile;
    sample[index] = key_at::<K>(values, row * len + position, read);
}

/// One unit per row, after the gather's count under the sampled bound (`bounds`: the sample
/// select's row states, whose `bound` it is) and its scan: the bound answered if at least `k`
/// keys reach it (below or equal) and at most `cap` lie below it (so the gather holds them
/// all, and the first `k` by (key, index) are among what it writes). Then the row is marked
/// `sampled` with that bound; else its boundary search runs the digit passes.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sample_check_kernel(
    state: &mut [u32],
    bounds: &[u32],
    tile_counts: &[u32],
    tile_offsets: &[u32],
    rows: usize,
    tiles_per_row: usize,
    k: u32,
    cap: u32,
) {
    let row = linear_unit_index();
    if row >= rows {
        terminate!();
    }
    let last = (row + 1) * 2 * tiles_per_row - 1;
    // Exclusive offsets over `[below | equal]`: the first equal tile's is the row's count below.
    let below = tile_offsets[row * 2 * tiles_per_row + tiles_per_row];
    let reached = tile_offsets[last] + tile_counts[last];
    if reached >= k && below <= cap {
        let mut row_state = load_row_state(state.slice(0usize, state.len()), row);
        row_state.bound = load_row_state(bounds, row).bound;
        row_state.sampled = 1u32;
        store_row_state(state, row, &row_state);
    }
}

/// The outputs of rows cut into `chunks` chunks of `chunk_len` keys, from each chunk's `k`
/// candidates sorted by (radix key, column) (`sorted_keys` and `order`, `[rows * chunks, k]`;
/// `order` holds columns of `positions`, whose positions count from the chunk's start): the
/// merge of a row's sorted chunks. Candidate `i` of chunk `c` is output `i` plus the keys of
/// the earlier chunks at or below its key and of the later chunks below it (ties in row
/// order), written where that is below `k`: each output of a row has exactly one writer.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge_finish_kernel<K: Numeric, I: Numeric>(
    values: &[K],
    positions: &[u32],
    sorted_keys: &[u32],
    order: &[u32],
    values_out: &mut [K],
    indices_out: &mut [I],
    len: usize,
    k: usize,
    chunks: usize,
    chunk_len: usize,
    total: usize,
    #[comptime] words: u32,
    #[comptime] write_values: bool,
    #[comptime] write_indices: bool,
    #[define(K, I)] _dtypes: [ElemType; 2],
) {
    let index = linear_unit_index();
    if index >= total {
        terminate!();
    }
    let list = index / k;
    let row = list / chunks;
    let chunk = list % chunks;
    let key = sorted_keys[index];
    let mut rank = index % k;
    for other in 0..chunks {
        if other != chunk {
            let start = (row * chunks + other) * k;
            rank += count_before(sorted_keys, start, start + k, key, other < chunk) - start;
        }
    }
    if rank < k {
        let column = order[index] as usize;
        let position = candidate_row_position(
            positions,
            row * chunks * k,
            chunk * k + column,
            k,
            chunk_len,
        );
        write_gathered::<K, I>(
            values,
            values_out,
            indices_out,
            row * len + position as usize,
            row * k + rank,
            position,
            words,
            write_values,
            write_indices,
        );
    }
}

/// Output `j` of a cut row selected again over its candidates (`[rows, per_row]`, `k` a chunk):
/// the row position of the chosen candidate `slots[j]`, its chunk's start plus its position
/// in the chunk.
#[cube(launch_unchecked, address_type = "dynamic")]
pub(crate) fn candidate_positions_kernel(
    slots: &[u32],
    cand_positions: &[u32],
    positions: &mut [u32],
    k: usize,
    per_row: usize,
    chunk_len: usize,
    total: usize,
) {
    let index = linear_unit_index();
    if index >= total {
        terminate!();
    }
    let slot = slots[index] as usize;
    positions[index] =
        candidate_row_position(cand_positions, (index / k) * per_row, slot, k, chunk_len);
}

/// The first index in `start..end` of ascending `sorted` whose key does not come before
/// `query` (`key < query`, or `key <= query` with `or_equal`): `start` plus how many do.
#[cube]
fn count_before(sorted: &[u32], start: usize, end: usize, query: u32, or_equal: bool) -> usize {
    let mut lo = start;
    let mut hi = end;
    while lo < hi {
        let mid = (lo + hi) / 2;
        let key = sorted[mid];
        if key < query || (or_equal && key == query) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}
