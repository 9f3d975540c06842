//! A cube's digit bins (shared-memory counters, one per digit value), counted by digit. The
//! sort's LSD histograms clear and fill bins of its `radix_bits`; the top-k's selects run
//! digits from the top of the key, one [`select_digit()`](super::select::select_digit()) per
//! digit ([`super::select`]), whether the bins were
//! counted by one cube over a whole row ([`SELECT_BITS`]-bit digits) or summed over many cubes
//! (the digits of [`wide_select_digits`]). A digit's width is comptime everywhere here.

use cubecl::prelude::*;

/// Bits of a select digit in one-cube selects (the row cube, the minima bound's cube).
pub const SELECT_BITS: u32 = 8;
/// Bins of a select digit in one-cube selects.
pub const SELECT_DIGITS: usize = 1 << SELECT_BITS;
/// Widest digit of the device-wide select ([`wide_select_digits`]).
pub const WIDE_SELECT_BITS: u32 = 11;
/// Bins of the widest device-wide select digit.
pub const WIDE_SELECT_DIGITS: usize = 1 << WIDE_SELECT_BITS;

/// Rows at least this long take 11-bit digits in the device-wide select
/// ([`wide_select_digits`]); shorter ones 8-bit digits, whose per-row histograms are an eighth
/// the size (many short rows forced device-wide would otherwise hold 8 KiB of bins a row).
pub const WIDE_SELECT_MIN_LEN: usize = 1 << 16;

/// The device-wide select's digits of a `key_bits`-bit radix key in rows of `len` keys, most
/// significant first, as `(shift, bits)`: 32-bit keys of rows of [`WIDE_SELECT_MIN_LEN`] or
/// more in three digits of 11, 11 and 10 bits, the others in 8-bit digits. Wide first digits
/// matter for floats: the top 8 bits of a float's key are the sign and 7 exponent bits, so
/// half of the values of `[-1, 1)` share one 8-bit digit (a quarter in the direction asked)
/// and are appended as the next pass's candidates; 11 bits add two mantissa bits, and three
/// passes do what four did.
pub fn wide_select_digits(key_bits: u32, len: usize) -> Vec<(u32, u32)> {
    let width = if key_bits == 32 && len >= WIDE_SELECT_MIN_LEN {
        WIDE_SELECT_BITS
    } else {
        SELECT_BITS
    };
    // From the top; the last digit takes what is left (10 bits after two of 11).
    let mut digits = Vec::new();
    let mut top = key_bits;
    while top > 0 {
        let bits = width.min(top);
        top -= bits;
        digits.push((top, bits));
    }
    digits
}

/// Bins of a row's histogram for `digits` (a schedule of [`wide_select_digits`]): its widest
/// digit's.
pub fn select_bins(digits: &[(u32, u32)]) -> usize {
    1 << digits
        .iter()
        .map(|&(_, bits)| bits)
        .max()
        .unwrap_or(SELECT_BITS)
}

/// Zeroes the first `digits` bins (no synchronisation: the caller syncs before counting).
#[cube]
pub fn clear_bins(bins: &Shared<[Atomic<u32>]>, #[comptime] digits: usize) {
    let mut d = UNIT_POS as usize;
    while d < digits {
        bins[d].store(0u32);
        d += CUBE_DIM as usize;
    }
}

/// Counts one key into bin `bin` of bins kept in `parts` copies side by side (`bin * parts +
/// copy`, the unit's copy `UNIT_POS % parts`): where many keys share a bin (a digit of keys in
/// a narrow range), a plane's atomics spread over `parts` words instead of serialising on one
/// (CUB's histogram parts). `parts = 1` is one bin a digit.
#[cube]
pub fn count_into_copy(bins: &Shared<[Atomic<u32>]>, bin: usize, #[comptime] parts: u32) {
    bins[bin * parts as usize + (UNIT_POS % parts) as usize].fetch_add(1u32);
}

/// Bin `bin`'s count summed over its `parts` copies ([`count_into_copy()`]), after the
/// synchronisation that ends the counting.
#[cube]
pub fn copies_sum(bins: &Shared<[Atomic<u32>]>, bin: usize, #[comptime] parts: u32) -> u32 {
    let mut count = 0u32;
    #[unroll]
    for copy in 0..parts {
        count += bins[bin * parts as usize + copy as usize].load();
    }
    count
}

/// The `bits`-bit select digit of `key` at `shift`.
#[cube]
pub fn digit_at(key: u32, shift: u32, #[comptime] bits: u32) -> u32 {
    (key >> shift) & comptime!((1u32 << bits) - 1)
}

/// Whether `key` has the digits of `prefix` above the `bits`-bit select digit at `shift`
/// (every key does at the top digit of a 32-bit key: the shift by 32 is split in two, so it
/// is defined).
#[cube]
pub fn in_prefix(key: u32, prefix: u32, shift: u32, #[comptime] bits: u32) -> bool {
    (((key ^ prefix) >> shift) >> bits) == 0u32
}

/// Counts the `bits`-bit select digits at `shift` of the unit's keys flagged in `hits` (bit
/// `e` for `held[e]`) into the cube's bins. With planes, a tile whose keys are all hits with one
/// digit across the whole plane (all-equal and low-entropy rows, where every add would hit
/// one bin) is one add for the plane: one broadcast and one vote per tile. Otherwise every
/// key adds one. (Merging equal digits key by key, by ballot rounds, cost more than the
/// conflicts it saved on random float keys: 1.65 -> 2.50 ms at [2^28] k = 1000 with one
/// round on the H200, `bench/results/h200/topk/notes.md`.) Every unit of the plane must call
/// it. Without planes no plane builtin appears in the kernel at all (a device without
/// subgroups refuses a shader that names one, even in a branch never taken).
#[cube]
pub fn count_digits(
    bins: &Shared<[Atomic<u32>]>,
    held: &Array<u32>,
    hits: u32,
    shift: u32,
    #[comptime] bits: u32,
    #[comptime] elements_per_unit: u32,
    #[comptime] use_planes: bool,
) {
    if use_planes {
        let lead = plane_broadcast(digit_at(held[0], shift, bits), 0u32);
        let mut same = hits == comptime!(((1u64 << elements_per_unit) - 1) as u32);
        #[unroll]
        for e in 0..elements_per_unit {
            same = same && digit_at(held[e as usize], shift, bits) == lead;
        }
        // Uniform per plane.
        if plane_all(same) {
            if UNIT_POS_PLANE == 0 {
                bins[lead as usize].fetch_add(PLANE_DIM * elements_per_unit);
            }
        } else {
            add_digits(bins, held, hits, shift, bits, elements_per_unit);
        }
    } else {
        add_digits(bins, held, hits, shift, bits, elements_per_unit);
    }
}

/// One add per key flagged in `hits`, at its `bits`-bit select digit at `shift`.
#[cube]
fn add_digits(
    bins: &Shared<[Atomic<u32>]>,
    held: &Array<u32>,
    hits: u32,
    shift: u32,
    #[comptime] bits: u32,
    #[comptime] elements_per_unit: u32,
) {
    #[unroll]
    for e in 0..elements_per_unit {
        if (hits >> e) & 1u32 == 1u32 {
            bins[digit_at(held[e as usize], shift, bits) as usize].fetch_add(1u32);
        }
    }
}
