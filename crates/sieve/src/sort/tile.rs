//! What one cube does with one tile of keys in shared memory: a stable sort by a range of
//! radix bits, as one-bit splits ranked by cube-wide scans (the course's split, done with a
//! scan), and the first position of each digit in the sorted tile.

use cubecl::prelude::*;

use crate::common::cube::cube_exclusive_sum;

/// Compile-time shape of a sort tile: only what changes control flow or array sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SortBlueprint {
    pub units: u32,
    /// Keys per unit; a tile is `units * elements_per_unit` keys.
    pub elements_per_unit: u32,
    pub use_planes: bool,
    /// Bits per digit (LSD passes; `radix_bits` of the tuning).
    pub radix_bits: u32,
}

impl SortBlueprint {
    pub fn tile(&self) -> usize {
        self.units as usize * self.elements_per_unit as usize
    }

    pub fn digits(&self) -> usize {
        1usize << self.radix_bits
    }
}

/// Stable sort of the tile's `(key, position)` pairs in shared memory by bits
/// `first_bit .. first_bit + bit_count` of the keys, least significant first: for each bit,
/// every unit counts the zeros of its `elements_per_unit` consecutive keys, a cube-wide
/// exclusive scan turns the counts into each key's destination (zeros first, both halves in
/// order), and the keys move. Every unit must call it.
#[cube]
pub fn sort_by_bits(
    keys: &mut Shared<[u32]>,
    positions: &mut Shared<[u32]>,
    first_bit: u32,
    bit_count: u32,
    #[comptime] blueprint: SortBlueprint,
) {
    let epu = blueprint.elements_per_unit;
    let base = UNIT_POS * epu;
    let mut held_keys = Array::<u32>::new(epu as usize);
    let mut held_positions = Array::<u32>::new(epu as usize);
    for step in 0..bit_count {
        let bit = first_bit + step;
        let mut zeros = 0u32;
        #[unroll]
        for e in 0..epu {
            let key = keys[(base + e) as usize];
            held_keys[e as usize] = key;
            held_positions[e as usize] = positions[(base + e) as usize];
            zeros += 1u32 - ((key >> bit) & 1u32);
        }
        let prefix = cube_exclusive_sum(zeros, blueprint.units, blueprint.use_planes);
        // Everyone has read its keys (the scan synchronised the cube); now they move.
        let mut zeros_before = prefix.before;
        #[unroll]
        for e in 0..epu {
            let key = held_keys[e as usize];
            let one = (key >> bit) & 1u32;
            let index = base + e;
            let destination = if one == 0u32 {
                zeros_before
            } else {
                prefix.total + index - zeros_before
            };
            keys[destination as usize] = key;
            positions[destination as usize] = held_positions[e as usize];
            zeros_before += 1u32 - one;
        }
        sync_cube();
    }
}

/// The digit (`radix_bits` bits from `shift`) of a radix key.
#[cube]
pub fn digit_of(key: u32, shift: u32, #[comptime] blueprint: SortBlueprint) -> u32 {
    (key >> shift) & comptime!((1u32 << blueprint.radix_bits) - 1)
}
