//! A cube's tile of radix keys: its shape, the striped load of a unit's keys (one layout for
//! every select pass, a full tile without per-key checks), and the count of a unit's keys into
//! the digit bins. The top-k's passes and the MSB select ([`super::select`]) read rows through
//! these.

use cubecl::prelude::*;

use super::digits::{count_digits, in_prefix};
use super::keys::{KeyKind, radix_key};
use crate::common::cube::U32Range;

/// Compile-time shape of a tile of radix keys: only what changes control flow or array sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RadixBlueprint {
    pub units: u32,
    /// Keys per unit; a tile is `units * elements_per_unit` keys.
    pub elements_per_unit: u32,
    pub use_planes: bool,
}

impl RadixBlueprint {
    pub fn tile(&self) -> usize {
        self.units as usize * self.elements_per_unit as usize
    }
}

/// How the keys are read: the value dtype and the direction (top-k flips every bit, so
/// "largest first" becomes "smallest radix key first").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyRead {
    pub kind: KeyKind,
    pub largest: bool,
}

impl KeyRead {
    /// Keys that are radix keys already (candidate buffers): read as `u32`s, ascending.
    pub const RADIX: KeyRead = KeyRead {
        kind: KeyKind::U32,
        largest: false,
    };
}

/// The radix key of element `index` of `values`: ascending radix order = output order.
#[cube]
pub fn key_at<K: Numeric>(values: &[K], index: usize, #[comptime] read: KeyRead) -> u32 {
    radix_key::<K>(values[index], read.kind, read.largest)
}

/// Loads the unit's radix keys of one tile (striped, coalesced: key `e` at row position
/// `start + e * CUBE_DIM + UNIT_POS`) into `held`, and returns a mask with bit `e` set for
/// each key that exists (position below `len`; keys past it are 0). A full tile (all but a
/// row's last) loads with no per-key checks, so its loads issue back to back.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn load_tile_keys<K: Numeric>(
    values: &[K],
    held: &mut Array<u32>,
    row_base: usize,
    start: usize,
    len: usize,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
) -> u32 {
    load_keys::<K>(values, held, row_base, start, len, false, read, blueprint)
}

/// [`load_tile_keys()`] in the blocked layout: the unit's `elements_per_unit` consecutive keys,
/// key `e` at row position `start + UNIT_POS * elements_per_unit + e` (a warp's loads share
/// cache lines, so they cost a striped load's traffic; a unit's keys are then in index order).
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn load_tile_keys_blocked<K: Numeric>(
    values: &[K],
    held: &mut Array<u32>,
    row_base: usize,
    start: usize,
    len: usize,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
) -> u32 {
    load_keys::<K>(values, held, row_base, start, len, true, read, blueprint)
}

/// The two tile loaders, by layout.
#[cube]
#[allow(clippy::too_many_arguments)]
fn load_keys<K: Numeric>(
    values: &[K],
    held: &mut Array<u32>,
    row_base: usize,
    start: usize,
    len: usize,
    #[comptime] blocked: bool,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
) -> u32 {
    let epu = blueprint.elements_per_unit;
    let mut valid = 0u32;
    if start + comptime!(blueprint.tile()) <= len {
        #[unroll]
        for e in 0..epu {
            let index = start + tile_local(e, blocked, epu) as usize;
            held[e as usize] = key_at::<K>(values, row_base + index, read);
        }
        valid = comptime!(((1u64 << blueprint.elements_per_unit) - 1) as u32);
    } else {
        #[unroll]
        for e in 0..epu {
            let index = start + tile_local(e, blocked, epu) as usize;
            held[e as usize] = 0u32;
            if index < len {
                held[e as usize] = key_at::<K>(values, row_base + index, read);
                valid |= 1u32 << e;
            }
        }
    }
    valid
}

/// The tile position of the unit's key `e` in the striped or the blocked layout.
#[cube]
fn tile_local(e: u32, #[comptime] blocked: bool, #[comptime] epu: u32) -> u32 {
    if blocked {
        UNIT_POS * epu + e
    } else {
        e * CUBE_DIM + UNIT_POS
    }
}

/// The keys of a tile one unit counted into the digit bins.
#[derive(CubeType, Clone, Copy)]
pub struct DigitHits {
    /// Bit `e` set for each counted key `held[e]`.
    pub mask: u32,
    /// How many keys were counted.
    pub count: u32,
    /// Their range (`min > max` if none).
    pub range: U32Range,
}

/// Counts into `bins` the `bits`-bit digit at `shift` of each of the unit's held keys that
/// exists (bit `e` of `valid`) and matches `prefix` above the digit ([`in_prefix()`]; every key
/// does at the first digit, whose prefix is 0). Every unit of the plane must call it.
#[cube]
pub fn count_tile_digits(
    bins: &Shared<[Atomic<u32>]>,
    held: &Array<u32>,
    valid: u32,
    prefix: u32,
    shift: u32,
    #[comptime] bits: u32,
    #[comptime] blueprint: RadixBlueprint,
) -> DigitHits {
    let mut hits = DigitHits {
        mask: 0u32,
        count: 0u32,
        range: U32Range {
            min: 0xFFFF_FFFFu32,
            max: 0u32,
        },
    };
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let key = held[e as usize];
        if (valid >> e) & 1u32 == 1u32 && in_prefix(key, prefix, shift, bits) {
            hits.mask |= 1u32 << e;
            hits.count += 1u32;
            hits.range.min = min(hits.range.min, key);
            hits.range.max = max(hits.range.max, key);
        }
    }
    count_digits(
        bins,
        held,
        hits.mask,
        shift,
        bits,
        blueprint.elements_per_unit,
        blueprint.use_planes,
    );
    hits
}
