//! Cube-wide scans of one value per *group* (a plane, or a unit when plane operations are
//! off), through shared memory. Every unit of the cube must call these (they synchronise
//! the cube). Written against `PLANE_DIM`, never a fixed plane width.

use cubecl::prelude::*;

/// Exclusive prefix sum over `group_count` values held in `spine[0..group_count]`, in place,
/// returning the sum of all of them. `group_count <= spine.len()`.
///
/// With plane operations, the first plane walks the spine `PLANE_DIM` entries at a time,
/// carrying the running total; without them, unit 0 walks it serially (the fallback for
/// devices with no plane operations; `group_count` is at most a cube there).
/// The order of additions is fixed, so float results are the same on every run.
#[cube]
pub fn spine_exclusive_scan<A: Numeric>(
    spine: &mut Shared<[A]>,
    group_count: u32,
    #[comptime] use_planes: bool,
) -> A {
    let mut total = Shared::<A>::new();
    sync_cube();
    if use_planes {
        if UNIT_POS < PLANE_DIM {
            let mut carry = A::from_int(0);
            let chunks = group_count.div_ceil(PLANE_DIM);
            for chunk in 0..chunks {
                let index = chunk * PLANE_DIM + UNIT_POS_PLANE;
                let value = if index < group_count {
                    spine[index as usize]
                } else {
                    A::from_int(0)
                };
                let inclusive = plane_inclusive_sum(value);
                let before = plane_shuffle_up(inclusive, 1);
                let exclusive = if UNIT_POS_PLANE == 0 {
                    carry
                } else {
                    carry + before
                };
                if index < group_count {
                    spine[index as usize] = exclusive;
                }
                carry += plane_shuffle(inclusive, PLANE_DIM - 1);
            }
            if UNIT_POS == 0 {
                *total = carry;
            }
        }
    } else if UNIT_POS == 0 {
        let mut carry = A::from_int(0);
        for index in 0..group_count {
            let value = spine[index as usize];
            spine[index as usize] = carry;
            carry += value;
        }
        *total = carry;
    }
    sync_cube();
    *total
}
