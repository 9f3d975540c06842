//! What one cube does for the top-k: count a tile's radix keys against a row's boundary,
//! rank a tile's keys below/at the boundary in index order, histogram a digit of the
//! candidates, find the digit the `k`-th key has, and rank a key within a whole row held in
//! shared memory. The per-row search state the passes share lives in a `[rows, STATE_WORDS]`
//! `u32` buffer (layout below).

use cubecl::prelude::*;

use crate::common::UNROLL_BODIES;
use crate::common::cube::{U32Range, cube_exclusive_sum};
use crate::sort::keys::{KeyKind, radix_key};

/// Words of per-row search state.
pub const STATE_WORDS: usize = 9;
/// The boundary key the gather uses: keys below it are all taken, keys equal to it are taken
/// lowest index first until `k` are taken. The radix select builds it digit by digit.
pub const STATE_BOUND: usize = 0;
/// Bisection: the low end of the interval the `k`-th key is in.
pub const STATE_LO: usize = 1;
/// Bisection: how many keys lie below the interval's high end.
pub const STATE_HI_COUNT: usize = 2;
/// Bisection: 1 once the row's boundary is known.
pub const STATE_DONE: usize = 3;
/// Radix select: the rank (1-based) the `k`-th key has among the keys matching the prefix.
pub const STATE_NEED: usize = 4;
/// Radix select: where the next pass reads the row's candidates (`SOURCE_*`).
pub const STATE_SOURCE: usize = 5;
/// Radix select: how many keys that source holds for the row.
pub const STATE_SOURCE_LEN: usize = 6;
/// Radix select: where the next pass appends the row's candidates (`SOURCE_*`; the input
/// means "nowhere").
pub const STATE_TARGET: usize = 7;
/// Radix select: every key of the row has the same bits from this one up (32: none shared);
/// set by each digit choice from the range the first pass recorded.
pub const STATE_SHARED_FROM: usize = 8;

/// The input values (radix keys computed on the fly).
pub const SOURCE_INPUT: u32 = 0;
/// Candidate buffer A (radix keys).
pub const SOURCE_A: u32 = 1;
/// Candidate buffer B (radix keys).
pub const SOURCE_B: u32 = 2;

/// Bins of a radix-select digit (8 bits).
pub const DIGITS: usize = 256;

/// Rank-by-counting cubes of up to this many units unroll their loops over the units
/// ([`ranks_in_row`] also within [`UNROLL_BODIES`], as its nest grows with units times keys
/// per unit squared); larger cubes keep a loop.
pub const RANK_UNROLL_UNITS: u32 = 32;

/// Compile-time shape of a top-k tile: only what changes control flow or array sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TopkBlueprint {
    pub units: u32,
    /// Keys per unit; a tile is `units * elements_per_unit` keys.
    pub elements_per_unit: u32,
    pub use_planes: bool,
}

impl TopkBlueprint {
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
    #[comptime] blueprint: TopkBlueprint,
) -> u32 {
    let epu = blueprint.elements_per_unit;
    let mut valid = 0u32;
    if start + comptime!(blueprint.tile()) <= len {
        #[unroll]
        for e in 0..epu {
            let index = row_base + start + (e * CUBE_DIM + UNIT_POS) as usize;
            held[e as usize] = key_at::<K>(values, index, read);
        }
        valid = comptime!(((1u64 << blueprint.elements_per_unit) - 1) as u32);
    } else {
        #[unroll]
        for e in 0..epu {
            let index = start + (e * CUBE_DIM + UNIT_POS) as usize;
            held[e as usize] = 0u32;
            if index < len {
                held[e as usize] = key_at::<K>(values, row_base + index, read);
                valid |= 1u32 << e;
            }
        }
    }
    valid
}

/// [`load_tile_keys`] from a candidate buffer (radix keys already, and writable, as the
/// radix-select pass that reads one may append to the other).
#[cube]
pub fn load_tile_candidates(
    candidates: &mut [u32],
    held: &mut Array<u32>,
    row_base: usize,
    start: usize,
    len: usize,
    #[comptime] blueprint: TopkBlueprint,
) -> u32 {
    let epu = blueprint.elements_per_unit;
    let mut valid = 0u32;
    if start + comptime!(blueprint.tile()) <= len {
        #[unroll]
        for e in 0..epu {
            held[e as usize] = candidates[row_base + start + (e * CUBE_DIM + UNIT_POS) as usize];
        }
        valid = comptime!(((1u64 << blueprint.elements_per_unit) - 1) as u32);
    } else {
        #[unroll]
        for e in 0..epu {
            let index = start + (e * CUBE_DIM + UNIT_POS) as usize;
            held[e as usize] = 0u32;
            if index < len {
                held[e as usize] = candidates[row_base + index];
                valid |= 1u32 << e;
            }
        }
    }
    valid
}

/// How many keys of a tile one unit reads (striped, coalesced) are below and equal to a bound.
#[derive(CubeType, Clone, Copy)]
pub struct BoundCounts {
    pub below: u32,
    pub equal: u32,
}

/// Adds to `counts` how many of the unit's keys of a tile (striped, coalesced reads) are
/// below `bound` and equal to it. No synchronisation: a cube sums its units' counts once,
/// after all its tiles.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn count_tile<K: Numeric>(
    values: &[K],
    counts: &mut BoundCounts,
    row_base: usize,
    start: usize,
    len: usize,
    bound: u32,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
) {
    let mut held = Array::<u32>::new(blueprint.elements_per_unit as usize);
    let valid = load_tile_keys::<K>(values, &mut held, row_base, start, len, read, blueprint);
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        if (valid >> e) & 1u32 == 1u32 {
            let key = held[e as usize];
            if key < bound {
                counts.below += 1u32;
            } else if key == bound {
                counts.equal += 1u32;
            }
        }
    }
}

/// How many of the unit's keys in a cube's chunk of tiles (see [`chunk_of_cube`]) are below
/// and equal to `bound` ([`count_tile`] over the chunk's tiles). No synchronisation: the
/// cube sums its units' counts after.
#[cube]
pub fn count_chunk<K: Numeric>(
    values: &[K],
    chunk: &TileChunk,
    len: usize,
    bound: u32,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
) -> BoundCounts {
    let mut counts = BoundCounts {
        below: 0u32,
        equal: 0u32,
    };
    for tile in chunk.first..chunk.end {
        count_tile::<K>(
            values,
            &mut counts,
            chunk.row * len,
            tile * comptime!(blueprint.tile()),
            len,
            bound,
            read,
            blueprint,
        );
    }
    counts
}

/// The tiles one cube of a pass over the input takes: tiles `first..end` of row `row`, the
/// cube being the `part`-th of its row. A cube takes several tiles so that its fixed costs
/// (clearing and flushing the histogram, the cube-wide sums, the atomics into per-row
/// counters) are paid once per chunk, not once per tile.
#[derive(CubeType, Clone, Copy)]
pub struct TileChunk {
    pub row: usize,
    pub part: usize,
    pub first: usize,
    pub end: usize,
}

/// The chunk of tiles cube `cube` takes (see [`TileChunk`]); `end <= first` for none.
#[cube]
pub fn chunk_of_cube(
    cube: usize,
    tiles_per_row: usize,
    cubes_per_row: usize,
    tiles_per_cube: usize,
) -> TileChunk {
    let row = cube / cubes_per_row;
    let part = cube % cubes_per_row;
    let first = part * tiles_per_cube;
    TileChunk {
        row,
        part,
        first,
        end: min(first + tiles_per_cube, tiles_per_row),
    }
}

/// Where the gather writes the chosen keys of a tile.
#[derive(CubeType, Clone, Copy)]
pub struct GatherSlots {
    /// The row's first output slot (`row * k`).
    pub out_base: usize,
    /// Slot (within the row) of the tile's first key below the boundary.
    pub less: u32,
    /// Slot (within the row) of the tile's first key equal to the boundary.
    pub equal: u32,
    /// `k`: slots at or past it are not written (the surplus ties).
    pub k: u32,
}

/// The gather of one tile. The units read the tile striped (coalesced) and a cube-wide sum
/// counts its keys below the boundary and equal to it. A tile with nothing to write (no key
/// below, and no tie whose slot is below `k`; most tiles when `k` is small) stops there.
/// Otherwise its radix keys go to shared memory and each unit takes `elements_per_unit`
/// consecutive ones, so a cube-wide exclusive sum of the units' (below, equal) counts ranks
/// every chosen key in index order: a key below the boundary goes to `slots.less + rank`, a
/// key equal to it to `slots.equal + rank` if that is below `k`. Writes the radix key and
/// the position within the row. Returns the tile's (below, equal) counts packed as
/// `below | equal << 16`. Every unit must call it; a cube may call it tile after tile (the
/// first cube-wide sum orders the shared tile's reuse).
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn gather_tile<K: Numeric>(
    values: &[K],
    cand_keys: &mut [u32],
    cand_positions: &mut [u32],
    row_base: usize,
    start: usize,
    len: usize,
    bound: u32,
    slots: GatherSlots,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
) -> u32 {
    let epu = blueprint.elements_per_unit;
    let mut held = Array::<u32>::new(epu as usize);
    let valid = load_tile_keys::<K>(values, &mut held, row_base, start, len, read, blueprint);
    let mut striped = 0u32;
    #[unroll]
    for e in 0..epu {
        if (valid >> e) & 1u32 == 1u32 {
            let key = held[e as usize];
            if key < bound {
                striped += 1u32;
            } else if key == bound {
                striped += 0x1_0000u32;
            }
        }
    }
    let total = cube_exclusive_sum(striped, blueprint.units, blueprint.use_planes).total;
    // Uniform per cube.
    if (total & 0xFFFFu32) > 0u32 || ((total >> 16u32) > 0u32 && slots.equal < slots.k) {
        let mut keys = Shared::<[u32]>::new_slice(comptime!(blueprint.tile()));
        #[unroll]
        for e in 0..epu {
            let local = (e * CUBE_DIM + UNIT_POS) as usize;
            if start + local < len {
                keys[local] = held[e as usize];
            }
        }
        sync_cube();
        let first = (UNIT_POS * epu) as usize;
        let mut packed = 0u32;
        #[unroll]
        for e in 0..epu {
            let local = first + e as usize;
            if start + local < len {
                let key = keys[local];
                if key < bound {
                    packed += 1u32;
                } else if key == bound {
                    packed += 0x1_0000u32;
                }
            }
        }
        let prefix = cube_exclusive_sum(packed, blueprint.units, blueprint.use_planes);
        let mut less = slots.less + (prefix.before & 0xFFFFu32);
        let mut equal = slots.equal + (prefix.before >> 16u32);
        #[unroll]
        for e in 0..epu {
            let local = first + e as usize;
            if start + local < len {
                let key = keys[local];
                if key < bound {
                    // Always below k: fewer than k keys of the row are below the boundary.
                    cand_keys[slots.out_base + less as usize] = key;
                    cand_positions[slots.out_base + less as usize] = (start + local) as u32;
                    less += 1u32;
                } else if key == bound {
                    if equal < slots.k {
                        cand_keys[slots.out_base + equal as usize] = key;
                        cand_positions[slots.out_base + equal as usize] = (start + local) as u32;
                    }
                    equal += 1u32;
                }
            }
        }
    }
    total
}

/// The ranks of one unit's keys (row positions `e * CUBE_DIM + UNIT_POS`) among the row's
/// keys in shared memory (`keys[0..len]`, padded to the tile with `u32::MAX`): for each, how
/// many keys are smaller plus how many equal ones come before it. Ranks of distinct positions
/// are distinct; positions past `len` get meaningless ranks.
///
/// One sweep over the row serves all of the unit's keys, in segments of `CUBE_DIM` keys:
/// every key of segment `j` comes before the unit's key `e` when `j < e` (equal keys count)
/// and after it when `j > e` (they do not), so only segment `e` itself compares positions.
/// The padding never counts: it is only ever compared as a later key. A cube of at most
/// [`RANK_UNROLL_UNITS`] units unrolls the sweep (positions become constants: no loop
/// counter, and the position test against its own is a compare with an immediate) when the
/// whole nest (`units * elements_per_unit^2` compares) stays within [`UNROLL_BODIES`]: 32
/// units x 8 keys (rows of 129-256 keys) unrolled took ~100 s to compile through CUDA.
#[cube]
pub fn ranks_in_row(keys: &Shared<[u32]>, #[comptime] blueprint: TopkBlueprint) -> Array<u32> {
    let epu = blueprint.elements_per_unit;
    let mut mine = Array::<u32>::new(epu as usize);
    let mut ranks = Array::<u32>::new(epu as usize);
    #[unroll]
    for e in 0..epu {
        mine[e as usize] = keys[(e * CUBE_DIM + UNIT_POS) as usize];
        ranks[e as usize] = 0u32;
    }
    #[unroll]
    for j in 0..epu {
        #[unroll(blueprint.units <= RANK_UNROLL_UNITS
            && blueprint.units * epu * epu <= UNROLL_BODIES)]
        for i in 0..blueprint.units {
            let other = keys[(j * CUBE_DIM + i) as usize];
            #[unroll]
            for e in 0..epu {
                let key = mine[e as usize];
                if comptime!(j < e) {
                    if other <= key {
                        ranks[e as usize] += 1u32;
                    }
                } else if comptime!(j > e) {
                    if other < key {
                        ranks[e as usize] += 1u32;
                    }
                } else if other < key || (other == key && i < UNIT_POS) {
                    ranks[e as usize] += 1u32;
                }
            }
        }
    }
    ranks
}

/// One unit's share of [`rank_under_minima_bound`]: whether the bound held few enough keys
/// (`fits`, the same for every unit), and if so the row position and rank of the candidate
/// the unit ranked (`rank` is `u32::MAX` when it ranked none).
#[derive(CubeType, Clone, Copy)]
pub struct BoundedRank {
    pub fits: bool,
    pub position: u32,
    pub rank: u32,
}

/// Rank by counting under the minima bound, for a row in shared memory (`keys[0..len]`,
/// positions `e * CUBE_DIM + UNIT_POS`, `1 <= k <= CUBE_DIM`, `k <= len`): each unit takes
/// the smallest of its keys; the `k`-th smallest of those minima (each unit counts the
/// minima below its own, ties by unit, and the one with `k - 1` below publishes it) bounds
/// the row's `k`-th key from above, so every chosen key, and every key that outranks one,
/// is at or below it. Those keys go to shared memory with their positions (slots from a
/// cube-wide sum of the units' counts), and each is ranked among them only: about `k` keys
/// against about `k`, instead of every key against the row. Where more than `CUBE_DIM` keys lie under the
/// bound (ties with it: all-equal and low-entropy rows) nothing is ranked and `fits` is
/// false. Every unit must call it.
#[cube]
pub fn rank_under_minima_bound(
    keys: &Shared<[u32]>,
    len: usize,
    k: u32,
    #[comptime] blueprint: TopkBlueprint,
) -> BoundedRank {
    let epu = blueprint.elements_per_unit;
    let units = blueprint.units;
    let mut smallest = 0xFFFF_FFFFu32;
    #[unroll]
    for e in 0..epu {
        let local = (e * CUBE_DIM + UNIT_POS) as usize;
        if local < len {
            smallest = min(smallest, keys[local]);
        }
    }
    let mut minima = Shared::<[u32]>::new_slice(comptime!(units as usize));
    minima[UNIT_POS as usize] = smallest;
    sync_cube();
    // Units that read no key hold u32::MAX: at least k units read one (k <= min(len,
    // units)), and ties go to the lower unit, so the k-th minimum is a real key's.
    let mut below = 0u32;
    #[unroll(units <= RANK_UNROLL_UNITS)]
    for i in 0..units {
        let other = minima[i as usize];
        if other < smallest || (other == smallest && i < UNIT_POS) {
            below += 1u32;
        }
    }
    let mut published = Shared::<[u32]>::new_slice(1usize);
    if below == k - 1 {
        published[0] = smallest;
    }
    sync_cube();
    let bound = published[0];
    let mut under = 0u32;
    #[unroll]
    for e in 0..epu {
        let local = (e * CUBE_DIM + UNIT_POS) as usize;
        if local < len && keys[local] <= bound {
            under += 1u32;
        }
    }
    let placed = cube_exclusive_sum(under, units, blueprint.use_planes);
    let fits = placed.total <= units;
    let mut cand_keys = Shared::<[u32]>::new_slice(comptime!(units as usize));
    let mut cand_positions = Shared::<[u32]>::new_slice(comptime!(units as usize));
    if fits {
        let mut slot = placed.before as usize;
        #[unroll]
        for e in 0..epu {
            let local = (e * CUBE_DIM + UNIT_POS) as usize;
            if local < len {
                let key = keys[local];
                if key <= bound {
                    cand_keys[slot] = key;
                    cand_positions[slot] = local as u32;
                    slot += 1;
                }
            }
        }
    }
    sync_cube();
    let mut result = BoundedRank {
        fits,
        position: 0u32,
        rank: 0xFFFF_FFFFu32,
    };
    if fits && UNIT_POS < placed.total {
        let key = cand_keys[UNIT_POS as usize];
        let position = cand_positions[UNIT_POS as usize];
        let mut rank = 0u32;
        // (Slots follow units, not positions: ties compare positions.)
        for j in 0..placed.total {
            let other = cand_keys[j as usize];
            if other < key || (other == key && cand_positions[j as usize] < position) {
                rank += 1u32;
            }
        }
        result.position = position;
        result.rank = rank;
    }
    result
}

/// Radix select, one pass over one tile of a row's current candidate source (`source`:
/// the input or a candidate buffer, `source_len` keys): every key that matches the row's
/// prefix above `shift + 8` (all of them in the first pass) is counted in `bins` by its digit
/// at `shift`, and, when `target` is a candidate buffer, appended to it (staged in shared
/// memory, written out coalesced): the cube's block of slots comes from the row's `appended`
/// counter, so blocks land in the order cubes get there, which nothing downstream depends on
/// (later passes only count). Returns the range
/// of the keys the unit counted (`min > max` if none). Every unit must call it.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn histogram_tile<K: Numeric>(
    values: &[K],
    cand_a: &mut [u32],
    cand_b: &mut [u32],
    bins: &Shared<[Atomic<u32>]>,
    appended: &mut [Atomic<u32>],
    row: usize,
    row_base: usize,
    start: usize,
    source: u32,
    source_len: usize,
    target: u32,
    prefix: u32,
    shift: u32,
    #[comptime] first_pass: bool,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
) -> U32Range {
    let epu = blueprint.elements_per_unit;
    // The unit's matching keys stay in registers (fixed indices), flagged in `hit_mask`.
    let mut held = Array::<u32>::new(epu as usize);
    let mut hit_mask = 0u32;
    let mut matches = 0u32;
    let mut range = U32Range {
        min: 0xFFFF_FFFFu32,
        max: 0u32,
    };
    let valid = if source == SOURCE_INPUT {
        load_tile_keys::<K>(
            values, &mut held, row_base, start, source_len, read, blueprint,
        )
    } else if source == SOURCE_A {
        load_tile_candidates(cand_a, &mut held, row_base, start, source_len, blueprint)
    } else {
        load_tile_candidates(cand_b, &mut held, row_base, start, source_len, blueprint)
    };
    #[unroll]
    for e in 0..epu {
        let key = held[e as usize];
        let mut hit = (valid >> e) & 1u32 == 1u32;
        if !first_pass {
            hit = hit && (key >> (shift + 8u32)) == (prefix >> (shift + 8u32));
        }
        if hit {
            hit_mask |= 1u32 << e;
            matches += 1u32;
            range.min = min(range.min, key);
            range.max = max(range.max, key);
        }
    }
    count_digits(bins, &held, hit_mask, shift, blueprint);
    if target != SOURCE_INPUT {
        // Uniform per cube (a pass with nowhere to append skips the rank altogether). The
        // matches go to shared memory in rank order, then out in one coalesced sweep to the
        // cube's block of the target. (This tile's cube-wide sum orders the previous tile's
        // sweep before these writes.)
        let ranks = cube_exclusive_sum(matches, blueprint.units, blueprint.use_planes);
        let mut staging = Shared::<[u32]>::new_slice(comptime!(blueprint.tile()));
        let mut block = Shared::<u32>::new();
        let mut slot = ranks.before as usize;
        #[unroll]
        for e in 0..epu {
            if (hit_mask >> e) & 1u32 == 1u32 {
                staging[slot] = held[e as usize];
                slot += 1;
            }
        }
        if UNIT_POS == 0 {
            *block = appended[row].fetch_add(ranks.total);
        }
        sync_cube();
        let out = row_base + *block as usize;
        let mut j = UNIT_POS;
        while j < ranks.total {
            if target == SOURCE_A {
                cand_a[out + j as usize] = staging[j as usize];
            } else {
                cand_b[out + j as usize] = staging[j as usize];
            }
            j += CUBE_DIM;
        }
    }
    range
}

/// Counts the digits at `shift` of the unit's keys flagged in `hits` (bit `e` for `held[e]`)
/// into the cube's shared bins. With planes, a tile whose keys are all hits with one digit
/// across the whole plane (all-equal and low-entropy rows, where every add would hit one
/// bin) is one add for the plane: one broadcast and one vote per tile. Otherwise every key
/// adds one. (Merging equal digits key by key, by ballot rounds, cost more than the
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
    #[comptime] blueprint: TopkBlueprint,
) {
    let epu = blueprint.elements_per_unit;
    if blueprint.use_planes {
        let lead = plane_broadcast((held[0] >> shift) & 0xFFu32, 0u32);
        let mut same = hits == comptime!(((1u64 << blueprint.elements_per_unit) - 1) as u32);
        #[unroll]
        for e in 0..epu {
            same = same && ((held[e as usize] >> shift) & 0xFFu32) == lead;
        }
        // Uniform per plane.
        if plane_all(same) {
            if UNIT_POS_PLANE == 0 {
                bins[lead as usize].fetch_add(PLANE_DIM * epu);
            }
        } else {
            add_digits(bins, held, hits, shift, epu);
        }
    } else {
        add_digits(bins, held, hits, shift, epu);
    }
}

/// One shared add per key flagged in `hits`, at its digit at `shift`.
#[cube]
fn add_digits(
    bins: &Shared<[Atomic<u32>]>,
    held: &Array<u32>,
    hits: u32,
    shift: u32,
    #[comptime] elements_per_unit: u32,
) {
    #[unroll]
    for e in 0..elements_per_unit {
        if (hits >> e) & 1u32 == 1u32 {
            bins[((held[e as usize] >> shift) & 0xFFu32) as usize].fetch_add(1u32);
        }
    }
}

/// Radix select of a whole row in one cube, one digit pass over one tile of the row (striped,
/// coalesced reads): every key matching the row's prefix on the bits `high_mask` keeps (all
/// of them in the first pass, whose mask is 0) is counted in `bins` by its digit at `shift`.
/// Returns the range of the keys counted (`min > max` if none). Every unit must call it.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn row_histogram_tile<K: Numeric>(
    values: &[K],
    bins: &Shared<[Atomic<u32>]>,
    row_base: usize,
    start: usize,
    len: usize,
    prefix: u32,
    high_mask: u32,
    shift: u32,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
) -> U32Range {
    let mut range = U32Range {
        min: 0xFFFF_FFFFu32,
        max: 0u32,
    };
    let mut held = Array::<u32>::new(blueprint.elements_per_unit as usize);
    let valid = load_tile_keys::<K>(values, &mut held, row_base, start, len, read, blueprint);
    let mut hits = 0u32;
    #[unroll]
    for e in 0..blueprint.elements_per_unit {
        let key = held[e as usize];
        if (valid >> e) & 1u32 == 1u32 && ((key ^ prefix) & high_mask) == 0u32 {
            hits |= 1u32 << e;
            range.min = min(range.min, key);
            range.max = max(range.max, key);
        }
    }
    count_digits(bins, &held, hits, shift, blueprint);
    range
}

/// The digit a radix select keeps, and how many of the counted keys have smaller digits.
#[derive(CubeType, Clone, Copy)]
pub struct DigitChoice {
    pub digit: u32,
    pub before: u32,
}

/// The digit whose bin holds the `need`-th (1-based) of the keys counted in `bins`, which
/// must hold at least `need`: each unit sums a run of consecutive bins, a cube-wide
/// exclusive sum places the runs, and the unit whose run holds the `need`-th key publishes
/// its digit. Any number of units (a power of two); every unit must call it and gets the
/// choice.
#[cube]
pub fn find_digit(
    bins: &Shared<[Atomic<u32>]>,
    need: u32,
    #[comptime] blueprint: TopkBlueprint,
) -> DigitChoice {
    let per_unit = comptime!(DIGITS.div_ceil(blueprint.units as usize) as u32);
    let first = UNIT_POS * per_unit;
    let mut run = 0u32;
    #[unroll]
    for j in 0..per_unit {
        let digit = (first + j) as usize;
        if digit < DIGITS {
            run += bins[digit].load();
        }
    }
    let placed = cube_exclusive_sum(run, blueprint.units, blueprint.use_planes);
    let mut choice = Shared::<[u32]>::new_slice(2usize);
    let mut before = placed.before;
    #[unroll]
    for j in 0..per_unit {
        let digit = (first + j) as usize;
        if digit < DIGITS {
            let count = bins[digit].load();
            if before < need && need <= before + count {
                choice[0] = digit as u32;
                choice[1] = before;
            }
            before += count;
        }
    }
    sync_cube();
    DigitChoice {
        digit: choice[0],
        before: choice[1],
    }
}

/// Zeroes the cube's digit bins (no synchronisation: the caller syncs before counting).
#[cube]
pub fn clear_bins(bins: &Shared<[Atomic<u32>]>) {
    let mut d = UNIT_POS as usize;
    while d < DIGITS {
        bins[d].store(0u32);
        d += CUBE_DIM as usize;
    }
}

/// The smallest radix key among the keys one unit reads in a sweep over a whole row (tile
/// by tile, striped: key `e` of tile `t` at row position `t * tile + e * CUBE_DIM +
/// UNIT_POS`); `u32::MAX` if it reads none. Loads only: no shared memory, no
/// synchronisation.
#[cube]
pub fn unit_min_key<K: Numeric>(
    values: &[K],
    row_base: usize,
    len: usize,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
) -> u32 {
    let tile_keys = comptime!(blueprint.tile());
    let tiles = len.div_ceil(tile_keys);
    let mut smallest = 0xFFFF_FFFFu32;
    let mut held = Array::<u32>::new(blueprint.elements_per_unit as usize);
    for tile in 0..tiles {
        let valid = load_tile_keys::<K>(
            values,
            &mut held,
            row_base,
            tile * tile_keys,
            len,
            read,
            blueprint,
        );
        #[unroll]
        for e in 0..blueprint.elements_per_unit {
            if (valid >> e) & 1u32 == 1u32 {
                smallest = min(smallest, held[e as usize]);
            }
        }
    }
    smallest
}

/// The `k`-th smallest (1-based, `1 <= k <= CUBE_DIM`) of the keys the cube's units hold,
/// one key each: MSB-first 8-bit digit rounds over the key's bits (four for 32-bit keys,
/// two for 16-bit, one for 8-bit), each a count of the matching units' digits into the
/// cube's `bins` and [`find_digit`]. Every unit must call it and gets the key.
#[cube]
pub fn kth_smallest_unit_key(
    bins: &Shared<[Atomic<u32>]>,
    key: u32,
    k: u32,
    #[comptime] key_bits: u32,
    #[comptime] blueprint: TopkBlueprint,
) -> u32 {
    let mut prefix = 0u32;
    let mut need = k;
    for round in 0..comptime!(key_bits / 8) {
        let shift = comptime!(key_bits - 8) - 8u32 * round;
        clear_bins(bins);
        sync_cube();
        // The bits above the key's (zero in every real key of a narrow dtype; a unit that
        // read no key holds `u32::MAX`, counted only for 32-bit keys, where it is a key like
        // any other: at least `k` units read one) and the digits chosen so far (none in the
        // first round).
        let mut high_mask = 0u32;
        // `shift + 8` is 32 only in the first round of a 32-bit key.
        if comptime!(key_bits < 32) || round > 0u32 {
            high_mask = 0xFFFF_FFFFu32 << (shift + 8u32);
        }
        if ((key ^ prefix) & high_mask) == 0u32 {
            bins[((key >> shift) & 0xFFu32) as usize].fetch_add(1u32);
        }
        sync_cube();
        let choice = find_digit(bins, need, blueprint);
        prefix |= choice.digit << shift;
        need -= choice.before;
    }
    prefix
}

/// Top-k of a whole row in one cube when the row's `k` smallest keys are few and easy to
/// bound (`1 <= k <= CUBE_DIM`), in two sweeps and no digit passes:
/// 1. every unit takes the smallest key it reads ([`unit_min_key`]), and the `k`-th smallest
///    of those minima ([`kth_smallest_unit_key`]) is the *bound*: `k` distinct units each
///    read a key at or below it, so the row's `k`-th smallest key is at or below it too, and
///    every chosen key (ties included) is at or below it;
/// 2. the keys at or below the bound, with their positions, go to shared memory (slots from
///    a shared counter: arrival order, which nothing depends on); each is ranked among them
///    by (key, position), which is its rank in the row, as every key that outranks a chosen
///    key is at or below the bound too. Ranks below `k` go to candidate slot `rank` of
///    `cand_keys` / `cand_positions` (from `out_base`): sorted order, positions in the row.
///
/// For random data about `k` keys qualify. Where more than `CUBE_DIM` do (all-equal or
/// low-entropy rows: the bound is then a common key) nothing is written and it returns
/// `false`: the caller selects by digit passes instead (a unit stops reading once the
/// counter has passed the capacity). Every unit must call it; the result is the same for
/// all.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn select_under_minima_bound<K: Numeric>(
    values: &[K],
    bins: &Shared<[Atomic<u32>]>,
    cand_keys: &mut [u32],
    cand_positions: &mut [u32],
    row_base: usize,
    out_base: usize,
    len: usize,
    k: u32,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: TopkBlueprint,
) -> bool {
    let capacity = comptime!(blueprint.units);
    let mut keys = Shared::<[u32]>::new_slice(comptime!(blueprint.units as usize));
    let mut positions = Shared::<[u32]>::new_slice(comptime!(blueprint.units as usize));
    let found = Shared::<[Atomic<u32>]>::new_slice(1usize);
    if UNIT_POS == 0 {
        found[0].store(0u32);
    }
    let smallest = unit_min_key::<K>(values, row_base, len, read, blueprint);
    // Its first sync also orders the counter's clear before any add.
    let bound = kth_smallest_unit_key(
        bins,
        smallest,
        k,
        comptime!(read.kind.key_bits()),
        blueprint,
    );
    let tile_keys = comptime!(blueprint.tile());
    let tiles = len.div_ceil(tile_keys);
    let mut held = Array::<u32>::new(blueprint.elements_per_unit as usize);
    let mut tile = 0usize;
    // The counter only grows, so a unit that sees it past the capacity can stop: the row
    // falls back whatever the others add.
    while tile < tiles && found[0].load() <= capacity {
        let start = tile * tile_keys;
        let valid = load_tile_keys::<K>(values, &mut held, row_base, start, len, read, blueprint);
        #[unroll]
        for e in 0..blueprint.elements_per_unit {
            let key = held[e as usize];
            if (valid >> e) & 1u32 == 1u32 && key <= bound {
                let slot = found[0].fetch_add(1u32);
                if slot < capacity {
                    keys[slot as usize] = key;
                    positions[slot as usize] = (start + (e * CUBE_DIM + UNIT_POS) as usize) as u32;
                }
            }
        }
        tile += 1;
    }
    sync_cube();
    let count = found[0].load();
    let fits = count <= capacity;
    if fits && UNIT_POS < count {
        let key = keys[UNIT_POS as usize];
        let position = positions[UNIT_POS as usize];
        let mut rank = 0u32;
        for j in 0..count {
            let other = keys[j as usize];
            if other < key || (other == key && positions[j as usize] < position) {
                rank += 1u32;
            }
        }
        if rank < k {
            cand_keys[out_base + rank as usize] = key;
            cand_positions[out_base + rank as usize] = position;
        }
    }
    fits
}
