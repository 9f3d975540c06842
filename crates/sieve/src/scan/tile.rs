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
    Fold, ScanOp, combine, combine_vector, identity, narrow, plane_inclusive, plane_total,
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

/// Scans one tile into registers (this unit's `vectors_per_unit` vectors, layout as
/// [`unit_vector_index`]); on return the tile's inclusive scan at element `j` of vector `k` is
/// `combine(prefixes[k], values[k][j])` ([`scan_registers`]). Returns the tile's total.
#[cube]
pub fn scan_tile<E: Numeric, A: Numeric, N: Size>(
    input: &[Vector<E, N>],
    values: &mut Array<Vector<A, N>>,
    prefixes: &mut Array<A>,
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
    scan_registers::<A, N>(values, prefixes, blueprint)
}

/// Scans a tile that is already in registers: on entry `values[k]` holds this unit's `k`-th
/// vector of the tile (layout as [`unit_vector_index`]). On return the tile's inclusive scan
/// at element `j` of vector `k` is `combine(prefixes[k], values[k][j])`, and every consumer
/// (the scan's store, the compaction's scatter) computes it in that form, folding its own
/// offset into the scalar `prefixes[k]` first: one fold per element however deep the tile.
/// Returns the tile's total. The building block every tile-wide scan (sums, survivor ranks)
/// goes through.
///
/// What the two halves hold depends on the fold:
/// - exact folds ([`Fold::exact`]: integers, minima, maxima): `values[k]` is the vector's own
///   scan and `prefixes[k]` everything in the tile before the vector (a scalar fold per
///   vector instead of one per element for each level of the tile);
/// - float sums and products, whose bits depend on the grouping: `values[k]` is the scan
///   within the unit's group (plane), in the grouping this engine has always used, and
///   `prefixes[k]` the group's offset in the tile. Exclusive output `i + 1` then equals
///   inclusive output `i` bit for bit within a group.
#[cube]
pub fn scan_registers<A: Numeric, N: Size>(
    values: &mut Array<Vector<A, N>>,
    prefixes: &mut Array<A>,
    #[comptime] blueprint: TileBlueprint,
) -> A {
    let fold = blueprint.fold;
    let exact = comptime!(fold.exact());
    // 1. Each group scans its own vectors, carrying its running total.
    let mut carry = identity::<A>(fold);
    #[unroll]
    for k in 0..blueprint.vectors_per_unit {
        let v = vector_inclusive::<A, N>(values[k as usize], fold);
        let vector_total = v.extract(v.vector_size().comptime() - 1);
        // The group-local fold before this vector.
        let mut before_vector = carry;
        if blueprint.use_planes {
            let inclusive = plane_inclusive::<A>(vector_total, fold);
            let before = plane_shuffle_up(inclusive, 1);
            if UNIT_POS_PLANE != 0 {
                before_vector = combine::<A>(carry, before, fold);
            }
            carry = combine::<A>(carry, plane_shuffle(inclusive, PLANE_DIM - 1), fold);
        } else {
            carry = combine::<A>(carry, vector_total, fold);
        }
        if exact {
            values[k as usize] = v;
            prefixes[k as usize] = before_vector;
        } else {
            values[k as usize] = combine_vector::<A, N>(before_vector, v, fold);
        }
    }
    // 2. Groups' totals are scanned across the cube.
    add_group_offsets::<A>(carry, prefixes, blueprint)
}

/// A vector's own inclusive scan under `fold`, element order (step 1 of every register scan).
#[cube]
fn vector_inclusive<A: Numeric, N: Size>(
    vector: Vector<A, N>,
    #[comptime] fold: Fold,
) -> Vector<A, N> {
    let mut v = vector;
    #[unroll]
    for j in 1..v.vector_size().comptime() {
        let previous = v.extract(j - 1);
        v.insert(j, combine::<A>(previous, v.extract(j), fold));
    }
    v
}

/// Step 2 of a register scan: scans the groups' totals (`carry`, the group's total, held by
/// each of its units) across the cube and folds each group's offset into its `prefixes`
/// (exact folds; else the offset replaces them, [`scan_registers`]). Returns the tile's
/// total. Every unit must call it.
#[cube]
fn add_group_offsets<A: Numeric>(
    carry: A,
    prefixes: &mut Array<A>,
    #[comptime] blueprint: TileBlueprint,
) -> A {
    let fold = blueprint.fold;
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
        if comptime!(fold.exact()) {
            prefixes[k as usize] = combine::<A>(group_offset, prefixes[k as usize], fold);
        } else {
            prefixes[k as usize] = group_offset;
        }
    }
    total
}

/// Bits of one packed field of [`scan_flag_registers`]: enough for a plane's sum of one
/// vector's flags (`plane_size_max * vector_size`), so no field carries into the next.
pub fn flag_field_bits(plane_size_max: u32, vector_size: usize) -> u32 {
    let most = plane_size_max.max(1) as u64 * vector_size as u64;
    (u64::BITS - most.leading_zeros()).min(32)
}

/// [`scan_registers`] for 0/1 flags (the compaction's ranks: [`Fold::COUNT`], planes on):
/// the same results, with one plane scan for several vectors. A vector's flag count is at
/// most `N`, and its plane-wide sum at most `PLANE_DIM * N`, which fits `field_bits`
/// ([`flag_field_bits`]); so `32 / field_bits` vectors' counts ride side by side in one
/// word through one plane inclusive sum, and each field comes out as that vector's sum over
/// the lanes (the in-field sums never carry). `vectors_per_unit` plane scans (three plane
/// operations each) become `vectors_per_unit / (32 / field_bits)` (two each).
#[cube]
pub fn scan_flag_registers<N: Size>(
    values: &mut Array<Vector<u32, N>>,
    prefixes: &mut Array<u32>,
    #[comptime] field_bits: u32,
    #[comptime] blueprint: TileBlueprint,
) -> u32 {
    // 1. Each vector's own scan; its count is its last element.
    let mut counts = Array::<u32>::new(blueprint.vectors_per_unit as usize);
    #[unroll]
    for k in 0..blueprint.vectors_per_unit {
        let v = vector_inclusive::<u32, N>(values[k as usize], Fold::COUNT);
        values[k as usize] = v;
        counts[k as usize] = v.extract(v.vector_size().comptime() - 1);
    }
    // 2-4. The counts ranked across the cube.
    scan_vector_counts(&counts, prefixes, field_bits, blueprint)
}

/// The rank of one count a vector (`counts[k]` of this unit's vector `k`, layout as
/// [`unit_vector_index`]; at most `PLANE_DIM * N` a plane-wide vector step, see
/// [`flag_field_bits`]): `prefixes[k]` gets the sum of the counts of every vector before it
/// in the tile. Returns the tile's total. With planes and `field_bits > 0`, several vectors'
/// counts ride in one word through one plane scan ([`scan_flag_registers`]); with `field_bits`
/// 0, one plane scan a vector. Every unit must call it.
#[cube]
pub fn scan_vector_counts(
    counts: &Array<u32>,
    prefixes: &mut Array<u32>,
    #[comptime] field_bits: u32,
    #[comptime] blueprint: TileBlueprint,
) -> u32 {
    let vpu = blueprint.vectors_per_unit;
    let mut carry = 0u32;
    if comptime!(blueprint.use_planes && field_bits > 0) {
        let per_word = comptime!((32 / field_bits).max(1));
        let words = comptime!(vpu.div_ceil(per_word));
        let field = comptime!(if field_bits >= 32 {
            u32::MAX
        } else {
            (1u32 << field_bits) - 1
        });
        let mut own = Array::<u32>::new(words as usize);
        #[unroll]
        for w in 0..words {
            own[w as usize] = 0u32;
        }
        #[unroll]
        for k in 0..vpu {
            own[(k / per_word) as usize] |= counts[k as usize] << ((k % per_word) * field_bits);
        }
        // One plane scan a word: the lanes before this one (exclusive: no field is smaller in
        // the inclusive sum than in `own`, so the subtraction borrows nothing) and the
        // plane's total of each field.
        let mut before = Array::<u32>::new(words as usize);
        let mut planes = Array::<u32>::new(words as usize);
        #[unroll]
        for w in 0..words {
            let inclusive = plane_inclusive_sum(own[w as usize]);
            before[w as usize] = inclusive - own[w as usize];
            planes[w as usize] = plane_shuffle(inclusive, PLANE_DIM - 1);
        }
        // Vector k's prefix in the plane: the plane totals of vectors before it, then its
        // lanes before this one.
        #[unroll]
        for k in 0..vpu {
            let w = (k / per_word) as usize;
            let shift = (k % per_word) * field_bits;
            prefixes[k as usize] = carry + ((before[w] >> shift) & field);
            carry += (planes[w] >> shift) & field;
        }
    } else if comptime!(blueprint.use_planes) {
        #[unroll]
        for k in 0..vpu {
            let inclusive = plane_inclusive_sum(counts[k as usize]);
            prefixes[k as usize] = carry + inclusive - counts[k as usize];
            carry += plane_shuffle(inclusive, PLANE_DIM - 1);
        }
    } else {
        #[unroll]
        for k in 0..vpu {
            prefixes[k as usize] = carry;
            carry += counts[k as usize];
        }
    }
    // Across the cube, as every register scan.
    add_group_offsets::<u32>(carry, prefixes, blueprint)
}

/// Stores a scanned tile ([`scan_tile`]) with `offset` (the tile's offset in its row) folded
/// in: inclusive, or exclusive (each element gets the inclusive value of the element before
/// it, the first one `offset` itself).
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn store_tile<E: Numeric, A: Numeric, N: Size>(
    output: &mut [Vector<E, N>],
    values: &Array<Vector<A, N>>,
    prefixes: &Array<A>,
    offset: A,
    row_base: usize,
    tile_start: usize,
    row_vectors: usize,
    #[comptime] exclusive: bool,
    #[comptime] blueprint: TileBlueprint,
) {
    let fold = blueprint.fold;
    #[unroll]
    for k in 0..blueprint.vectors_per_unit {
        let index = tile_start + unit_vector_index(k, blueprint);
        let local = values[k as usize];
        let width = local.vector_size().comptime();
        let prefix = combine::<A>(offset, prefixes[k as usize], fold);
        if exclusive {
            // Element j + 1 gets exactly the value element j's inclusive store computes,
            // `combine(prefix, local[j])`; the vector's first element gets the inclusive
            // value before the vector.
            let first = exclusive_first::<A, N>(values, k, prefix, blueprint);
            let mut shifted = Vector::<A, N>::new(first);
            #[unroll]
            for j in 1..width {
                shifted.insert(j, combine::<A>(prefix, local.extract(j - 1), fold));
            }
            if index < row_vectors {
                output[row_base + index] = narrow::<A, E, N>(shifted, fold);
            }
        } else if index < row_vectors {
            output[row_base + index] =
                narrow::<A, E, N>(combine_vector::<A, N>(prefix, local, fold), fold);
        }
    }
}

/// The inclusive value just before vector `k` of this unit, `prefix` being that vector's
/// `combine(offset, prefixes[k])`. For exact folds that is `prefix` itself. For float sums and
/// products it is the previous vector in tile order's last value, computed as that vector's
/// store computes it (so the bits match): the previous lane's or, for lane 0, the last lane's
/// of step `k - 1`; at the start of a group, the group's offset, `prefix`.
#[cube]
fn exclusive_first<A: Numeric, N: Size>(
    values: &Array<Vector<A, N>>,
    k: u32,
    prefix: A,
    #[comptime] blueprint: TileBlueprint,
) -> A {
    let fold = blueprint.fold;
    if comptime!(fold.exact()) {
        prefix
    } else {
        let width = values[k as usize].vector_size().comptime();
        let last = values[k as usize].extract(width - 1);
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
                combine::<A>(prefix, from_previous_lane, fold)
            } else if k > 0 {
                combine::<A>(prefix, last_lane_previous_step, fold)
            } else {
                prefix
            }
        } else if k > 0 {
            combine::<A>(prefix, values[(k - 1) as usize].extract(width - 1), fold)
        } else {
            prefix
        }
    }
}

#[cfg(test)]
mod tests {
    use super::flag_field_bits;

    /// A field holds a plane's sum of one vector's flags, `plane_size_max * N`, exactly.
    #[test]
    fn flag_fields_hold_a_planes_sum() {
        assert_eq!(flag_field_bits(32, 4), 8); // 128: four fields a word
        assert_eq!(flag_field_bits(64, 4), 9); // 256: three a word
        assert_eq!(flag_field_bits(32, 1), 6);
        assert_eq!(flag_field_bits(8, 4), 6);
        assert_eq!(flag_field_bits(1, 1), 1);
        for (lanes, n) in [(4u32, 1usize), (16, 2), (32, 4), (64, 4), (128, 4)] {
            let bits = flag_field_bits(lanes, n);
            let most = lanes as u64 * n as u64;
            assert!(
                most < 1 << bits && most >= 1 << (bits - 1),
                "{lanes} x {n}: {bits} bits"
            );
        }
    }
}
