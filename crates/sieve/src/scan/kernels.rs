//! Kernel entry points of the scan family: thin `#[cube]` functions over [`super::tile`].
//! One per pass; the launch code in [`super::launch`] sequences them.
//!
//! Every kernel works on `[rows, row_vectors]` vectors; a row is cut into `tiles_per_row`
//! tiles, and tile `t` of the whole problem is tile `t % tiles_per_row` of row
//! `t / tiles_per_row`.

use cubecl::prelude::*;

use super::tile::{TileBlueprint, reduce_tile, scan_tile, store_tile};
use crate::common::grid::linear_cube_index;

/// Reduce-then-scan, pass 1: the sum of every tile.
#[cube(launch_unchecked)]
pub(crate) fn reduce_tiles_kernel<E: Numeric, A: Numeric, N: Size>(
    input: &[Vector<E, N>],
    tile_sums: &mut [A],
    row_vectors: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    #[comptime] blueprint: TileBlueprint,
    #[define(E, A)] _dtypes: [ElemType; 2],
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let row = tile / tiles_per_row;
    let tile_start = (tile % tiles_per_row) * comptime!(blueprint.tile_vectors());
    let total =
        reduce_tile::<E, A, N>(input, row * row_vectors, tile_start, row_vectors, blueprint);
    if UNIT_POS == 0 {
        tile_sums[tile] = total;
    }
}

/// Reduce-then-scan, last pass: scan every tile and add its offset (the exclusive scan of
/// the tile sums, when a row has more than one tile).
#[cube(launch_unchecked)]
pub(crate) fn scan_tiles_kernel<E: Numeric, A: Numeric, N: Size>(
    input: &[Vector<E, N>],
    output: &mut [Vector<E, N>],
    tile_offsets: &[A],
    row_vectors: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    #[comptime] exclusive: bool,
    #[comptime] with_offsets: bool,
    #[comptime] blueprint: TileBlueprint,
    #[define(E, A)] _dtypes: [ElemType; 2],
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let row_base = (tile / tiles_per_row) * row_vectors;
    let tile_start = (tile % tiles_per_row) * comptime!(blueprint.tile_vectors());
    let mut values = Array::<Vector<A, N>>::new(comptime!(blueprint.vectors_per_unit as usize + 1));
    scan_tile::<E, A, N>(
        input,
        &mut values,
        row_base,
        tile_start,
        row_vectors,
        blueprint,
    );
    let offset = if with_offsets {
        tile_offsets[tile]
    } else {
        A::from_int(0)
    };
    store_tile::<E, A, N>(
        output,
        &values,
        offset,
        row_base,
        tile_start,
        row_vectors,
        exclusive,
        blueprint,
    );
}

/// Status word flags of the look-back: the high 32 bits of a status word; the low 32 bits
/// hold the value's bits.
const FLAG_AGGREGATE: u64 = 1;
const FLAG_INCLUSIVE: u64 = 2;
/// How many predecessors' aggregates one look-back may collect before it waits for an
/// inclusive prefix instead.
const LOOKBACK_WINDOW: usize = 32;

#[cube]
fn pack_status<A: Numeric>(flag: u64, value: A) -> u64 {
    (flag << 32u64) | u64::cast_from(u32::reinterpret(value))
}

#[cube]
fn unpack_status<A: Numeric>(word: u64) -> A {
    A::reinterpret(u32::cast_from(word & 0xFFFF_FFFFu64))
}

/// Single pass with decoupled look-back (Merrill & Garland): tiles are taken in order from a
/// counter, each publishes its total, then walks back over its predecessors' status words
/// until it meets an inclusive prefix. **Needs forward progress between cubes**: a cube
/// spins on a predecessor that has started but not finished.
///
/// Deterministic: the prefix is folded forward from the nearest inclusive prefix, so it is
/// bit for bit the chain `((t0 + t1) + t2) + ...` however far the walk went.
#[cube(launch_unchecked)]
pub(crate) fn scan_lookback_kernel<E: Numeric, A: Numeric, N: Size>(
    input: &[Vector<E, N>],
    output: &mut [Vector<E, N>],
    status: &[Atomic<u64>],
    tile_counter: &[Atomic<u32>],
    row_vectors: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    #[comptime] exclusive: bool,
    #[comptime] blueprint: TileBlueprint,
    #[define(E, A)] _dtypes: [ElemType; 2],
) {
    let mut tile_slot = Shared::<u32>::new();
    if UNIT_POS == 0 {
        *tile_slot = tile_counter[0].fetch_add(1u32);
    }
    sync_cube();
    let tile = *tile_slot as usize;
    if tile >= total_tiles {
        terminate!();
    }
    let part = tile % tiles_per_row;
    let row_base = (tile / tiles_per_row) * row_vectors;
    let tile_start = part * comptime!(blueprint.tile_vectors());
    let mut values = Array::<Vector<A, N>>::new(comptime!(blueprint.vectors_per_unit as usize + 1));
    let total = scan_tile::<E, A, N>(
        input,
        &mut values,
        row_base,
        tile_start,
        row_vectors,
        blueprint,
    );

    let mut offset_slot = Shared::<A>::new();
    if blueprint.use_planes {
        // The first plane walks back PLANE_DIM predecessors per read.
        if UNIT_POS < PLANE_DIM {
            let prefix = look_back_plane::<A>(status, tile, part, total);
            if UNIT_POS == 0 {
                *offset_slot = prefix;
            }
        }
    } else if UNIT_POS == 0 {
        *offset_slot = look_back::<A>(status, tile, part, total);
    }
    sync_cube();
    store_tile::<E, A, N>(
        output,
        &values,
        *offset_slot,
        row_base,
        tile_start,
        row_vectors,
        exclusive,
        blueprint,
    );
}

/// Publishes this tile's total, finds the sum of every earlier tile of its row, publishes
/// the inclusive prefix and returns the exclusive one. Run by one unit.
#[cube]
fn look_back<A: Numeric>(status: &[Atomic<u64>], tile: usize, part: usize, total: A) -> A {
    let mut prefix = A::from_int(0);
    if part == 0 {
        status[tile].store(pack_status::<A>(FLAG_INCLUSIVE, total));
    } else {
        status[tile].store(pack_status::<A>(FLAG_AGGREGATE, total));
        let mut stash = Array::<A>::new(LOOKBACK_WINDOW);
        let mut stashed = 0usize;
        let mut predecessor = tile - 1;
        let mut searching = true;
        while searching {
            let word = status[predecessor].load();
            let flag = word >> 32u64;
            if flag == FLAG_INCLUSIVE {
                prefix = unpack_status::<A>(word);
                searching = false;
            } else if flag == FLAG_AGGREGATE && stashed < LOOKBACK_WINDOW {
                stash[stashed] = unpack_status::<A>(word);
                stashed += 1;
                predecessor -= 1;
            }
            // Otherwise the predecessor has not published yet, or the window is full and we
            // wait for an inclusive prefix: read the same word again.
        }
        for i in 0..stashed {
            prefix += stash[stashed - 1 - i];
        }
        status[tile].store(pack_status::<A>(FLAG_INCLUSIVE, prefix + total));
    }
    prefix
}

/// [`look_back`] by a whole plane: each lane reads one predecessor's status word (lane `l`
/// reads tile `tile - 1 - l`), so one round of reads covers `PLANE_DIM` predecessors. The
/// nearest inclusive prefix (lowest lane) is the base; once every lane before it holds an
/// aggregate, the plane folds them *forward* (base, then lane `j - 1` down to lane 0), the
/// same order as the serial walk, so results are bit-identical to it. Until a window holds an
/// inclusive prefix with ready aggregates before it, the plane reads the window again.
/// Called by every unit of one plane; returns the exclusive prefix to all of them.
#[cube]
fn look_back_plane<A: Numeric>(status: &[Atomic<u64>], tile: usize, part: usize, total: A) -> A {
    let mut prefix = A::from_int(0);
    if part == 0 {
        if UNIT_POS_PLANE == 0 {
            status[tile].store(pack_status::<A>(FLAG_INCLUSIVE, total));
        }
    } else {
        if UNIT_POS_PLANE == 0 {
            status[tile].store(pack_status::<A>(FLAG_AGGREGATE, total));
        }
        let lane = UNIT_POS_PLANE as usize;
        let mut searching = true;
        while searching {
            // Lanes past the row's first tile read nothing: they act as an inclusive zero,
            // never chosen since the row's first tile (a nearer lane) is always inclusive.
            let word = if lane < part {
                status[tile - 1 - lane].load()
            } else {
                pack_status::<A>(FLAG_INCLUSIVE, A::from_int(0))
            };
            let flag = word >> 32u64;
            let value = unpack_status::<A>(word);
            let base = plane_min(if flag == FLAG_INCLUSIVE {
                UNIT_POS_PLANE
            } else {
                PLANE_DIM
            });
            let ready = plane_all(UNIT_POS_PLANE >= base || flag == FLAG_AGGREGATE);
            if base < PLANE_DIM && ready {
                let mut acc = A::from_int(0);
                for step in 0..PLANE_DIM {
                    let from = PLANE_DIM - 1 - step;
                    let v = plane_shuffle(value, from);
                    if from == base {
                        acc = v;
                    } else if from < base {
                        acc += v;
                    }
                }
                prefix = acc;
                searching = false;
            }
        }
        if UNIT_POS_PLANE == 0 {
            status[tile].store(pack_status::<A>(FLAG_INCLUSIVE, prefix + total));
        }
    }
    prefix
}
