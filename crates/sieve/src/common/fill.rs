//! Filling workspaces on the device (status words, counters), so no host upload is
//! needed between launches.

use cubecl::prelude::*;
use cubecl::server::Handle;

use super::address::address_type;
use super::buffers::bind;
use super::grid::{elements_per_unit, linear_cube_index};

/// Elements each unit writes. One element a unit made a fill of 2^24 words (the onesweep
/// sort's status words at 2^28 keys, four fills a sort) a launch of 65,536 short cubes; eight
/// a unit make an eighth as many. Measured (H100, `39-tf`): the 2^28 f32 sort 0.4-1.0% faster.
const FILL_PER_UNIT: u32 = 8;

/// The element a unit writes in its `i`-th store (of `FILL_PER_UNIT`): a cube fills
/// `FILL_PER_UNIT * CUBE_DIM` consecutive elements, each unit one in every `CUBE_DIM`, so each
/// store of a plane covers consecutive words.
#[cube]
fn fill_index(i: u32) -> usize {
    linear_cube_index() * (CUBE_DIM * FILL_PER_UNIT) as usize + (i * CUBE_DIM + UNIT_POS) as usize
}

/// Writes `value` to the elements below `len` (see [`fill_index`]).
#[cube(launch_unchecked, address_type = "dynamic")]
fn fill_kernel<T: Numeric>(
    buffer: &mut [T],
    len: usize,
    value: u32,
    #[define(T)] _dtype: ElemType,
) {
    #[unroll]
    for i in 0..FILL_PER_UNIT {
        let index = fill_index(i);
        if index < len {
            buffer[index] = T::cast_from(value);
        }
    }
}

/// Writes `value` (as an `elem`) to the first `len` elements of `buffer`, whose elements are
/// `elem`.
pub fn fill(client: &Client, buffer: &Handle, len: usize, elem: ElemType, value: u32) {
    if len == 0 {
        return;
    }
    // At most the device's own units per cube (any device runs it; no tuning is involved).
    let (cubes, cube_dim) = elements_per_unit(client, len, FILL_PER_UNIT);
    // SAFETY: every write is bounds-checked against `len`, which the caller sized the buffer for.
    unsafe {
        fill_kernel::launch_unchecked(
            client,
            cubes,
            cube_dim,
            address_type(&[len]),
            BufferArg::from_raw_parts(buffer.clone(), len),
            len,
            value,
            elem,
        );
    }
}

/// Writes zero to the first `len` elements of `buffer`, whose elements are `elem`.
pub fn fill_zero(client: &Client, buffer: &Handle, len: usize, elem: ElemType) {
    fill(client, buffer, len, elem, 0);
}

/// Three `u32` buffers zeroed by one kernel, each unit clearing its elements of each (as
/// [`fill_index`] lays them out): one launch where three fills cost three (launches, not
/// bytes, bound small workspaces' fills).
#[cube(launch_unchecked, address_type = "dynamic")]
fn zero_three_kernel(
    a: &mut [u32],
    b: &mut [u32],
    c: &mut [u32],
    len_a: usize,
    len_b: usize,
    len_c: usize,
) {
    #[unroll]
    for i in 0..FILL_PER_UNIT {
        let index = fill_index(i);
        if index < len_a {
            a[index] = 0u32;
        }
        if index < len_b {
            b[index] = 0u32;
        }
        if index < len_c {
            c[index] = 0u32;
        }
    }
}

/// Zeroes the first `len` `u32` elements of each of three distinct buffers, in one launch.
pub fn fill_zero_three(client: &Client, buffers: [(&Handle, usize); 3]) {
    let longest = buffers.iter().map(|&(_, len)| len).max().unwrap_or(0);
    if longest == 0 {
        return;
    }
    let (cubes, cube_dim) = elements_per_unit(client, longest, FILL_PER_UNIT);
    let [(a, len_a), (b, len_b), (c, len_c)] = buffers;
    // A zero-length buffer still needs a binding of one element (the caller's buffer holds at
    // least that); nothing is written to it.
    let arg = |h: &Handle, len: usize| bind(h, len.max(1));
    // SAFETY: every write is bounds-checked against its buffer's `len`.
    unsafe {
        zero_three_kernel::launch_unchecked(
            client,
            cubes,
            cube_dim,
            address_type(&[longest]),
            arg(a, len_a),
            arg(b, len_b),
            arg(c, len_c),
            len_a,
            len_b,
            len_c,
        );
    }
}
