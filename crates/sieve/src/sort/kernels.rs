//! Kernel entry points of the sort family: thin `#[cube]` functions over [`super::tile`] and
//! [`super::keys`]. LSD kernels work on tiles (`tile t` is tile `t % tiles_per_row` of row
//! `t / tiles_per_row`), elementwise kernels on one unit per element, the in-cube sort on one
//! cube per row.

use cubecl::prelude::*;

use super::keys::{KeyKind, radix_key};
use super::tile::{SortBlueprint, digit_of, sort_by_bits};
use crate::common::grid::linear_cube_index;

/// Radix key of every key, and its position within its row.
#[cube(launch_unchecked)]
pub(crate) fn encode_kernel<K: Numeric>(
    keys: &[K],
    radix: &mut [u32],
    positions: &mut [u32],
    len: usize,
    elements: usize,
    #[comptime] kind: KeyKind,
    #[comptime] descending: bool,
    #[define(K)] _dtype: ElemType,
) {
    let index = linear_cube_index() * CUBE_DIM as usize + UNIT_POS as usize;
    if index >= elements {
        terminate!();
    }
    radix[index] = radix_key::<K>(keys[index], kind, descending);
    positions[index] = u32::cast_from(index % len);
}

/// LSD pass, step 1: how many keys of each tile have each digit, written digit-major per row
/// (`counts[(row * digits + digit) * tiles_per_row + part]`), so that an exclusive scan of a
/// row's counts gives each (digit, tile) its first output slot.
#[cube(launch_unchecked)]
pub(crate) fn histogram_kernel(
    radix: &[u32],
    counts: &mut [u32],
    len: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    shift: u32,
    #[comptime] blueprint: SortBlueprint,
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let digits = comptime!(blueprint.digits() as u32);
    let row = tile / tiles_per_row;
    let part = tile % tiles_per_row;
    let start = part * comptime!(blueprint.tile());
    let bins = Shared::<[Atomic<u32>]>::new_slice(comptime!(blueprint.digits()));
    let mut d = UNIT_POS;
    while d < digits {
        bins[d as usize].store(0u32);
        d += CUBE_DIM;
    }
    sync_cube();
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let local = (e * CUBE_DIM + UNIT_POS) as usize;
        if start + local < len {
            let key = radix[row * len + start + local];
            bins[digit_of(key, shift, blueprint) as usize].fetch_add(1u32);
        }
    }
    sync_cube();
    let mut d = UNIT_POS;
    while d < digits {
        counts[(row * digits as usize + d as usize) * tiles_per_row + part] =
            bins[d as usize].load();
        d += CUBE_DIM;
    }
}

/// LSD pass, step 2: every tile sorts its keys by the pass's digit in shared memory, then
/// each key goes to its (digit, tile)'s first slot plus its rank within the digit.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter_kernel(
    radix_in: &[u32],
    positions_in: &[u32],
    radix_out: &mut [u32],
    positions_out: &mut [u32],
    offsets: &[u32],
    len: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    shift: u32,
    #[comptime] blueprint: SortBlueprint,
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let digits = comptime!(blueprint.digits());
    let row = tile / tiles_per_row;
    let part = tile % tiles_per_row;
    let start = part * comptime!(blueprint.tile());
    let row_base = row * len;
    let mut keys = Shared::<[u32]>::new_slice(comptime!(blueprint.tile()));
    let mut positions = Shared::<[u32]>::new_slice(comptime!(blueprint.tile()));
    let mut starts = Shared::<[u32]>::new_slice(digits);
    // Coalesced (striped) loads; past the row's end, the largest key, which stays last.
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let local = (e * CUBE_DIM + UNIT_POS) as usize;
        if start + local < len {
            keys[local] = radix_in[row_base + start + local];
            positions[local] = positions_in[row_base + start + local];
        } else {
            keys[local] = 0xFFFF_FFFFu32;
            positions[local] = 0u32;
        }
    }
    sync_cube();
    sort_by_bits(
        &mut keys,
        &mut positions,
        shift,
        blueprint.radix_bits,
        blueprint,
    );
    // The first position of each digit present in the sorted tile.
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let local = (e * CUBE_DIM + UNIT_POS) as usize;
        if start + local < len {
            let d = digit_of(keys[local], shift, blueprint);
            if local == 0 {
                starts[d as usize] = 0u32;
            } else if digit_of(keys[local - 1], shift, blueprint) != d {
                starts[d as usize] = local as u32;
            }
        }
    }
    sync_cube();
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let local = (e * CUBE_DIM + UNIT_POS) as usize;
        if start + local < len {
            let key = keys[local];
            let d = digit_of(key, shift, blueprint) as usize;
            let first = offsets[(row * digits + d) * tiles_per_row + part] as usize;
            let slot = row_base + first + local - starts[d] as usize;
            radix_out[slot] = key;
            positions_out[slot] = positions[local];
        }
    }
}

/// The outputs of a sorted row: the input key at each sorted position (bit for bit) and the
/// position itself.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_kernel<K: Numeric, I: Numeric>(
    keys: &[K],
    positions: &[u32],
    keys_out: &mut [K],
    indices_out: &mut [I],
    len: usize,
    elements: usize,
    #[comptime] write_keys: bool,
    #[comptime] write_indices: bool,
    #[define(K, I)] _dtypes: [ElemType; 2],
) {
    let index = linear_cube_index() * CUBE_DIM as usize + UNIT_POS as usize;
    if index >= elements {
        terminate!();
    }
    let position = positions[index];
    if write_keys {
        keys_out[index] = keys[(index / len) * len + position as usize];
    }
    if write_indices {
        indices_out[index] = I::cast_from(position);
    }
}

/// A whole row sorted by one cube: radix keys and positions in shared memory, one-bit splits
/// over all 32 bits, then the outputs written in sorted order.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sort_in_cube_kernel<K: Numeric, I: Numeric>(
    keys: &[K],
    keys_out: &mut [K],
    indices_out: &mut [I],
    len: usize,
    rows: usize,
    #[comptime] kind: KeyKind,
    #[comptime] descending: bool,
    #[comptime] write_keys: bool,
    #[comptime] write_indices: bool,
    #[comptime] blueprint: SortBlueprint,
    #[define(K, I)] _dtypes: [ElemType; 2],
) {
    let row = linear_cube_index();
    if row >= rows {
        terminate!();
    }
    let row_base = row * len;
    let mut radix = Shared::<[u32]>::new_slice(comptime!(blueprint.tile()));
    let mut positions = Shared::<[u32]>::new_slice(comptime!(blueprint.tile()));
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let local = (e * CUBE_DIM + UNIT_POS) as usize;
        if local < len {
            radix[local] = radix_key::<K>(keys[row_base + local], kind, descending);
        } else {
            radix[local] = 0xFFFF_FFFFu32;
        }
        positions[local] = local as u32;
    }
    sync_cube();
    sort_by_bits(&mut radix, &mut positions, 0u32, 32u32, blueprint);
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let local = (e * CUBE_DIM + UNIT_POS) as usize;
        if local < len {
            let position = positions[local];
            if write_keys {
                keys_out[row_base + local] = keys[row_base + position as usize];
            }
            if write_indices {
                indices_out[row_base + local] = I::cast_from(position);
            }
        }
    }
}
