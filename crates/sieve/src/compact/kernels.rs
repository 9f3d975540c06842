//! Kernel entry points of the compaction family: thin `#[cube]` functions over
//! [`super::tile`]. Each works on `[rows, row_vectors]` vectors cut into `tiles_per_row`
//! tiles per row (tile `t` is tile `t % tiles_per_row` of row `t / tiles_per_row`), except
//! the gather kernels, which run one unit per element or output slot.
//!
//! Every kernel here keeps the rules of `docs/ARCHITECTURE.md` ("Rules every kernel keeps"):
//! every unit reaches every `sync_cube` and plane operation on every path; a nest of
//! `#[unroll]` loops stays within [`crate::common::UNROLL_BODIES`] bodies; `PLANE_DIM`, never
//! 32; `address_type = "dynamic"`, with 64-bit addresses only where a launch needs them.

use cubecl::prelude::*;

use super::Rejected;
use super::tile::{
    CompactConfig, TilePlacement, count_tile, flag_word_index, load_flags, load_values, rank_tile,
    scatter_tile, scatter_words, write_slot,
};
use crate::common::grid::{linear_cube_index, linear_unit_index};
use crate::common::lookback::{take_tile_number, tile_prefix};

/// Scatter, pass 1: the number of flagged elements of every tile, as `C` (u32, or i64 when
/// a row's running count may pass u32: see `Run::tile_count_dtype`).
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn count_tiles_kernel<E: Numeric, M: Numeric, C: Numeric, N: Size>(
    values: &[Vector<E, N>],
    mask: &[Vector<M, N>],
    threshold: InputScalar,
    tile_counts: &mut [C],
    flag_words: &mut [u32],
    row_vectors: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    #[comptime] config: CompactConfig,
    #[define(E, M, C)] _dtypes: [ElemType; 3],
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let row_base = (tile / tiles_per_row) * row_vectors;
    let tile_start = (tile % tiles_per_row) * comptime!(config.blueprint.tile_vectors());
    let (count, bits) = count_tile::<E, M, N>(
        values,
        mask,
        threshold.get::<E>(),
        row_base,
        tile_start,
        row_vectors,
        config,
    );
    if comptime!(config.flag_words) {
        flag_words[flag_word_index(tile, config.blueprint)] = bits;
    }
    if UNIT_POS == 0 {
        tile_counts[tile] = C::cast_from(count);
    }
}

/// Scatter, last pass: rank every tile's flags, add the tile's offset (the exclusive scan of
/// the tile counts, when a row has more than one tile) and write each element to its slot.
/// The row's last tile writes the row's count. Offsets within a row are `usize` (the
/// launch's address type: 64-bit wherever a row may pass u32 elements).
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter_tiles_kernel<E: Numeric, M: Numeric, I: Numeric, C: Numeric, N: Size>(
    values: &[Vector<E, N>],
    mask: &[Vector<M, N>],
    threshold: InputScalar,
    values_out: &mut [E],
    indices_out: &mut [I],
    counts: &mut [I],
    tile_counts: &[C],
    tile_offsets: &[C],
    flag_words: &[u32],
    row_vectors: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    out_len: usize,
    #[comptime] with_offsets: bool,
    #[comptime] config: CompactConfig,
    #[define(E, M, I, C)] _dtypes: [ElemType; 4],
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let blueprint = config.blueprint;
    let row = tile / tiles_per_row;
    let part = tile % tiles_per_row;
    let row_base = row * row_vectors;
    let tile_start = part * comptime!(blueprint.tile_vectors());
    let vpu = comptime!(blueprint.vectors_per_unit as usize);
    let last = row * tiles_per_row + tiles_per_row - 1;
    // The tile's offset and its row's total come from the passes before: read them ahead of
    // the tile's loads, so they arrive beside them instead of after the scan's barriers.
    // Only rejected elements are placed after the row total (`Drop` may bind no counts).
    let reads_total = comptime!(with_offsets && config.rejected != Rejected::Drop);
    let mut offset = 0usize;
    let mut row_total = 0usize;
    if with_offsets {
        offset = usize::cast_from(tile_offsets[tile]);
        if reads_total {
            row_total = usize::cast_from(tile_offsets[last]) + usize::cast_from(tile_counts[last]);
        }
    }
    let mut word = 0u32;
    if comptime!(config.flag_words) {
        word = flag_words[flag_word_index(tile, blueprint)];
    }
    let mut placement = TilePlacement {
        out_row_base: row_base * Vector::<u32, N>::new(0u32).vector_size().comptime(),
        offset,
        row_total,
        out_len,
    };
    let total = if comptime!(config.ranks_words()) {
        // Survivors only: the row total is not read.
        scatter_words::<E, I, N>(
            values,
            word,
            values_out,
            indices_out,
            placement,
            row_base,
            tile_start,
            config,
        )
    } else {
        let mut held = Array::<Vector<E, N>>::new(vpu);
        let mut ranks = Array::<Vector<u32, N>>::new(vpu);
        let mut prefixes = Array::<u32>::new(vpu);
        let total = rank_tile::<E, M, N>(
            values,
            mask,
            threshold.get::<E>(),
            word,
            &mut held,
            &mut ranks,
            &mut prefixes,
            row_base,
            tile_start,
            row_vectors,
            config,
        );
        if !reads_total {
            placement.row_total = total as usize;
        }
        scatter_tile::<E, I, N>(
            &held,
            &ranks,
            &prefixes,
            values_out,
            indices_out,
            placement,
            tile_start,
            row_vectors,
            config,
        );
        total
    };
    if tile == last && UNIT_POS == 0 {
        counts[row] = I::cast_from(offset + total as usize);
    }
}

/// Single pass: rank every tile, find its offset by decoupled look-back, write its
/// survivors. **Needs forward progress between cubes** (see `common::lookback`). The row's
/// last tile writes the row's count. `Drop` only: the row total is not known while writing.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter_lookback_kernel<E: Numeric, M: Numeric, I: Numeric, N: Size>(
    values: &[Vector<E, N>],
    mask: &[Vector<M, N>],
    threshold: InputScalar,
    values_out: &mut [E],
    indices_out: &mut [I],
    counts: &mut [I],
    status: &[Atomic<u64>],
    tile_counter: &[Atomic<u32>],
    row_vectors: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    out_len: usize,
    #[comptime] config: CompactConfig,
    #[define(E, M, I)] _dtypes: [ElemType; 3],
) {
    let tile = take_tile_number(tile_counter);
    if tile >= total_tiles {
        terminate!();
    }
    let blueprint = config.blueprint;
    let row = tile / tiles_per_row;
    let part = tile % tiles_per_row;
    let row_base = row * row_vectors;
    let tile_start = part * comptime!(blueprint.tile_vectors());
    let vpu = comptime!(blueprint.vectors_per_unit as usize);
    let mut held = Array::<Vector<E, N>>::new(vpu);
    let mut ranks = Array::<Vector<u32, N>>::new(vpu);
    let mut prefixes = Array::<u32>::new(vpu);
    // No count pass before it: the flags are computed here (`flag_words` is off).
    let total = rank_tile::<E, M, N>(
        values,
        mask,
        threshold.get::<E>(),
        0u32,
        &mut held,
        &mut ranks,
        &mut prefixes,
        row_base,
        tile_start,
        row_vectors,
        config,
    );
    // Rows are at most u32::MAX elements here: the status words pack 32-bit sums.
    let offset = tile_prefix::<u32>(
        status,
        tile,
        part,
        total,
        blueprint.fold,
        blueprint.use_planes,
    );
    let placement = TilePlacement {
        out_row_base: row_base * ranks[0].vector_size().comptime(),
        offset: offset as usize,
        row_total: 0usize,
        out_len,
    };
    scatter_tile::<E, I, N>(
        &held,
        &ranks,
        &prefixes,
        values_out,
        indices_out,
        placement,
        tile_start,
        row_vectors,
        config,
    );
    if part == tiles_per_row - 1 && UNIT_POS == 0 {
        counts[row] = I::cast_from(offset + total);
    }
}

/// After a `Drop` compaction, makes it `Zero`: every slot of row `r` from `counts[r]` on gets
/// value and index 0. One unit per slot.
#[cube(launch_unchecked, address_type = "dynamic")]
pub(crate) fn zero_tail_kernel<E: Numeric, I: Numeric>(
    values_out: &mut [E],
    indices_out: &mut [I],
    counts: &[I],
    len: usize,
    slots: usize,
    #[comptime] config: CompactConfig,
    #[define(E, I)] _dtypes: [ElemType; 2],
) {
    let slot = linear_unit_index();
    if slot >= slots {
        terminate!();
    }
    let count = usize::cast_from(counts[slot / len]);
    if slot % len >= count {
        write_slot::<E, I>(
            values_out,
            indices_out,
            slot,
            E::from_int(0),
            0usize,
            config,
        );
    }
}

/// Gather, pass 1: every element's flag as a u32, for the running count.
#[cube(launch_unchecked, address_type = "dynamic")]
pub(crate) fn write_flags_kernel<E: Numeric, M: Numeric, N: Size>(
    values: &[Vector<E, N>],
    mask: &[Vector<M, N>],
    threshold: InputScalar,
    flags: &mut [Vector<u32, N>],
    vectors: usize,
    row_vectors: usize,
    #[comptime] config: CompactConfig,
    #[define(E, M)] _dtypes: [ElemType; 2],
) {
    let index = linear_unit_index();
    if index >= vectors {
        terminate!();
    }
    let v = load_values::<E, N>(values, index, config);
    let row_start = index.is_multiple_of(row_vectors);
    flags[index] = load_flags::<E, M, N>(
        values,
        v,
        mask,
        threshold.get::<E>(),
        index,
        row_start,
        config,
    );
}

/// The first position `p` of a row (within `0..len`) whose `key(p)` exceeds `target`, where
/// `key` is non-decreasing: the running count of survivors (`survivors == true`), or of
/// rejected elements, `p + 1 - running[p]`. The caller guarantees one exists.
#[cube]
fn first_exceeding(
    running: &[u32],
    row_base: usize,
    len: usize,
    target: usize,
    #[comptime] survivors: bool,
) -> usize {
    let mut low = 0usize;
    let mut high = len - 1;
    while low < high {
        let middle = (low + high) / 2;
        let survived = running[row_base + middle] as usize;
        let key = if survivors {
            survived
        } else {
            middle + 1 - survived
        };
        if key > target {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    low
}

/// Gather, last pass: "turn the scatter around". One unit per output slot; slot `s` of a row
/// takes the element whose inclusive running count first exceeds `s`; with `Keep`, slots
/// past the count take the rejected elements the same way. Slot 0 writes the row's count.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_kernel<E: Numeric, I: Numeric>(
    values: &[E],
    running: &[u32],
    values_out: &mut [E],
    indices_out: &mut [I],
    counts: &mut [I],
    len: usize,
    slots: usize,
    #[comptime] config: CompactConfig,
    #[define(E, I)] _dtypes: [ElemType; 2],
) {
    let linear = linear_unit_index();
    if linear >= slots {
        terminate!();
    }
    let row = linear / len;
    let slot = linear % len;
    let row_base = row * len;
    let total = running[row_base + len - 1] as usize;
    if slot < total {
        let source = first_exceeding(running, row_base, len, slot, true);
        let value = if comptime!(config.write_values) {
            values[row_base + source]
        } else {
            E::from_int(0)
        };
        write_slot::<E, I>(values_out, indices_out, linear, value, source, config);
    } else if comptime!(config.rejected == Rejected::Keep) {
        let source = first_exceeding(running, row_base, len, slot - total, false);
        let value = if comptime!(config.write_values) {
            values[row_base + source]
        } else {
            E::from_int(0)
        };
        write_slot::<E, I>(values_out, indices_out, linear, value, source, config);
    } else if comptime!(config.rejected == Rejected::Zero) {
        write_slot::<E, I>(
            values_out,
            indices_out,
            linear,
            E::from_int(0),
            0usize,
            config,
        );
    }
    if slot == 0 {
        counts[row] = I::cast_from(total);
    }
}
