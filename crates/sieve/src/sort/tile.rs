//! What one cube does with one tile of keys: rank every key of the tile by a digit, stably
//! (the key's slot in the tile sorted by that digit, ties in input order), and the first slot
//! of each digit. Two rankers with the same contract:
//! - [`rank_by_planes`]: planes vote on the digit's bits (`plane_ballot`), so each key learns
//!   which lanes of its plane share its digit; per-plane digit counters in shared memory carry
//!   the count across the plane's keys, and a prefix over (digit, plane) turns the counters
//!   into slots. A handful of ballots per key and one synchronisation per tile. (Peers found
//!   by an atomic OR into a shared word per (plane, digit) instead, the match of Adinets and
//!   Merrill, measured slower on the H200 and sorted wrong through its Vulkan driver:
//!   `bench/results/h200/16-b`.)
//! - [`rank_by_splits`]: without plane operations, one-bit stable splits of (digit, index)
//!   pairs, each ranked by a cube-wide scan (the course's split), then the inverse permutation.
//!
//! Keys are *held*: each unit keeps `elements_per_unit` keys in registers, at the tile indices
//! [`held_index`] gives, and the ranker returns each held key's slot.

use cubecl::prelude::*;

use crate::common::cube::cube_exclusive_sum;

/// Compile-time shape of a sort tile: only what changes control flow or array sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SortBlueprint {
    pub units: u32,
    /// Keys per unit; a tile is `units * elements_per_unit` keys.
    pub elements_per_unit: u32,
    pub use_planes: bool,
    /// Bits per digit.
    pub radix_bits: u32,
    /// Most planes a cube of `units` can hold (`units` over the narrowest plane): sizes the
    /// per-plane digit counters.
    pub max_planes: u32,
    /// 32-bit words of a ballot that cover the widest plane.
    pub ballot_words: u32,
    /// Every plane of the cube fills its ballot words (one plane width, a multiple of 32,
    /// dividing `units`): no lane bit of a ballot is past its plane, so the peers need no mask
    /// of the plane's lanes.
    pub full_ballots: bool,
    /// The plane ranker's highest peer of a digit moves the counter, to its rank plus one, so
    /// each held key's rank is a stored value: one register a key through the prefix. Else
    /// the lowest peer adds the count, and the compiler keeps the counter's value and the
    /// peers below apart to fold both into the prefix's add: one instruction less a key, one
    /// register more. Storing wins where registers bound the cubes an SM (keys-only passes);
    /// elsewhere the instruction does (PERFORMANCE.md, twenty-second session).
    pub stores_ranks: bool,
}

impl SortBlueprint {
    pub fn new(
        units: u32,
        elements_per_unit: u32,
        radix_bits: u32,
        use_planes: bool,
        caps: &crate::DeviceCaps,
    ) -> Self {
        SortBlueprint {
            units,
            elements_per_unit,
            use_planes,
            radix_bits,
            max_planes: if use_planes {
                units.div_ceil(caps.plane_size_min.max(1))
            } else {
                1
            },
            ballot_words: caps.plane_size_max.div_ceil(32).clamp(1, 4),
            full_ballots: caps.plane_size_min == caps.plane_size_max
                && caps.plane_size_max.is_multiple_of(32)
                && caps.plane_size_max <= 128
                && units.is_multiple_of(caps.plane_size_max.max(1)),
            stores_ranks: false,
        }
    }

    /// This blueprint with [`stores_ranks`](Self::stores_ranks) set.
    pub fn storing_ranks(self, stores_ranks: bool) -> Self {
        SortBlueprint {
            stores_ranks,
            ..self
        }
    }

    pub fn tile(&self) -> usize {
        self.units as usize * self.elements_per_unit as usize
    }

    pub fn digits(&self) -> usize {
        1usize << self.radix_bits
    }

    /// Shared memory a tile needs besides its sorted keys and positions: the rankers' state,
    /// the digit starts and the scan spine.
    pub fn ranking_bytes(&self) -> usize {
        // `rank_scratch`'s three arrays: the plane ranker's counters (and one word each for
        // the split ranker's two), or the split ranker's two (and one word of counters).
        let ranker = if self.use_planes {
            4 * self.max_planes as usize * self.digits() + 8
        } else {
            8 * self.tile() + 4
        };
        ranker + 4 * self.digits() + 4 * self.units as usize
    }
}

/// The tile index (input order) of a unit's `e`-th held key. With planes, each plane holds a
/// contiguous chunk of `PLANE_DIM * elements_per_unit` keys striped across its lanes, so a
/// plane walks its chunk in input order and reads stay coalesced; without, keys are striped
/// across the cube.
#[cube]
pub fn held_index(e: u32, #[comptime] blueprint: SortBlueprint) -> u32 {
    if blueprint.use_planes {
        let lane = UNIT_POS_PLANE;
        (UNIT_POS - lane) * blueprint.elements_per_unit + e * PLANE_DIM + lane
    } else {
        e * CUBE_DIM + UNIT_POS
    }
}

/// The digit (`radix_bits` bits from `shift`) of a radix key.
#[cube]
pub fn digit_of(key: u32, shift: u32, #[comptime] blueprint: SortBlueprint) -> u32 {
    (key >> shift) & comptime!((1u32 << blueprint.radix_bits) - 1)
}

/// Stable slots of the held keys by digit (`digits[e]`, each below `1 << radix_bits`), and the
/// first slot of each digit in `digit_start` (every digit's, present or not: a digit's count in
/// the tile is the next digit's start less its own, the last digit's the present keys less
/// its start). A tile's missing keys (past its row's end) take the largest digit: they are
/// the tile's last indices, so the stable ranking puts them behind every present key, in the
/// slots past the present keys, with no test a key. Every unit must call it; it synchronises
/// the cube and leaves `digit_start` readable.
#[cube]
pub fn rank_tile(
    digits: &Array<u32>,
    scratch: &mut RankScratch,
    digit_start: &mut Shared<[u32]>,
    #[comptime] blueprint: SortBlueprint,
) -> Array<u32> {
    if blueprint.use_planes {
        rank_by_planes(digits, &mut scratch.counters, digit_start, blueprint)
    } else {
        rank_by_splits(
            digits,
            &mut scratch.ranked,
            &mut scratch.order,
            digit_start,
            blueprint,
        )
    }
}

/// The rankers' shared memory (each array one word where the blueprint's ranker does not use
/// it).
#[derive(CubeType)]
pub struct RankScratch {
    /// Per (plane, digit) counters of the plane ranker.
    pub counters: Shared<[u32]>,
    /// The split ranker's digits and tile indices.
    pub ranked: Shared<[u32]>,
    pub order: Shared<[u32]>,
}

/// Allocates [`RankScratch`] for `blueprint`.
#[cube]
pub fn rank_scratch(#[comptime] blueprint: SortBlueprint) -> RankScratch {
    let planes = blueprint.use_planes;
    let counters = Shared::<[u32]>::new_slice(comptime!(if planes {
        blueprint.max_planes as usize * blueprint.digits()
    } else {
        1
    }));
    let tile = comptime!(if planes { 1 } else { blueprint.tile() });
    RankScratch {
        counters,
        ranked: Shared::<[u32]>::new_slice(tile),
        order: Shared::<[u32]>::new_slice(tile),
    }
}

/// How a lane stands among the lanes of its plane whose keys share its digit.
#[derive(CubeType, Clone, Copy)]
pub struct Peers {
    /// Peers at lower lanes (0 for the lowest peer, `count - 1` for the highest).
    pub below: u32,
    /// Peers in all, the lane itself included.
    pub count: u32,
}

/// The lanes of the plane whose keys share this lane's digit: one ballot per digit bit, each
/// lane keeping the voters that agree with it on the bit (the match CUB builds from ballots).
/// `lanes` is the plane's lanes (`plane_ballot(true)`) where a ballot can have bits past its
/// plane (zeros there, which a flipped vote would turn into peers); all ones otherwise.
#[cube]
pub fn plane_peers(
    digit: u32,
    lanes: Vector<u32, Const<4>>,
    #[comptime] blueprint: SortBlueprint,
) -> Peers {
    let mut mask = lanes;
    #[unroll]
    for bit in 0..blueprint.radix_bits {
        // All ones where this lane's bit is set, by an arithmetic shift: two instructions and
        // no predicate (with every held key's votes in flight the compiler ran out of
        // predicate registers for selects: `bench/results/h200/13-b`, SASS). The vote XNOR it
        // is the lanes that agree with this one on the bit.
        let set = u32::cast_from(i32::cast_from(digit << comptime!(31 - bit)) >> 31);
        let vote = plane_ballot(set != 0u32);
        mask &= !(vote ^ Vector::new(set));
    }
    let lane = UNIT_POS_PLANE;
    let own_word = lane / 32u32;
    let below_bits = (1u32 << (lane % 32u32)) - 1u32;
    let mut below = 0u32;
    let mut count = 0u32;
    #[unroll]
    for w in 0..blueprint.ballot_words {
        let word = mask.extract(w as usize);
        let ones = word.count_ones();
        count += ones;
        if comptime!(blueprint.ballot_words == 1) {
            // A plane of at most 32 lanes: every lane's own word is this one.
            below = (word & below_bits).count_ones();
        } else {
            if w < own_word {
                below += ones;
            } else if w == own_word {
                below += (word & below_bits).count_ones();
            }
        }
    }
    Peers { below, count }
}

/// [`rank_tile`] with plane votes: each plane walks its chunk (held key `e` of every lane at
/// once, in input order). Every lane reads its (plane, digit) counter, the keys before it in
/// the plane's earlier steps; once all have read, one peer of each digit moves the counter
/// past the peers (CUB's ranking, with plane synchronisations where CUB has `__syncwarp`: no
/// atomics, no leader search, no shuffle). Then a prefix over (digit, plane) in that order
/// gives every (digit, plane) its first slot.
#[cube]
pub fn rank_by_planes(
    digits: &Array<u32>,
    counters: &mut Shared<[u32]>,
    digit_start: &mut Shared<[u32]>,
    #[comptime] blueprint: SortBlueprint,
) -> Array<u32> {
    let radix = comptime!(blueprint.digits() as u32);
    let epu = blueprint.elements_per_unit;
    let slots = comptime!(blueprint.max_planes * (1u32 << blueprint.radix_bits));
    let mut i = UNIT_POS;
    while i < slots {
        counters[i as usize] = 0u32;
        i += CUBE_DIM;
    }
    sync_cube();
    let plane_counters = (UNIT_POS / PLANE_DIM) * radix;
    let lanes = if comptime!(blueprint.full_ballots) {
        Vector::new(u32::MAX)
    } else {
        plane_ballot(true)
    };
    let mut ranks = Array::<u32>::new(epu as usize);
    #[unroll]
    for e in 0..epu {
        let digit = digits[e as usize];
        let peers = plane_peers(digit, lanes, blueprint);
        let slot = (plane_counters + digit) as usize;
        let earlier = counters[slot];
        // Every peer has read the counter before one peer moves it, and the move is seen by
        // the next step's reads ([`SortBlueprint::stores_ranks`]: which peer).
        if comptime!(blueprint.stores_ranks) {
            let rank = earlier + peers.below;
            sync_plane();
            if peers.below + 1u32 == peers.count {
                counters[slot] = rank + 1u32;
            }
            sync_plane();
            ranks[e as usize] = rank;
        } else {
            sync_plane();
            if peers.below == 0u32 {
                counters[slot] = earlier + peers.count;
            }
            sync_plane();
            ranks[e as usize] = earlier + peers.below;
        }
    }
    sync_cube();
    // Each unit owns `per_unit` consecutive digits: their counters become exclusive prefixes
    // over the planes, their totals go through one cube scan.
    let per_unit = comptime!((1u32 << blueprint.radix_bits).div_ceil(blueprint.units));
    let planes = CUBE_DIM / PLANE_DIM;
    let mut totals = Array::<u32>::new(per_unit as usize);
    let mut sum = 0u32;
    #[unroll]
    for k in 0..per_unit {
        let digit = UNIT_POS * per_unit + k;
        let mut run = 0u32;
        if digit < radix {
            for p in 0..planes {
                let slot = (p * radix + digit) as usize;
                let count = counters[slot];
                counters[slot] = run;
                run += count;
            }
        }
        totals[k as usize] = run;
        sum += run;
    }
    let prefix = cube_exclusive_sum(sum, blueprint.units, blueprint.use_planes);
    let mut start = prefix.before;
    #[unroll]
    for k in 0..per_unit {
        let digit = UNIT_POS * per_unit + k;
        if digit < radix {
            digit_start[digit as usize] = start;
            // Each (plane, digit) counter becomes its first slot in the tile: one shared read
            // a key below instead of two.
            for p in 0..planes {
                let slot = (p * radix + digit) as usize;
                counters[slot] += start;
            }
        }
        start += totals[k as usize];
    }
    sync_cube();
    #[unroll]
    for e in 0..epu {
        let digit = digits[e as usize];
        ranks[e as usize] += counters[(plane_counters + digit) as usize];
    }
    ranks
}

/// [`rank_tile`] without plane operations: the (digit, tile index) pairs are sorted by
/// one-bit splits ([`sort_by_bits`]). The sorted order gives the digit starts; its inverse
/// gives each key's slot.
#[cube]
pub fn rank_by_splits(
    digits: &Array<u32>,
    ranked: &mut Shared<[u32]>,
    order: &mut Shared<[u32]>,
    digit_start: &mut Shared<[u32]>,
    #[comptime] blueprint: SortBlueprint,
) -> Array<u32> {
    let radix = comptime!(blueprint.digits() as u32);
    let epu = blueprint.elements_per_unit;
    let tile = comptime!(blueprint.tile() as u32);
    #[unroll]
    for e in 0..epu {
        let index = held_index(e, blueprint);
        ranked[index as usize] = digits[e as usize];
        order[index as usize] = index;
    }
    sync_cube();
    sort_by_bits(ranked, order, 0u32, blueprint.radix_bits, blueprint);
    // Every digit's start, absent digits too (the first slot whose digit is at least it): the
    // slot where the digit rises writes the digits it passes, the last slot those above it.
    let mut slot = UNIT_POS;
    while slot < tile {
        let digit = ranked[slot as usize];
        let mut d = if slot == 0u32 {
            0u32
        } else {
            ranked[(slot - 1) as usize] + 1u32
        };
        while d <= digit {
            digit_start[d as usize] = slot;
            d += 1u32;
        }
        if slot + 1u32 == tile {
            let mut d = digit + 1u32;
            while d < radix {
                digit_start[d as usize] = tile;
                d += 1u32;
            }
        }
        slot += CUBE_DIM;
    }
    sync_cube();
    // The digits are read; `ranked` now takes the inverse permutation.
    let mut slot = UNIT_POS;
    while slot < tile {
        ranked[order[slot as usize] as usize] = slot;
        slot += CUBE_DIM;
    }
    sync_cube();
    let mut ranks = Array::<u32>::new(epu as usize);
    #[unroll]
    for e in 0..epu {
        ranks[e as usize] = ranked[held_index(e, blueprint) as usize];
    }
    sync_cube();
    ranks
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
