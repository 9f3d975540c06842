//! Kernel entry points of the scan family: thin `#[cube]` functions over [`super::tile`].
//! One per pass; the launch code in [`super::launch`] sequences them.
//!
//! Every kernel works on `[rows, row_vectors]` vectors; a row is cut into `tiles_per_row`
//! tiles, and tile `t` of the whole problem is tile `t % tiles_per_row` of row
//! `t / tiles_per_row`.
//!
//! Every kernel here keeps the rules of `docs/ARCHITECTURE.md` ("Rules every kernel keeps"):
//! every unit reaches every `sync_cube` and plane operation on every path; a nest of
//! `#[unroll]` loops stays within [`crate::common::UNROLL_BODIES`] bodies; `PLANE_DIM`, never
//! 32; `address_type = "dynamic"`, with 64-bit addresses only where a launch needs them.

use cubecl::prelude::*;

use super::tile::{TileBlueprint, reduce_tile, scan_tile, store_tile};
use crate::common::fold::identity;
use crate::common::grid::linear_cube_index;
use crate::common::lookback::{take_tile_number, tile_prefix};

/// Reduce-then-scan, pass 1: the sum (the blueprint's fold) of every tile.
#[cube(launch_unchecked, address_type = "dynamic")]
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
#[cube(launch_unchecked, address_type = "dynamic")]
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
    let mut values = Array::<Vector<A, N>>::new(comptime!(blueprint.vectors_per_unit as usize));
    let mut prefixes = Array::<A>::new(comptime!(blueprint.vectors_per_unit as usize));
    scan_tile::<E, A, N>(
        input,
        &mut values,
        &mut prefixes,
        row_base,
        tile_start,
        row_vectors,
        blueprint,
    );
    let offset = if with_offsets {
        tile_offsets[tile]
    } else {
        identity::<A>(blueprint.fold)
    };
    store_tile::<E, A, N>(
        output,
        &values,
        &prefixes,
        offset,
        row_base,
        tile_start,
        row_vectors,
        exclusive,
        blueprint,
    );
}

/// Single pass with decoupled look-back (Merrill & Garland): tiles are taken in order from a
/// counter, each publishes its total, then walks back over its predecessors' status words
/// until it meets an inclusive prefix. **Needs forward progress between cubes**: a cube
/// spins on a predecessor that has started but not finished.
///
/// Deterministic: the prefix is folded forward from the nearest inclusive prefix, so it is
/// bit for bit the chain `((t0 + t1) + t2) + ...` however far the walk went.
#[cube(launch_unchecked, address_type = "dynamic")]
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
    let tile = take_tile_number(tile_counter);
    if tile >= total_tiles {
        terminate!();
    }
    let part = tile % tiles_per_row;
    let row_base = (tile / tiles_per_row) * row_vectors;
    let tile_start = part * comptime!(blueprint.tile_vectors());
    let mut values = Array::<Vector<A, N>>::new(comptime!(blueprint.vectors_per_unit as usize));
    let mut prefixes = Array::<A>::new(comptime!(blueprint.vectors_per_unit as usize));
    let total = scan_tile::<E, A, N>(
        input,
        &mut values,
        &mut prefixes,
        row_base,
        tile_start,
        row_vectors,
        blueprint,
    );

    let offset = tile_prefix::<A>(
        status,
        tile,
        part,
        total,
        blueprint.fold,
        blueprint.use_planes,
    );
    store_tile::<E, A, N>(
        output,
        &values,
        &prefixes,
        offset,
        row_base,
        tile_start,
        row_vectors,
        exclusive,
        blueprint,
    );
}
