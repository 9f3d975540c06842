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
use crate::common::fold::{Fold, combine, identity, narrow};
use crate::common::grid::{linear_cube_index, linear_unit_index};
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
/// the tile sums, when a row has more than one tile). With `write_totals`, each row's last
/// tile also writes the row's total (the fold of all of it) to `totals[row]`.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_tiles_kernel<E: Numeric, A: Numeric, N: Size>(
    input: &[Vector<E, N>],
    output: &mut [Vector<E, N>],
    tile_offsets: &[A],
    totals: &mut [A],
    row_vectors: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    #[comptime] exclusive: bool,
    #[comptime] with_offsets: bool,
    #[comptime] write_totals: bool,
    #[comptime] blueprint: TileBlueprint,
    #[define(E, A)] _dtypes: [ElemType; 2],
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let row = tile / tiles_per_row;
    let part = tile % tiles_per_row;
    let offset = if with_offsets {
        tile_offsets[tile]
    } else {
        identity::<A>(blueprint.fold)
    };
    let total = scan_and_store_tile::<E, A, N>(
        input,
        output,
        offset,
        row * row_vectors,
        part * comptime!(blueprint.tile_vectors()),
        row_vectors,
        exclusive,
        blueprint,
    );
    if write_totals && part == tiles_per_row - 1 && UNIT_POS == 0 {
        totals[row] = combine::<A>(offset, total, blueprint.fold);
    }
}

/// Scans the tile at `tile_start` of the row at `row_base` and stores it with `offset` (the
/// fold of everything before it in the row) folded in; returns the tile's own total. Every
/// unit must call it.
#[cube]
#[allow(clippy::too_many_arguments)]
fn scan_and_store_tile<E: Numeric, A: Numeric, N: Size>(
    input: &[Vector<E, N>],
    output: &mut [Vector<E, N>],
    offset: A,
    row_base: usize,
    tile_start: usize,
    row_vectors: usize,
    #[comptime] exclusive: bool,
    #[comptime] blueprint: TileBlueprint,
) -> A {
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
    total
}

/// Reduce-then-scan for rows of few tiles, in one pass: one cube a row scans its tiles in
/// order, each stored with the fold of the tiles before it (the chain `((t0 + t1) + t2)...`,
/// as the look-back folds). Only for exact folds (integers, minima, maxima), whose results do
/// not depend on that grouping. With `write_totals`, each row's total goes to `totals[row]`.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_row_tiles_kernel<E: Numeric, A: Numeric, N: Size>(
    input: &[Vector<E, N>],
    output: &mut [Vector<E, N>],
    totals: &mut [A],
    row_vectors: usize,
    tiles_per_row: usize,
    rows: usize,
    #[comptime] exclusive: bool,
    #[comptime] write_totals: bool,
    #[comptime] blueprint: TileBlueprint,
    #[define(E, A)] _dtypes: [ElemType; 2],
) {
    let row = linear_cube_index();
    if row >= rows {
        terminate!();
    }
    let row_base = row * row_vectors;
    let mut carry = identity::<A>(blueprint.fold);
    for part in 0..tiles_per_row {
        let total = scan_and_store_tile::<E, A, N>(
            input,
            output,
            carry,
            row_base,
            part * comptime!(blueprint.tile_vectors()),
            row_vectors,
            exclusive,
            blueprint,
        );
        carry = combine::<A>(carry, total, blueprint.fold);
        // The next tile's scan writes the shared spine this one's units may still read.
        sync_cube();
    }
    if write_totals && UNIT_POS == 0 {
        totals[row] = carry;
    }
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

/// Rows of a column folded per batch by [`scan_columns_kernel`]: their loads issue together
/// before the batch's dependent folds.
pub(crate) const COLUMN_BATCH: usize = 8;

/// The scan along the middle axis of a contiguous `[outer, len, inner]` buffer, read as
/// vectors of `N` neighbouring columns: unit `u` of the grid owns column vector `u` (slab
/// `u / inner_vectors`) and walks its `len` rows in order, folding as it goes. Neighbouring
/// units own neighbouring columns, so every row step of a plane is one coalesced load and
/// store; every element is read and written once, with no workspace and no transpose. The
/// fold's order is each column's own, element after element.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_columns_kernel<E: Numeric, A: Numeric, N: Size>(
    input: &[Vector<E, N>],
    output: &mut [Vector<E, N>],
    len: usize,
    inner_vectors: usize,
    column_vectors: usize,
    #[comptime] exclusive: bool,
    #[comptime] fold: Fold,
    #[define(E, A)] _dtypes: [ElemType; 2],
) {
    let column = linear_unit_index();
    if column >= column_vectors {
        terminate!();
    }
    let base = (column / inner_vectors) * len * inner_vectors + column % inner_vectors;
    let mut running = Vector::<A, N>::new(identity::<A>(fold));
    let full = len / COLUMN_BATCH;
    let mut held = Array::<Vector<A, N>>::new(COLUMN_BATCH);
    for batch in 0..full {
        let first = base + batch * COLUMN_BATCH * inner_vectors;
        #[unroll]
        for r in 0..COLUMN_BATCH {
            held[r] = Vector::cast_from(input[first + r * inner_vectors]);
        }
        #[unroll]
        for r in 0..COLUMN_BATCH {
            running = fold_column_step::<E, A, N>(
                output,
                first + r * inner_vectors,
                running,
                held[r],
                exclusive,
                fold,
            );
        }
    }
    for row in full * COLUMN_BATCH..len {
        let at = base + row * inner_vectors;
        let value = Vector::cast_from(input[at]);
        running = fold_column_step::<E, A, N>(output, at, running, value, exclusive, fold);
    }
}

/// One row of [`scan_columns_kernel`]: folds `value` into every lane's running value and
/// stores the inclusive result (or, `exclusive`, the running value before it) at `at`.
#[cube]
fn fold_column_step<E: Numeric, A: Numeric, N: Size>(
    output: &mut [Vector<E, N>],
    at: usize,
    running: Vector<A, N>,
    value: Vector<A, N>,
    #[comptime] exclusive: bool,
    #[comptime] fold: Fold,
) -> Vector<A, N> {
    let mut next = value;
    #[unroll]
    for j in 0..value.vector_size() {
        next.insert(j, combine::<A>(running.extract(j), value.extract(j), fold));
    }
    if exclusive {
        output[at] = narrow::<A, E, N>(running, fold);
    } else {
        output[at] = narrow::<A, E, N>(next, fold);
    }
    next
}
