//! The most-significant-digit select: the key of a given rank, found digit by digit from the
//! top of the key, each digit picked from a cube's bins ([`select_digit()`]). One routine
//! serves every shape: [`cube_select()`] runs the whole select in one cube, over a row's keys
//! (the one-cube-per-row top-k) or over keys staged in shared memory (the minima bound, the
//! row cube's sampled bound); the device-wide top-k runs the same steps across launches (its
//! histogram passes count, its digit kernel picks with [`select_digit()`] and skips shared
//! digits with [`shared_from()`]).

use cubecl::prelude::*;

use super::digits::{SELECT_BITS, SELECT_DIGITS, clear_bins, digit_at, in_prefix};
use super::tile::{KeyRead, RadixBlueprint, count_tile_digits, load_tile_keys};
use crate::common::cube::{U32Range, cube_exclusive_sum, cube_range};

/// An MSB-first digit select in progress: the digits chosen so far (in place, the bits below
/// them zero) and the rank (1-based) the wanted key has among the keys that share them.
#[derive(CubeType, Clone, Copy)]
pub struct DigitSelect {
    pub prefix: u32,
    pub need: u32,
}

/// What [`select_digit()`] chose: the digit, and how many counted keys have it.
#[derive(CubeType, Clone, Copy)]
pub struct DigitChoice {
    pub digit: u32,
    pub count: u32,
}

/// One digit of a select: the `bits`-bit digit at `shift` whose bin holds the `select.need`-th of
/// the keys counted in `bins` (which must hold at least that many) joins `select.prefix`, and
/// `need` drops by the keys of smaller digits. Each unit sums a run of consecutive bins, a
/// cube-wide exclusive sum places the runs, and the unit whose run holds the key publishes it. Any
/// power of two of units; every unit must call it (after the bins are counted and synchronised) and
/// gets the same choice.
#[cube]
pub fn select_digit(
    bins: &Shared<[Atomic<u32>]>,
    select: &mut DigitSelect,
    shift: u32,
    #[comptime] bits: u32,
    #[comptime] units: u32,
    #[comptime] use_planes: bool,
) -> DigitChoice {
    let digits = comptime!(1usize << bits);
    let per_unit = comptime!(digits.div_ceil(units as usize) as u32);
    let first = UNIT_POS * per_unit;
    let mut run = 0u32;
    #[unroll]
    for j in 0..per_unit {
        let digit = (first + j) as usize;
        if digit < digits {
            run += bins[digit].load();
        }
    }
    let need = select.need;
    let placed = cube_exclusive_sum(run, units, use_planes);
    let mut choice = Shared::<[u32]>::new_slice(3usize);
    let mut before = placed.before;
    #[unroll]
    for j in 0..per_unit {
        let digit = (first + j) as usize;
        if digit < digits {
            let count = bins[digit].load();
            if before < need && need <= before + count {
                choice[0] = digit as u32;
                choice[1] = before;
                choice[2] = count;
            }
            before += count;
        }
    }
    sync_cube();
    select.prefix |= choice[0] << shift;
    select.need = need - choice[1];
    DigitChoice {
        digit: choice[0],
        count: choice[2],
    }
}

/// The lowest bit from which `min` and `max` (and so every key between them) agree: a select
/// digit at or above it is `min`'s, and needs no counting.
#[cube]
pub fn shared_from(min: u32, max: u32) -> u32 {
    32u32 - u32::leading_zeros(min ^ max)
}

/// The `bits`-bit select digit at `shift` of `min`, in place (the other bits zero): the digit
/// of a row whose keys all share it from [`shared_from()`] up, to be ored into its prefix.
#[cube]
pub fn shared_digit(min: u32, shift: u32, #[comptime] bits: u32) -> u32 {
    digit_at(min, shift, bits) << shift
}

/// Which keys a [`cube_select()`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CubeKeys {
    /// A row of `len` keys from `row_base`, swept tile by tile for each digit (the sweeps
    /// after the first find the row in cache).
    Row,
    /// The first `len` keys of the cube's `staged` array in shared memory (one key per unit
    /// for the minima bound; a sample, or the keys under a bound, for the row cube).
    Staged,
}

/// The `k`-th smallest (1-based, at most the keys counted) radix key of `keys`, by one cube:
/// 8-bit digits from the top of the key's bits, each counted into the cube's `bins` (at least
/// [`SELECT_DIGITS`]) from the keys that match the digits chosen so far, then picked by
/// [`select_digit()`]. The first count also takes the keys' range: a digit every key shares
/// (the range agrees on it and on every bit above) is the smallest key's and is not counted, so
/// all-equal and low-entropy keys cost one count. Returns the select: `prefix` is the key,
/// `need` its rank among the keys equal to it (`k - need` keys lie below it). Every unit must
/// call it and gets the same result; it returns after a barrier that follows its last read of
/// `staged`, so the caller may overwrite the staged keys at once.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn cube_select<K: Numeric>(
    values: &[K],
    staged: &Shared<[u32]>,
    bins: &Shared<[Atomic<u32>]>,
    row_base: usize,
    len: usize,
    k: u32,
    #[comptime] keys: CubeKeys,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
) -> DigitSelect {
    let tile_keys = comptime!(blueprint.tile());
    let tiles = len.div_ceil(tile_keys);
    let mut select = DigitSelect {
        prefix: 0u32,
        need: k,
    };
    let mut smallest = 0u32;
    // Bits from `common_from` up are the same in every key (32: not known yet).
    let mut common_from = 32u32;
    // Digits from the top of the key's bits (the bits above are zero in every radix key).
    let key_bits = comptime!(read.kind.key_bits());
    let mut held = Array::<u32>::new(blueprint.elements_per_unit as usize);
    for pass in 0..comptime!(key_bits / SELECT_BITS) {
        let shift = comptime!(key_bits - SELECT_BITS) - SELECT_BITS * pass;
        // Uniform per cube (from the cube-wide range).
        if shift >= common_from {
            select.prefix |= shared_digit(smallest, shift, SELECT_BITS);
        } else {
            clear_bins(bins, SELECT_DIGITS);
            sync_cube();
            let mut range = U32Range {
                min: 0xFFFF_FFFFu32,
                max: 0u32,
            };
            if comptime!(keys == CubeKeys::Row) {
                for tile in 0..tiles {
                    let start = tile * tile_keys;
                    let valid = load_tile_keys::<K>(
                        values, &mut held, row_base, start, len, read, blueprint,
                    );
                    let hits = count_tile_digits(
                        bins,
                        &held,
                        valid,
                        select.prefix,
                        shift,
                        SELECT_BITS,
                        blueprint,
                    );
                    range.min = min(range.min, hits.range.min);
                    range.max = max(range.max, hits.range.max);
                }
            } else {
                let mut j = UNIT_POS as usize;
                while j < len {
                    let key = staged[j];
                    if in_prefix(key, select.prefix, shift, SELECT_BITS) {
                        bins[digit_at(key, shift, SELECT_BITS) as usize].fetch_add(1u32);
                        range.min = min(range.min, key);
                        range.max = max(range.max, key);
                    }
                    j += CUBE_DIM as usize;
                }
            }
            if pass == 0u32 {
                let all = cube_range(range, blueprint.use_planes);
                smallest = all.min;
                common_from = shared_from(all.min, all.max);
            }
            sync_cube();
            select_digit(
                bins,
                &mut select,
                shift,
                SELECT_BITS,
                blueprint.units,
                blueprint.use_planes,
            );
        }
    }
    select
}
