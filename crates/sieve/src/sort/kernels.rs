//! Kernel entry points of the sort family: thin `#[cube]` functions over [`super::tile`] and
//! [`super::keys`]. LSD kernels work on tiles (`tile t` is tile `t % tiles_per_row` of row
//! `t / tiles_per_row`), elementwise kernels on one unit per element, the in-cube sort on one
//! cube per row.
//!
//! Every kernel here keeps the rules of `docs/ARCHITECTURE.md` ("Rules every kernel keeps"):
//! every unit reaches every `sync_cube` and plane operation on every path; a nest of
//! `#[unroll]` loops stays within [`crate::common::UNROLL_BODIES`] bodies; `PLANE_DIM`, never
//! 32; `address_type = "dynamic"`, with 64-bit addresses only where a launch needs them.

use cubecl::prelude::*;

use super::tile::{SortBlueprint, digit_of, held_index, rank_scratch, rank_tile};
use crate::common::cube::{cube_exclusive_sum, spine_exclusive_scan};
use crate::common::fold::Fold;
use crate::common::grid::{linear_cube_index, linear_unit_index};
use crate::common::lookback::{digit_prefix, publish_digit_count, take_tile_number_at};
use crate::radix::digits::{clear_bins, copies_sum, count_into_copy};
use crate::radix::keys::{KeyKind, f32_needs_full_key, plain_f32_key, radix_key, wide_radix_word};

/// Where an LSD pass's positions (each key's index in its input row) come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Positions {
    /// Keys only: no positions ride along.
    None,
    /// The first pass: the key's own index.
    FromIndex,
    /// Read beside the keys.
    Carried,
}

/// Compile-time shape of one LSD pass: how the carried words map to radix keys, and what
/// rides along and gets written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PassConfig {
    /// How a carried word becomes a radix key (`U32` ascending: the word is one already).
    pub kind: KeyKind,
    pub descending: bool,
    pub positions: Positions,
    /// Write the keys (off for a last pass whose caller wants only the permutation).
    pub write_keys: bool,
    /// Hold each key (and carried position) in registers from the load to the staging; else
    /// hold only its digit through the ranking and read the key again to stage it (fewer
    /// registers through the ranking, a second read that the tile's first one left cached).
    pub hold_keys: bool,
    /// f32 keys whose sort learns whether they hold a -0.0 or NaN
    /// ([`SortTuning::plain_float_keys`](super::SortTuning::plain_float_keys)): its first read
    /// sets the specials word, its later passes take the plain map where it is clear.
    pub flags_specials: bool,
    /// The keys hold no -0.0 and no NaN (learnt at run time: the sort's specials word,
    /// [`keys_plain`]): a key is then its float's sign flip alone, as [`radix_key`]'s order
    /// agrees with it on every other float.
    pub plain: bool,
}

impl PassConfig {
    /// This pass over keys known to hold no -0.0 or NaN, where that changes the key map (f32).
    pub(crate) fn plain_twin(self) -> Option<PassConfig> {
        (self.flags_specials && self.kind == KeyKind::F32 && !self.plain).then_some(PassConfig {
            plain: true,
            ..self
        })
    }
}

/// Whether the sort's specials word says no key is -0.0 or NaN. The word (`specials[0]`,
/// zeroed before the sort) is what its first read of the keys learns for the later passes:
/// any cube that meets an f32 -0.0 or NaN sets it ([`publish_specials`]); where none did, the
/// passes map keys by the sign flip alone ([`PassConfig::plain`]), `radix_key`'s order of
/// every other float in fewer instructions a key. Always false where the pass has no plain
/// twin (the word is then never read).
#[cube]
fn keys_plain(specials: &[u32], #[comptime] pass: PassConfig) -> bool {
    let mut plain = false;
    if comptime!(pass.plain_twin().is_some()) {
        plain = specials[0] == 0u32;
    }
    plain
}

/// Notes a unit's finding of a -0.0 or NaN key (`found`) in the sort's specials word: one
/// shared word the units set, one global store a cube that met any, after the
/// synchronisation that ends the counting (`flag` was zeroed before it; units set it by
/// atomic stores, so their like writes are no race). Every unit calls it.
#[cube]
fn publish_specials(specials: &[Atomic<u32>], flag: &Shared<[Atomic<u32>]>) {
    if UNIT_POS == 0 && flag[0].load() != 0u32 {
        specials[0].store(1u32);
    }
}

/// The tile's first index, its row's first element and its number of keys.
#[derive(CubeType, Clone, Copy)]
pub struct TileSpan {
    pub row: usize,
    pub part: usize,
    /// First element of the tile in the flat buffer.
    pub base: usize,
    /// Index of the tile's first key in its row.
    pub start: u32,
    pub len: u32,
}

#[cube]
fn tile_span(
    tile: usize,
    len: usize,
    tiles_per_row: usize,
    #[comptime] blueprint: SortBlueprint,
) -> TileSpan {
    let row = tile / tiles_per_row;
    let part = tile % tiles_per_row;
    let tile = comptime!(blueprint.tile());
    let start = part * tile;
    let rest = len - start;
    TileSpan {
        row,
        part,
        base: row * len + start,
        start: start as u32,
        len: min(rest, tile) as u32,
    }
}

/// The radix key of a carried word.
#[cube]
fn pass_radix(word: u32, #[comptime] pass: PassConfig) -> u32 {
    if comptime!(pass.plain) {
        plain_f32_key(word, pass.descending)
    } else {
        radix_key::<u32>(word, pass.kind, pass.descending)
    }
}

/// Radix words of the keys that do not ride through the passes as their own bits: 8- and
/// 16-bit keys (for the passes that sort them as `u32`).
#[cube(launch_unchecked, address_type = "dynamic")]
pub(crate) fn encode_kernel<K: Numeric>(
    keys: &[K],
    radix: &mut [u32],
    elements: usize,
    #[comptime] kind: KeyKind,
    #[comptime] descending: bool,
    #[define(K)] _dtype: ElemType,
) {
    let index = linear_unit_index();
    if index >= elements {
        terminate!();
    }
    radix[index] = radix_key::<K>(keys[index], kind, descending);
}

/// One radix word of 64-bit keys (i64, u64, f64), read as little-endian `u32` pairs (no
/// 64-bit arithmetic). The high word is read at the position the low-word passes gave each
/// slot.
#[cube(launch_unchecked, address_type = "dynamic")]
pub(crate) fn encode_wide_kernel(
    words: &[u32],
    positions: &[u32],
    radix: &mut [u32],
    len: usize,
    elements: usize,
    #[comptime] kind: KeyKind,
    #[comptime] high_word: bool,
    #[comptime] descending: bool,
) {
    let index = linear_unit_index();
    if index >= elements {
        terminate!();
    }
    let source = if high_word {
        (index / len) * len + positions[index] as usize
    } else {
        index
    };
    radix[index] = wide_radix_word(
        words[2 * source],
        words[2 * source + 1],
        kind,
        high_word,
        descending,
    );
}

/// LSD pass, step 1: how many keys of each tile have each digit, written digit-major per row
/// (`counts[(row * digits + digit) * tiles_per_row + part]`), so that an exclusive scan of a
/// row's counts gives each (digit, tile) its first output slot. Each digit's bin has `parts`
/// copies ([`count_into_copy`]); with `loads_first` each unit loads its keys before counting
/// them ([`SortTuning::count_loads`] above 1).
///
/// [`SortTuning::count_loads`]: super::SortTuning::count_loads
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn histogram_kernel(
    keys: &[u32],
    counts: &mut [u32],
    specials: &[Atomic<u32>],
    len: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    shift: u32,
    #[comptime] parts: u32,
    #[comptime] finds_specials: bool,
    #[comptime] loads_first: bool,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let digits = comptime!(blueprint.digits() as u32);
    let span = tile_span(tile, len, tiles_per_row, blueprint);
    let bins = Shared::<[Atomic<u32>]>::new_slice(comptime!(blueprint.digits() * parts as usize));
    clear_bins(&bins, comptime!(blueprint.digits() * parts as usize));
    let flag = Shared::<[Atomic<u32>]>::new_slice(1usize);
    if UNIT_POS == 0 {
        flag[0].store(0u32);
    }
    sync_cube();
    if comptime!(finds_specials) {
        // The first pass learns the specials word (and maps every key in full).
        if count_pass_digits(
            keys,
            &bins,
            &span,
            shift,
            parts,
            true,
            loads_first,
            pass,
            blueprint,
        ) {
            flag[0].store(1u32);
        }
    } else if comptime!(pass.plain_twin().is_some()) {
        let plain_pass = comptime!(pass.plain_twin().unwrap());
        // Uniform per cube: one read of the specials word.
        if specials[0].load() == 0u32 {
            count_pass_digits(
                keys,
                &bins,
                &span,
                shift,
                parts,
                false,
                loads_first,
                plain_pass,
                blueprint,
            );
        } else {
            count_pass_digits(
                keys,
                &bins,
                &span,
                shift,
                parts,
                false,
                loads_first,
                pass,
                blueprint,
            );
        }
    } else {
        count_pass_digits(
            keys,
            &bins,
            &span,
            shift,
            parts,
            false,
            loads_first,
            pass,
            blueprint,
        );
    }
    sync_cube();
    if comptime!(finds_specials) {
        publish_specials(specials, &flag);
    }
    let mut d = UNIT_POS;
    while d < digits {
        counts[(span.row * digits as usize + d as usize) * tiles_per_row + span.part] =
            copies_sum(&bins, d as usize, parts);
        d += CUBE_DIM;
    }
}

/// Counts the digits at `shift` of a tile's keys (unit `u` takes keys `u, u + CUBE_DIM, ...`)
/// into `bins`; with `finds`, whether one of the unit's keys is an f32 -0.0 or NaN. With
/// `loads_first` each unit loads all its keys before it counts them.
#[cube]
#[allow(clippy::too_many_arguments)]
fn count_pass_digits(
    keys: &[u32],
    bins: &Shared<[Atomic<u32>]>,
    span: &TileSpan,
    shift: u32,
    #[comptime] parts: u32,
    #[comptime] finds: bool,
    #[comptime] loads_first: bool,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) -> bool {
    let mut found = false;
    let epu = comptime!(blueprint.elements_per_unit);
    if comptime!(loads_first) {
        // Every key of the unit in flight before the first is counted.
        let mut words = Array::<u32>::new(comptime!(epu as usize));
        #[unroll]
        for e in 0..epu {
            let local = e * CUBE_DIM + UNIT_POS;
            if local < span.len {
                words[e as usize] = keys[span.base + local as usize];
            }
        }
        #[unroll]
        for e in 0..epu {
            if e * CUBE_DIM + UNIT_POS < span.len {
                found = count_pass_digit(
                    words[e as usize],
                    bins,
                    found,
                    shift,
                    parts,
                    finds,
                    pass,
                    blueprint,
                );
            }
        }
    } else {
        #[unroll]
        for e in 0..epu {
            let local = e * CUBE_DIM + UNIT_POS;
            if local < span.len {
                let word = keys[span.base + local as usize];
                found = count_pass_digit(word, bins, found, shift, parts, finds, pass, blueprint);
            }
        }
    }
    found
}

/// Counts `word`'s digit at `shift` into `bins`; with `finds`, also whether it needs the full
/// key (or-ed into `found`).
#[cube]
#[allow(clippy::too_many_arguments)]
fn count_pass_digit(
    word: u32,
    bins: &Shared<[Atomic<u32>]>,
    found: bool,
    shift: u32,
    #[comptime] parts: u32,
    #[comptime] finds: bool,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) -> bool {
    let radix = pass_radix(word, pass);
    count_into_copy(bins, digit_of(radix, shift, blueprint) as usize, parts);
    let mut needs = found;
    if comptime!(finds) {
        needs = needs || f32_needs_full_key(word);
    }
    needs
}

/// The unit's held keys of a tile ([`held_index`]), their positions and their digits at
/// `shift` (a missing key, past the row's end, gets the largest digit: see [`rank_tile`]).
#[cube]
#[allow(clippy::too_many_arguments)]
fn load_tile(
    keys_in: &[u32],
    positions_in: &[u32],
    keys: &mut Array<u32>,
    positions: &mut Array<u32>,
    digits: &mut Array<u32>,
    span: &TileSpan,
    shift: u32,
    plain: bool,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) {
    // Uniform per cube: `plain` is the sort's specials word (`keys_plain`).
    if comptime!(pass.plain_twin().is_some()) {
        let plain_pass = comptime!(pass.plain_twin().unwrap());
        if plain {
            load_tile_as(
                keys_in,
                positions_in,
                keys,
                positions,
                digits,
                span,
                shift,
                plain_pass,
                blueprint,
            );
        } else {
            load_tile_as(
                keys_in,
                positions_in,
                keys,
                positions,
                digits,
                span,
                shift,
                pass,
                blueprint,
            );
        }
    } else {
        load_tile_as(
            keys_in,
            positions_in,
            keys,
            positions,
            digits,
            span,
            shift,
            pass,
            blueprint,
        );
    }
}

/// [`load_tile`] with the pass's key map chosen.
#[cube]
#[allow(clippy::too_many_arguments)]
fn load_tile_as(
    keys_in: &[u32],
    positions_in: &[u32],
    keys: &mut Array<u32>,
    positions: &mut Array<u32>,
    digits: &mut Array<u32>,
    span: &TileSpan,
    shift: u32,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) {
    // A full tile (uniform per cube) loads without a bounds check a key.
    if span.len == comptime!(blueprint.tile() as u32) {
        load_held(
            keys_in,
            positions_in,
            keys,
            positions,
            digits,
            span,
            shift,
            true,
            pass,
            blueprint,
        );
    } else {
        load_held(
            keys_in,
            positions_in,
            keys,
            positions,
            digits,
            span,
            shift,
            false,
            pass,
            blueprint,
        );
    }
}

/// [`load_tile`] of a tile known full (`full`) or not.
#[cube]
#[allow(clippy::too_many_arguments)]
fn load_held(
    keys_in: &[u32],
    positions_in: &[u32],
    keys: &mut Array<u32>,
    positions: &mut Array<u32>,
    digits: &mut Array<u32>,
    span: &TileSpan,
    shift: u32,
    #[comptime] full: bool,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) {
    let radix = comptime!(blueprint.digits() as u32);
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let local = held_index(e, blueprint);
        let mut present = true;
        if comptime!(!full) {
            present = local < span.len;
        }
        let mut key = 0u32;
        if present {
            key = keys_in[span.base + local as usize];
        }
        let mut digit = digit_of(pass_radix(key, pass), shift, blueprint);
        if !present {
            digit = radix - 1;
        }
        digits[e as usize] = digit;
        if comptime!(pass.hold_keys) {
            keys[e as usize] = key;
            if comptime!(pass.positions == Positions::Carried) {
                // A missing key's position is staged (past the present keys) but never
                // written.
                let mut position = 0u32;
                if present {
                    position = positions_in[span.base + local as usize];
                }
                positions[e as usize] = position;
            }
        }
    }
}

/// Ranks the held keys by their digits ([`rank_tile`]); fills `digit_start` with each digit's
/// first slot in the tile and returns each held key's slot. Every unit must call it.
#[cube]
fn rank_held(
    digits: &Array<u32>,
    digit_start: &mut Shared<[u32]>,
    #[comptime] blueprint: SortBlueprint,
) -> Array<u32> {
    let mut scratch = rank_scratch(blueprint);
    rank_tile(digits, &mut scratch, digit_start, blueprint)
}

/// The ranked tile in digit order in shared memory: each held key (and its position) at its
/// slot; keys not held ([`PassConfig::hold_keys`] off) and carried positions not held are read
/// again, a first pass's positions made from the index. Readable after the next
/// synchronisation.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_ranked(
    keys_in: &[u32],
    positions_in: &[u32],
    keys: &Array<u32>,
    positions: &Array<u32>,
    slots: &Array<u32>,
    sorted_keys: &mut Shared<[u32]>,
    sorted_positions: &mut Shared<[u32]>,
    span: &TileSpan,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) {
    // Missing keys are staged too, past the present ones (never written out).
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let slot = slots[e as usize] as usize;
        let local = held_index(e, blueprint);
        if comptime!(pass.hold_keys) {
            sorted_keys[slot] = keys[e as usize];
            if comptime!(pass.positions == Positions::Carried) {
                sorted_positions[slot] = positions[e as usize];
            }
        } else {
            // Reads again only what is present.
            let present = local < span.len;
            let mut key = 0u32;
            if present {
                key = keys_in[span.base + local as usize];
            }
            sorted_keys[slot] = key;
            if comptime!(pass.positions == Positions::Carried) {
                let mut position = 0u32;
                if present {
                    position = positions_in[span.base + local as usize];
                }
                sorted_positions[slot] = position;
            }
        }
        if comptime!(pass.positions == Positions::FromIndex) {
            sorted_positions[slot] = span.start + local;
        }
    }
}

/// The staged tile out (after a synchronisation): unit `u` writes the tile's sorted keys `u,
/// u + CUBE_DIM, ...`, the key at sorted index `local` with digit `d` to its row's slot
/// `slot_base[d] + local` (`slot_base[d]`: the row slot of the digit's first key in the tile
/// less its sorted index, one shared read a key), so consecutive units write consecutive
/// slots of a digit. A full tile (uniform per cube) writes without a bounds check a key, as
/// [`load_tile`] loads.
#[cube]
#[allow(clippy::too_many_arguments)]
fn write_staged<I: Numeric>(
    sorted_keys: &Shared<[u32]>,
    sorted_positions: &Shared<[u32]>,
    slot_base: &Shared<[u32]>,
    keys_out: &mut [u32],
    positions_out: &mut [I],
    span: &TileSpan,
    len: usize,
    shift: u32,
    plain: bool,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) {
    // Uniform per cube, as in `load_tile`.
    if comptime!(pass.plain_twin().is_some()) {
        let plain_pass = comptime!(pass.plain_twin().unwrap());
        if plain {
            write_staged_as::<I>(
                sorted_keys,
                sorted_positions,
                slot_base,
                keys_out,
                positions_out,
                span,
                len,
                shift,
                plain_pass,
                blueprint,
            );
        } else {
            write_staged_as::<I>(
                sorted_keys,
                sorted_positions,
                slot_base,
                keys_out,
                positions_out,
                span,
                len,
                shift,
                pass,
                blueprint,
            );
        }
    } else {
        write_staged_as::<I>(
            sorted_keys,
            sorted_positions,
            slot_base,
            keys_out,
            positions_out,
            span,
            len,
            shift,
            pass,
            blueprint,
        );
    }
}

/// [`write_staged`] with the pass's key map chosen.
#[cube]
#[allow(clippy::too_many_arguments)]
fn write_staged_as<I: Numeric>(
    sorted_keys: &Shared<[u32]>,
    sorted_positions: &Shared<[u32]>,
    slot_base: &Shared<[u32]>,
    keys_out: &mut [u32],
    positions_out: &mut [I],
    span: &TileSpan,
    len: usize,
    shift: u32,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) {
    if span.len == comptime!(blueprint.tile() as u32) {
        write_held::<I>(
            sorted_keys,
            sorted_positions,
            slot_base,
            keys_out,
            positions_out,
            span,
            len,
            shift,
            true,
            pass,
            blueprint,
        );
    } else {
        write_held::<I>(
            sorted_keys,
            sorted_positions,
            slot_base,
            keys_out,
            positions_out,
            span,
            len,
            shift,
            false,
            pass,
            blueprint,
        );
    }
}

/// [`write_staged`] of a tile known full (`full`) or not.
#[cube]
#[allow(clippy::too_many_arguments)]
fn write_held<I: Numeric>(
    sorted_keys: &Shared<[u32]>,
    sorted_positions: &Shared<[u32]>,
    slot_base: &Shared<[u32]>,
    keys_out: &mut [u32],
    positions_out: &mut [I],
    span: &TileSpan,
    len: usize,
    shift: u32,
    #[comptime] full: bool,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) {
    let row_base = span.row * len;
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let local = e * CUBE_DIM + UNIT_POS;
        let mut present = true;
        if comptime!(!full) {
            present = local < span.len;
        }
        if present {
            let key = sorted_keys[local as usize];
            let digit = digit_of(pass_radix(key, pass), shift, blueprint) as usize;
            let slot = row_base + (slot_base[digit] + local) as usize;
            if pass.write_keys {
                keys_out[slot] = key;
            }
            if comptime!(pass.positions != Positions::None) {
                positions_out[slot] = I::cast_from(sorted_positions[local as usize]);
            }
        }
    }
}

/// Shared memory for a staged tile's positions (one word where none ride).
#[cube]
fn staging(#[comptime] pass: PassConfig, #[comptime] blueprint: SortBlueprint) -> Shared<[u32]> {
    Shared::<[u32]>::new_slice(comptime!(if pass.positions != Positions::None {
        blueprint.tile()
    } else {
        1
    }))
}

/// A tile digit's count: the next digit's start less its own (the last digit's: the present
/// keys less its start).
#[cube]
fn tile_digit_count(digit_start: &Shared<[u32]>, digit: u32, present: u32, radix: u32) -> u32 {
    let end = if digit + 1 < radix {
        digit_start[(digit + 1) as usize]
    } else {
        present
    };
    end - digit_start[digit as usize]
}

/// Where an `Lsd` pass's tile finds each digit's first slot in its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TileOffsets {
    /// Read from the scan of the pass's per-tile digit counts (a scan launch between the
    /// count and the scatter).
    Scanned,
    /// Summed by the tile's own cube from its row's per-tile counts ([`summed_slot_base`]):
    /// no scan launch, for rows of few tiles (each cube reads its row's whole count table).
    Summed,
}

/// LSD pass, step 2: every tile ranks its keys by the pass's digit, puts them in digit order
/// in shared memory, and writes each to its (digit, tile)'s first slot plus its rank within
/// the digit. `offsets` holds step 1's counts scanned, or (`TileOffsets::Summed`) the counts
/// themselves.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter_kernel<I: Numeric>(
    keys_in: &[u32],
    positions_in: &[u32],
    keys_out: &mut [u32],
    positions_out: &mut [I],
    offsets: &[u32],
    specials: &[u32],
    len: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    shift: u32,
    #[comptime] source: TileOffsets,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
    #[define(I)] _index: ElemType,
) {
    let tile = linear_cube_index();
    if tile >= total_tiles {
        terminate!();
    }
    let plain = keys_plain(specials, pass);
    let radix = comptime!(blueprint.digits() as u32);
    let epu = blueprint.elements_per_unit;
    let span = tile_span(tile, len, tiles_per_row, blueprint);
    let mut keys = Array::<u32>::new(epu as usize);
    let mut positions = Array::<u32>::new(epu as usize);
    let mut digits = Array::<u32>::new(epu as usize);
    load_tile(
        keys_in,
        positions_in,
        &mut keys,
        &mut positions,
        &mut digits,
        &span,
        shift,
        plain,
        pass,
        blueprint,
    );
    let mut digit_start = Shared::<[u32]>::new_slice(comptime!(blueprint.digits()));
    let slots = rank_held(&digits, &mut digit_start, blueprint);
    let mut slot_base = Shared::<[u32]>::new_slice(comptime!(blueprint.digits()));
    if comptime!(source == TileOffsets::Scanned) {
        let mut d = UNIT_POS;
        while d < radix {
            let first =
                offsets[(span.row * radix as usize + d as usize) * tiles_per_row + span.part];
            slot_base[d as usize] = first - digit_start[d as usize];
            d += CUBE_DIM;
        }
    } else {
        summed_slot_base(
            offsets,
            &digit_start,
            &mut slot_base,
            &span,
            tiles_per_row,
            blueprint,
        );
    }
    let mut sorted_keys = Shared::<[u32]>::new_slice(comptime!(blueprint.tile()));
    let mut sorted_positions = staging(pass, blueprint);
    stage_ranked(
        keys_in,
        positions_in,
        &keys,
        &positions,
        &slots,
        &mut sorted_keys,
        &mut sorted_positions,
        &span,
        pass,
        blueprint,
    );
    sync_cube();
    write_staged::<I>(
        &sorted_keys,
        &sorted_positions,
        &slot_base,
        keys_out,
        positions_out,
        &span,
        len,
        shift,
        plain,
        pass,
        blueprint,
    );
}

/// A tile's slot bases (each digit's first slot in its row, less the digit's start within
/// the tile) from its row's per-tile digit counts (`counts`, `[rows, digits, tiles_per_row]`,
/// not scanned): a digit's first slot is the row's count of the smaller digits plus the
/// digit's count in the tiles before this one. Each unit sums the counts of its digits (a
/// row's table is read by every cube of the row, so rows of few tiles only), then one scan
/// over the digits, in `slot_base` itself. Every unit must call it; `slot_base` is readable
/// after the next synchronisation.
#[cube]
fn summed_slot_base(
    counts: &[u32],
    digit_start: &Shared<[u32]>,
    slot_base: &mut Shared<[u32]>,
    span: &TileSpan,
    tiles_per_row: usize,
    #[comptime] blueprint: SortBlueprint,
) {
    let radix = comptime!(blueprint.digits() as u32);
    let per_unit = comptime!(radix.div_ceil(blueprint.units));
    let mut earlier = Array::<u32>::new(per_unit as usize);
    #[unroll]
    for k in 0..per_unit {
        let digit = UNIT_POS + k * blueprint.units;
        let mut before = 0u32;
        if digit < radix {
            let first = (span.row * radix as usize + digit as usize) * tiles_per_row;
            for t in 0..span.part {
                before += counts[first + t];
            }
            let mut total = before;
            for t in span.part..tiles_per_row {
                total += counts[first + t];
            }
            slot_base[digit as usize] = total;
        }
        earlier[k as usize] = before;
    }
    // Synchronises before and after: every total is in, then every start is out.
    spine_exclusive_scan::<u32>(slot_base, radix, Fold::COUNT, blueprint.use_planes);
    #[unroll]
    for k in 0..per_unit {
        let digit = UNIT_POS + k * blueprint.units;
        if digit < radix {
            slot_base[digit as usize] =
                slot_base[digit as usize] + earlier[k as usize] - digit_start[digit as usize];
        }
    }
}

/// Onesweep, step 1: every pass's digit counts of every row in one read of the keys (`counts`,
/// `[rows, passes, digits]` as `(row * passes + pass) * digits + digit`, zeroed before), each
/// cube counting `chunk_tiles` tiles of one row into shared bins and adding its nonzero bins to
/// the row's. The keys move between passes but stay the same multiset, so one read of the
/// input gives every pass's counts. Each (pass, digit) bin has `parts` copies
/// ([`count_into_copy`]): the top digits of keys in a narrow range are shared by most keys.
/// Each unit loads `loads` keys before it counts them ([`SortTuning::count_loads`]).
///
/// [`SortTuning::count_loads`]: super::SortTuning::count_loads
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn digit_counts_kernel(
    keys: &[u32],
    counts: &[Atomic<u32>],
    specials: &[Atomic<u32>],
    len: usize,
    chunks_per_row: usize,
    total_chunks: usize,
    #[comptime] passes: u32,
    #[comptime] chunk_tiles: u32,
    #[comptime] parts: u32,
    #[comptime] loads: u32,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) {
    let chunk = linear_cube_index();
    if chunk >= total_chunks {
        terminate!();
    }
    let bins_len = comptime!(passes as usize * blueprint.digits());
    let row = chunk / chunks_per_row;
    let start = (chunk % chunks_per_row) * comptime!(chunk_tiles as usize * blueprint.tile());
    let end = min(
        len,
        start + comptime!(chunk_tiles as usize * blueprint.tile()),
    );
    let bins = Shared::<[Atomic<u32>]>::new_slice(comptime!(bins_len * parts as usize));
    clear_bins(&bins, comptime!(bins_len * parts as usize));
    let flag = Shared::<[Atomic<u32>]>::new_slice(1usize);
    if UNIT_POS == 0 {
        flag[0].store(0u32);
    }
    sync_cube();
    let mut found = false;
    let stride = CUBE_DIM as usize;
    let batch = comptime!(loads as usize) * stride;
    let mut local = start + UNIT_POS as usize;
    // Whole batches: `loads` keys a unit in flight before the first of them is counted.
    while local + batch - stride < end {
        let mut words = Array::<u32>::new(comptime!(loads as usize));
        #[unroll]
        for b in 0..loads {
            words[b as usize] = keys[row * len + local + b as usize * stride];
        }
        #[unroll]
        for b in 0..loads {
            found = count_every_pass(
                words[b as usize],
                &bins,
                found,
                passes,
                parts,
                pass,
                blueprint,
            );
        }
        local += batch;
    }
    while local < end {
        let word = keys[row * len + local];
        found = count_every_pass(word, &bins, found, passes, parts, pass, blueprint);
        local += stride;
    }
    if found {
        flag[0].store(1u32);
    }
    sync_cube();
    if comptime!(pass.plain_twin().is_some()) {
        publish_specials(specials, &flag);
    }
    let mut i = UNIT_POS as usize;
    while i < bins_len {
        let count = copies_sum(&bins, i, parts);
        if count != 0u32 {
            counts[row * bins_len + i].fetch_add(count);
        }
        i += CUBE_DIM as usize;
    }
}

/// Counts `word`'s digit of every pass into the counting pass's bins; where the passes have a
/// plain twin, also whether `word` needs the full key (`found` or-ed in: this read learns the
/// sort's specials word).
#[cube]
fn count_every_pass(
    word: u32,
    bins: &Shared<[Atomic<u32>]>,
    found: bool,
    #[comptime] passes: u32,
    #[comptime] parts: u32,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
) -> bool {
    let radix = pass_radix(word, pass);
    #[unroll]
    for p in 0..passes {
        let digit = digit_of(radix, p * blueprint.radix_bits, blueprint);
        count_into_copy(
            bins,
            comptime!(p as usize * blueprint.digits()) + digit as usize,
            parts,
        );
    }
    let mut needs = found;
    if comptime!(pass.plain_twin().is_some()) {
        needs = needs || f32_needs_full_key(word);
    }
    needs
}

/// Onesweep, step 2 (one per digit): every tile takes its number in start order, ranks its
/// keys by the pass's digit and learns where each digit's keys go from its predecessors
/// through a per-digit decoupled look-back ([`digit_prefix`]); a row's first tile seeds the
/// chain with the row's digit starts (the exclusive scan of step 1's counts). Then it writes
/// like [`scatter_kernel`]. Needs forward progress between cubes (the launch code gates it).
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn onesweep_kernel<I: Numeric>(
    keys_in: &[u32],
    positions_in: &[u32],
    keys_out: &mut [u32],
    positions_out: &mut [I],
    counts: &[u32],
    status: &[Atomic<u32>],
    specials: &[u32],
    len: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    shift: u32,
    #[comptime] pass_index: u32,
    #[comptime] passes: u32,
    #[comptime] pass: PassConfig,
    #[comptime] blueprint: SortBlueprint,
    #[comptime] walk_window: u32,
    #[define(I)] _index: ElemType,
) {
    // The tile counter sits past the status words.
    let tile = take_tile_number_at(status, total_tiles * comptime!(blueprint.digits()));
    if tile >= total_tiles {
        terminate!();
    }
    let plain = keys_plain(specials, pass);
    let radix = comptime!(blueprint.digits() as u32);
    let epu = blueprint.elements_per_unit;
    let span = tile_span(tile, len, tiles_per_row, blueprint);
    let mut keys = Array::<u32>::new(epu as usize);
    let mut positions = Array::<u32>::new(epu as usize);
    let mut digits = Array::<u32>::new(epu as usize);
    load_tile(
        keys_in,
        positions_in,
        &mut keys,
        &mut positions,
        &mut digits,
        &span,
        shift,
        plain,
        pass,
        blueprint,
    );
    let mut digit_start = Shared::<[u32]>::new_slice(comptime!(blueprint.digits()));
    let slots = rank_held(&digits, &mut digit_start, blueprint);
    // Each digit's row start (a row's first tile), then its slot base (`write_staged`): one
    // array for both, as their lifetimes do not overlap.
    let mut digit_slots = Shared::<[u32]>::new_slice(comptime!(blueprint.digits()));
    // Uniform per cube: a row's first tile seeds each digit's chain with the digit's start.
    if span.part == 0 {
        let row_counts = (span.row * passes as usize + pass_index as usize) * radix as usize;
        row_digit_starts(counts, row_counts, &mut digit_slots, blueprint);
    }
    sync_cube();
    // Publish every digit's count now, stage the tile, and only then walk back: by then the
    // predecessors have had the staging's time to publish their inclusive prefixes.
    let mut d = UNIT_POS;
    while d < radix {
        let count = tile_digit_count(&digit_start, d, span.len, radix);
        let seed = if span.part == 0 {
            digit_slots[d as usize]
        } else {
            0u32
        };
        publish_digit_count(status, tile, span.part, radix, d, count, seed);
        d += CUBE_DIM;
    }
    let mut sorted_keys = Shared::<[u32]>::new_slice(comptime!(blueprint.tile()));
    let mut sorted_positions = staging(pass, blueprint);
    stage_ranked(
        keys_in,
        positions_in,
        &keys,
        &positions,
        &slots,
        &mut sorted_keys,
        &mut sorted_positions,
        &span,
        pass,
        blueprint,
    );
    let mut d = UNIT_POS;
    while d < radix {
        let count = tile_digit_count(&digit_start, d, span.len, radix);
        let seed = if span.part == 0 {
            digit_slots[d as usize]
        } else {
            0u32
        };
        // From here `digit_slots` holds the digit's slot base.
        digit_slots[d as usize] =
            digit_prefix(status, tile, span.part, radix, d, count, seed, walk_window)
                - digit_start[d as usize];
        d += CUBE_DIM;
    }
    sync_cube();
    write_staged::<I>(
        &sorted_keys,
        &sorted_positions,
        &digit_slots,
        keys_out,
        positions_out,
        &span,
        len,
        shift,
        plain,
        pass,
        blueprint,
    );
}

/// The exclusive scan of a row's digit counts (`counts[row_counts + d]`) into `starts`: each
/// unit sums a run of consecutive digits, one cube scan places the runs. Every unit must call
/// it; `starts` is readable after the next synchronisation.
#[cube]
fn row_digit_starts(
    counts: &[u32],
    row_counts: usize,
    starts: &mut Shared<[u32]>,
    #[comptime] blueprint: SortBlueprint,
) {
    let radix = comptime!(blueprint.digits() as u32);
    let per_unit = comptime!((1u32 << blueprint.radix_bits).div_ceil(blueprint.units));
    let mut run = 0u32;
    #[unroll]
    for k in 0..per_unit {
        let digit = UNIT_POS * per_unit + k;
        if digit < radix {
            run += counts[row_counts + digit as usize];
        }
    }
    let prefix = cube_exclusive_sum(run, blueprint.units, blueprint.use_planes);
    let mut start = prefix.before;
    #[unroll]
    for k in 0..per_unit {
        let digit = UNIT_POS * per_unit + k;
        if digit < radix {
            starts[digit as usize] = start;
            start += counts[row_counts + digit as usize];
        }
    }
}

/// A whole row sorted by one cube: radix keys and positions held in registers, one ranking
/// per digit ([`rank_tile`]) from the least significant, the keys reordered through shared
/// memory after each; then the outputs written in sorted order.
#[cube(launch_unchecked, address_type = "dynamic")]
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
    let epu = blueprint.elements_per_unit;
    let passes = comptime!(kind.key_bits().div_ceil(blueprint.radix_bits));
    let row_base = row * len;
    let mut radix = Array::<u32>::new(epu as usize);
    let mut positions = Array::<u32>::new(epu as usize);
    let mut digits = Array::<u32>::new(epu as usize);
    // Past the row's end, the largest key: it stays behind every real key (they come first
    // in input order, and the ranking is stable).
    #[unroll]
    for e in 0..epu {
        let local = held_index(e, blueprint);
        radix[e as usize] = if (local as usize) < len {
            radix_key::<K>(keys[row_base + local as usize], kind, descending)
        } else {
            0xFFFF_FFFFu32
        };
        positions[e as usize] = local;
    }
    let mut scratch = rank_scratch(blueprint);
    let mut digit_start = Shared::<[u32]>::new_slice(comptime!(blueprint.digits()));
    let mut sorted_radix = Shared::<[u32]>::new_slice(comptime!(blueprint.tile()));
    let mut sorted_positions = Shared::<[u32]>::new_slice(comptime!(blueprint.tile()));
    for pass in 0..passes {
        let shift = pass * blueprint.radix_bits;
        #[unroll]
        for e in 0..epu {
            digits[e as usize] = digit_of(radix[e as usize], shift, blueprint);
        }
        let slots = rank_tile(&digits, &mut scratch, &mut digit_start, blueprint);
        #[unroll]
        for e in 0..epu {
            let slot = slots[e as usize] as usize;
            sorted_radix[slot] = radix[e as usize];
            sorted_positions[slot] = positions[e as usize];
        }
        sync_cube();
        #[unroll]
        for e in 0..epu {
            let local = held_index(e, blueprint) as usize;
            radix[e as usize] = sorted_radix[local];
            positions[e as usize] = sorted_positions[local];
        }
        sync_cube();
    }
    #[unroll]
    for e in 0..epu {
        let local = held_index(e, blueprint) as usize;
        if local < len {
            let position = positions[e as usize];
            if write_keys {
                keys_out[row_base + local] = keys[row_base + position as usize];
            }
            if write_indices {
                indices_out[row_base + local] = I::cast_from(position);
            }
        }
    }
}
