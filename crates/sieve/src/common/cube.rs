//! Cube-wide scans of one value per *group* (a plane, or a unit when plane operations are
//! off), through shared memory. Every unit of the cube must call these (they synchronise
//! the cube). Written against `PLANE_DIM`, never a fixed plane width.

use cubecl::prelude::*;

use super::fold::{Fold, combine, identity, plane_inclusive};

/// Exclusive prefix sum (or, by `fold`, product, minimum, maximum) over `group_count` values
/// held in `spine[0..group_count]`, in place, returning the fold of all of them.
/// `group_count <= spine.len()`.
///
/// With plane operations, the first plane walks the spine `PLANE_DIM` entries at a time,
/// carrying the running total; without them, unit 0 walks it serially (the fallback for
/// devices with no plane operations; `group_count` is at most a cube there).
/// The order of additions is fixed, so float results are the same on every run.
#[cube]
pub fn spine_exclusive_scan<A: Numeric>(
    spine: &mut Shared<[A]>,
    group_count: u32,
    #[comptime] fold: Fold,
    #[comptime] use_planes: bool,
) -> A {
    let mut total = Shared::<A>::new();
    sync_cube();
    if use_planes {
        if UNIT_POS < PLANE_DIM {
            let mut carry = identity::<A>(fold);
            let chunks = group_count.div_ceil(PLANE_DIM);
            for chunk in 0..chunks {
                let index = chunk * PLANE_DIM + UNIT_POS_PLANE;
                let value = if index < group_count {
                    spine[index as usize]
                } else {
                    identity::<A>(fold)
                };
                let inclusive = plane_inclusive::<A>(value, fold);
                let before = plane_shuffle_up(inclusive, 1);
                let exclusive = if UNIT_POS_PLANE == 0 {
                    carry
                } else {
                    combine::<A>(carry, before, fold)
                };
                if index < group_count {
                    spine[index as usize] = exclusive;
                }
                carry = combine::<A>(carry, plane_shuffle(inclusive, PLANE_DIM - 1), fold);
            }
            if UNIT_POS == 0 {
                *total = carry;
            }
        }
    } else if UNIT_POS == 0 {
        let mut carry = identity::<A>(fold);
        for index in 0..group_count {
            let value = spine[index as usize];
            spine[index as usize] = carry;
            carry = combine::<A>(carry, value, fold);
        }
        *total = carry;
    }
    sync_cube();
    *total
}

/// One unit's exclusive prefix over the cube and the cube's total.
#[derive(CubeType, Clone, Copy)]
pub struct UnitPrefix {
    /// Sum of the values of the units before this one (in `UNIT_POS` order).
    pub before: u32,
    /// Sum over the whole cube.
    pub total: u32,
}

/// Exclusive prefix sum of one `u32` per unit across the cube (`units` = the cube's size):
/// a plane scan, then the planes' totals through the spine; unit-serial without planes.
/// Every unit must call it (it synchronises the cube). It may be called back to back with no
/// barrier between: each spine slot is written and read by one plane only (one unit without
/// planes), and the next call's plane scan orders those lanes' reads before the slot is
/// written again.
#[cube]
pub fn cube_exclusive_sum(
    value: u32,
    #[comptime] units: u32,
    #[comptime] use_planes: bool,
) -> UnitPrefix {
    let mut spine = Shared::<[u32]>::new_slice(units as usize);
    let mut in_group = 0u32;
    let mut group = UNIT_POS;
    let mut groups = CUBE_DIM;
    if use_planes {
        let inclusive = plane_inclusive_sum(value);
        in_group = inclusive - value;
        group = UNIT_POS / PLANE_DIM;
        groups = CUBE_DIM / PLANE_DIM;
        if UNIT_POS_PLANE == PLANE_DIM - 1 {
            spine[group as usize] = inclusive;
        }
    } else {
        spine[UNIT_POS as usize] = value;
    }
    let total = spine_exclusive_scan::<u32>(&mut spine, groups, Fold::COUNT, use_planes);
    UnitPrefix {
        before: spine[group as usize] + in_group,
        total,
    }
}

/// One unit's exclusive prefix over the cube under a [`Fold`], and the fold of the whole cube.
#[derive(CubeType, Clone, Copy)]
pub struct CubePrefix<A: Numeric> {
    /// The fold of the values of the units before this one (in `UNIT_POS` order; the fold's
    /// identity for unit 0).
    pub before: A,
    /// The fold over the whole cube.
    pub total: A,
}

/// [`cube_exclusive_sum()`] under any [`Fold`] (float sums, maxima, minima, ...): a plane scan,
/// then the planes' totals through the spine; unit-serial without planes. Every unit must
/// call it (it synchronises the cube); it may be called back to back (it waits for every
/// unit to have read the previous call's spine before writing it).
#[cube]
pub fn cube_exclusive<A: Numeric>(
    value: A,
    #[comptime] fold: Fold,
    #[comptime] units: u32,
    #[comptime] use_planes: bool,
) -> CubePrefix<A> {
    let mut spine = Shared::<[A]>::new_slice(units as usize);
    let mut in_group = identity::<A>(fold);
    let mut group = UNIT_POS;
    let mut groups = CUBE_DIM;
    sync_cube();
    if use_planes {
        let inclusive = plane_inclusive::<A>(value, fold);
        let earlier = plane_shuffle_up(inclusive, 1);
        if UNIT_POS_PLANE > 0 {
            in_group = earlier;
        }
        group = UNIT_POS / PLANE_DIM;
        groups = CUBE_DIM / PLANE_DIM;
        if UNIT_POS_PLANE == PLANE_DIM - 1 {
            spine[group as usize] = inclusive;
        }
    } else {
        spine[UNIT_POS as usize] = value;
    }
    let total = spine_exclusive_scan::<A>(&mut spine, groups, fold, use_planes);
    CubePrefix::<A> {
        before: combine::<A>(spine[group as usize], in_group, fold),
        total,
    }
}

/// The smallest and largest of a set of `u32`s.
#[derive(CubeType, Clone, Copy)]
pub struct U32Range {
    /// The smallest value (`u32::MAX` for an empty set).
    pub min: u32,
    /// The largest value (0 for an empty set).
    pub max: u32,
}

/// The cube-wide range of the units' ranges (`min > max` for a unit with no values):
/// plane min/max, then one shared atomic per plane; one per unit without planes. Every unit
/// must call it (it synchronises the cube); every unit gets the result.
#[cube]
pub fn cube_range(unit: U32Range, #[comptime] use_planes: bool) -> U32Range {
    let range = Shared::<[Atomic<u32>]>::new_slice(2usize);
    if UNIT_POS == 0 {
        range[0].store(0xFFFF_FFFFu32);
        range[1].store(0u32);
    }
    sync_cube();
    if use_planes {
        let min = plane_min(unit.min);
        let max = plane_max(unit.max);
        if UNIT_POS_PLANE == 0 {
            range[0].fetch_min(min);
            range[1].fetch_max(max);
        }
    } else {
        range[0].fetch_min(unit.min);
        range[1].fetch_max(unit.max);
    }
    sync_cube();
    U32Range {
        min: range[0].load(),
        max: range[1].load(),
    }
}
