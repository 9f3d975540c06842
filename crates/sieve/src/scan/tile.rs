//! What one cube does with one tile of a row: load it, scan it in registers, and store it
//! with an offset. Shared by the reduce-then-scan passes and the look-back kernel.
//!
//! Layout of a tile (`units * vectors_per_unit` vectors of `N` elements):
//! - with plane operations, each plane owns a contiguous segment of
//!   `PLANE_DIM * vectors_per_unit` vectors and reads it in `vectors_per_unit` coalesced
//!   steps (vector `segment + k * PLANE_DIM + lane`); a *group* is a plane;
//! - without them, each unit owns `vectors_per_unit` consecutive vectors; a group is a unit.
//!
//! Groups' totals are then scanned across the cube through a shared-memory spine.
//!
//! Every step folds with the blueprint's operator ([`Fold`]: sum, product, minimum or
//! maximum), earlier operand first; "sum" and "total" below mean that fold.

use cubecl::prelude::*;

use crate::common::cube::spine_exclusive_scan;
use crate::common::fold::{
    Fold, ScanOp, combine, combine_vector, identity, plane_inclusive, plane_total,
};

/// Compile-time shape of a tile: only what changes control flow or register arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TileBlueprint {
    /// Units per cube.
    pub units: u32,
    /// Vectors each unit loads.
    pub vectors_per_unit: u32,
    /// Plane operations (striped layout) or the unit-serial fallback.
    pub use_planes: bool,
    /// The operator every step folds with ([`Fold::COUNT`] for the compaction's ranks).
    pub fold: Fold,
}

impl TileBlueprint {
    /// Vectors in one tile.
    pub fn tile_vectors(&self) -> usize {
        self.units as usize * self.vectors_per_unit as usize
    }
}

/// Index (in vectors, from the start of the tile) of this unit's `k`-th vector.
#[cube]
pub fn unit_vector_index(k: u32, #[comptime] blueprint: TileBlueprint) -> usize {
    if blueprint.use_planes {
        let plane = UNIT_POS / PLANE_DIM;
        let segment = plane * PLANE_DIM * blueprint.vectors_per_unit;
        (segment + k * PLANE_DIM + UNIT_POS_PLANE) as usize
    } else {
        (UNIT_POS * blueprint.vectors_per_unit + k) as usize
    }
}

#[cube]
fn group_count(#[comptime] blueprint: TileBlueprint) -> u32 {
    if blueprint.use_planes {
        CUBE_DIM / PLANE_DIM
    } else {
        CUBE_DIM
    }
}

#[cube]
fn group_index(#[comptime] blueprint: TileBlueprint) -> u32 {
    if blueprint.use_planes {
        UNIT_POS / PLANE_DIM
    } else {
        UNIT_POS
    }
}

/// Reads vector `index` of a row (the fold's identity past its end), converted to the
/// accumulator type.
#[cube]
pub fn load_vector<E: Numeric, A: Numeric, N: Size>(
    input: &[Vector<E, N>],
    row_base: usize,
    index: usize,
    row_vectors: usize,
    #[comptime] fold: Fold,
) -> Vector<A, N> {
    if index < row_vectors {
        Vector::cast_from(input[row_base + index])
    } else {
        Vector::new(identity::<A>(fold))
    }
}

/// The fold of one tile (every unit gets it). Elements past the row's end count as the
/// identity.
#[cube]
pub fn reduce_tile<E: Numeric, A: Numeric, N: Size>(
    input: &[Vector<E, N>],
    row_base: usize,
    tile_start: usize,
    row_vectors: usize,
    #[comptime] blueprint: TileBlueprint,
) -> A {
    let fold = blueprint.fold;
    // Minimum and maximum keep the latest of equal values (and the latest NaN), so they fold
    // in element order. With planes a unit's vectors interleave with its plane's
    // (`unit_vector_index`): element order is vector k of every lane, then vector k + 1, so
    // each k folds across the plane first. Sums and products fold per unit, the cheaper
    // order: their value does not depend on the order but for rounding, and the order is
    // fixed, so the bits are the same on every run.
    let per_vector =
        comptime!(blueprint.use_planes && (fold.op == ScanOp::Min || fold.op == ScanOp::Max));
    let mut total = identity::<A>(fold);
    #[unroll]
    for k in 0..blueprint.vectors_per_unit {
        let index = tile_start + unit_vector_index(k, blueprint);
        let v = load_vector::<E, A, N>(input, row_base, index, row_vectors, fold);
        if per_vector {
            let mut vector_total = identity::<A>(fold);
            #[unroll]
            for j in 0..v.vector_size() {
                vector_total = combine::<A>(vector_total, v.extract(j), fold);
            }
            total = combine::<A>(total, plane_total::<A>(vector_total, fold), fold);
        } else {
            #[unroll]
            for j in 0..v.vector_size() {
                total = combine::<A>(total, v.extract(j), fold);
            }
        }
    }
    if per_vector {
        groups_total::<A>(total, blueprint)
    } else {
        cube_total::<A>(total, blueprint)
    }
}

/// The fold over the cube of one value per unit, in unit order (every unit gets it). Every
/// unit must call it.
#[cube]
pub fn cube_total<A: Numeric>(value: A, #[comptime] blueprint: TileBlueprint) -> A {
    let group_value = if blueprint.use_planes {
        plane_total::<A>(value, blueprint.fold)
    } else {
        value
    };
    groups_total::<A>(group_value, blueprint)
}

/// The fold over the cube of one value per group (a plane's fold, held by each of its lanes;
/// or a unit's value without planes), in group order. Every unit must call it.
#[cube]
fn groups_total<A: Numeric>(group_value: A, #[comptime] blueprint: TileBlueprint) -> A {
    let mut spine = Shared::<[A]>::new_slice(blueprint.units as usize);
    if blueprint.use_planes {
        if UNIT_POS_PLANE == 0 {
            spine[(UNIT_POS / PLANE_DIM) as usize] = group_value;
        }
    } else {
        spine[UNIT_POS as usize] = group_value;
    }
    spine_exclusive_scan::<A>(
        &mut spine,
        group_count(blueprint),
        blueprint.fold,
        blueprint.use_planes,
    )
}

/// Scans one tile into `values` (each unit's `vectors_per_unit` vectors, in registers, plus
/// one slot): on return `values[k]` holds the inclusive scan of the tile up to each element,
/// *without* the tile's own offset, `values[vectors_per_unit]` the group's offset (for the
/// exclusive store), and the function returns the tile's total.
#[cube]
pub fn scan_tile<E: Numeric, A: Numeric, N: Size>(
    input: &[Vector<E, N>],
    values: &mut Array<Vector<A, N>>,
    row_base: usize,
    tile_start: usize,
    row_vectors: usize,
    #[comptime] blueprint: TileBlueprint,
) -> A {
    #[unroll]
    for k in 0..blueprint.vectors_per_unit {
        let index = tile_start + unit_vector_index(k, blueprint);
        values[k as usize] =
            load_vector::<E, A, N>(input, row_base, index, row_vectors, blueprint.fold);
    }
    scan_registers::<A, N>(values, blueprint)
}

/// Scans a tile that is already in registers: on entry `values[k]` holds this unit's `k`-th
/// vector of the tile (layout as [`unit_vector_index`]); on return, as [`scan_tile`]
/// describes. The building block every tile-wide scan (sums, survivor ranks) goes through.
#[cube]
pub fn scan_registers<A: Numeric, N: Size>(
    values: &mut Array<Vector<A, N>>,
    #[comptime] blueprint: TileBlueprint,
) -> A {
    let fold = blueprint.fold;
    // 1. Each group scans its own vectors, carrying its running total.
    let mut carry = identity::<A>(fold);
    #[unroll]
    for k in 0..blueprint.vectors_per_unit {
        let mut v = values[k as usize];
        let width = v.vector_size().comptime();
        #[unroll]
        for j in 1..width {
            let previous = v.extract(j - 1);
            v.insert(j, combine::<A>(previous, v.extract(j), fold));
        }
        let vector_total = v.extract(width - 1);
        if blueprint.use_planes {
            let inclusive = plane_inclusive::<A>(vector_total, fold);
            let before = plane_shuffle_up(inclusive, 1);
            let offset = if UNIT_POS_PLANE == 0 {
                carry
            } else {
                combine::<A>(carry, before, fold)
            };
            values[k as usize] = combine_vector::<A, N>(offset, v, fold);
            carry = combine::<A>(carry, plane_shuffle(inclusive, PLANE_DIM - 1), fold);
        } else {
            values[k as usize] = combine_vector::<A, N>(carry, v, fold);
            carry = combine::<A>(carry, vector_total, fold);
        }
    }
    // 2. Groups' totals are scanned across the cube.
    let mut spine = Shared::<[A]>::new_slice(blueprint.units as usize);
    if blueprint.use_planes {
        if UNIT_POS_PLANE == 0 {
            spine[(UNIT_POS / PLANE_DIM) as usize] = carry;
        }
    } else {
        spine[UNIT_POS as usize] = carry;
    }
    let total = spine_exclusive_scan::<A>(
        &mut spine,
        group_count(blueprint),
        fold,
        blueprint.use_planes,
    );
    let group_offset = spine[group_index(blueprint) as usize];
    #[unroll]
    for k in 0..blueprint.vectors_per_unit {
        values[k as usize] = combine_vector::<A, N>(group_offset, values[k as usize], fold);
    }
    values[blueprint.vectors_per_unit as usize] = Vector::new(group_offset);
    total
}

/// Stores a scanned tile with `offset` added: inclusive, or exclusive (each element gets the
/// inclusive value of the element before it, the first one `offset` itself).
#[cube]
pub fn store_tile<E: Numeric, A: Numeric, N: Size>(
    output: &mut [Vector<E, N>],
    values: &Array<Vector<A, N>>,
    offset: A,
    row_base: usize,
    tile_start: usize,
    row_vectors: usize,
    #[comptime] exclusive: bool,
    #[comptime] blueprint: TileBlueprint,
) {
    #[unroll]
    for k in 0..blueprint.vectors_per_unit {
        let index = tile_start + unit_vector_index(k, blueprint);
        let inclusive = values[k as usize];
        let width = inclusive.vector_size().comptime();
        if exclusive {
            // The element before this vector's first one is the last element of the previous
            // vector in tile order. Taking that register value (rather than computing
            // `inclusive[0] - x[0]`, which rounds for floats) makes exclusive[i + 1] equal
            // inclusive[i] bit for bit.
            let before = exclusive_start::<A, N>(values, k, inclusive, blueprint);
            let mut shifted = Vector::<A, N>::new(before);
            #[unroll]
            for j in 1..width {
                shifted.insert(j, inclusive.extract(j - 1));
            }
            if index < row_vectors {
                output[row_base + index] =
                    Vector::cast_from(combine_vector::<A, N>(offset, shifted, blueprint.fold));
            }
        } else if index < row_vectors {
            output[row_base + index] =
                Vector::cast_from(combine_vector::<A, N>(offset, inclusive, blueprint.fold));
        }
    }
}

/// The tile-local inclusive value just before vector `k` of this unit (the identity at the
/// tile's start). With planes, the previous vector in tile order belongs to the previous lane or,
/// for lane 0, to the last lane of step `k - 1`, or (at step 0) to the previous plane.
#[cube]
fn exclusive_start<A: Numeric, N: Size>(
    values: &Array<Vector<A, N>>,
    k: u32,
    inclusive: Vector<A, N>,
    #[comptime] blueprint: TileBlueprint,
) -> A {
    let width = inclusive.vector_size().comptime();
    let last = inclusive.extract(width - 1);
    if blueprint.use_planes {
        // Every lane takes part in the shuffles (k is uniform across the plane).
        let from_previous_lane = plane_shuffle_up(last, 1);
        let previous_step = if k > 0 {
            values[(k - 1) as usize].extract(width - 1)
        } else {
            A::from_int(0)
        };
        let last_lane_previous_step = plane_shuffle(previous_step, PLANE_DIM - 1);
        if UNIT_POS_PLANE > 0 {
            from_previous_lane
        } else if k > 0 {
            last_lane_previous_step
        } else {
            segment_start::<A, N>(values, blueprint)
        }
    } else if k > 0 {
        values[(k - 1) as usize].extract(width - 1)
    } else {
        segment_start::<A, N>(values, blueprint)
    }
}

/// Tile-local inclusive value at the end of the previous group's segment: the group offset,
/// which [`scan_tile`] keeps in the extra slot `values[vectors_per_unit]`.
#[cube]
fn segment_start<A: Numeric, N: Size>(
    values: &Array<Vector<A, N>>,
    #[comptime] blueprint: TileBlueprint,
) -> A {
    values[blueprint.vectors_per_unit as usize].extract(0usize)
}
