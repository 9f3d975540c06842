//! What one cube does for the top-k: count and gather a tile's keys below and at a row's
//! boundary in index order, histogram a digit of the candidates (and append them), bound a
//! row's `k` smallest keys by its units' minima, and rank a key within a row held in shared
//! memory. Tiles, digit bins and the MSB select are the radix parts ([`crate::radix`]). The
//! device-wide select keeps each row's progress in a [`RowState`] between passes.

use cubecl::prelude::*;

use crate::common::UNROLL_BODIES;
use crate::common::cube::{U32Range, cube_exclusive_sum};
use crate::radix::digits::clear_bins;
use crate::radix::keys::radix_key;
use crate::radix::select::{CubeKeys, cube_select};
use crate::radix::tile::{
    KeyRead, RadixBlueprint, count_tile_digits, key_at, load_tile_keys, load_tile_keys_blocked,
};

/// A row's progress through the device-wide radix select, kept between passes in a
/// `[rows, ROW_STATE_WORDS]` `u32` buffer ([`load_row_state`], [`store_row_state`]).
#[derive(CubeType, Clone, Copy)]
pub struct RowState {
    /// The boundary key the gather uses: keys below it are all taken, keys equal to it
    /// lowest index first until `k` are taken. Built digit by digit (the chosen digits in
    /// place, the bits below them zero).
    pub bound: u32,
    /// The rank (1-based) the `k`-th key has among the keys matching the digits chosen so far.
    pub need: u32,
    /// Where the next pass reads the row's candidates (`SOURCE_*`).
    pub source: u32,
    /// How many keys that source holds for the row.
    pub source_len: u32,
    /// Where the next pass appends the row's candidates (`SOURCE_*`; the input means
    /// "nowhere").
    pub target: u32,
    /// Every key of the row has the same bits from this one up (32: not known yet); set by
    /// each digit choice from the range the first pass recorded.
    pub shared_from: u32,
    /// 1 where the sampled bound answered: `bound` is the sample's bound, which at least `k`
    /// keys of the row reach and at most the gather's capacity lie below, so the digit passes
    /// skip the row and the gather takes every key under it (up to the capacity).
    pub sampled: u32,
}

/// Words of a [`RowState`].
pub const ROW_STATE_WORDS: usize = 7;

/// Row `row`'s state.
#[cube]
pub fn load_row_state(state: &[u32], row: usize) -> RowState {
    let s = row * ROW_STATE_WORDS;
    RowState {
        bound: state[s],
        need: state[s + 1],
        source: state[s + 2],
        source_len: state[s + 3],
        target: state[s + 4],
        shared_from: state[s + 5],
        sampled: state[s + 6],
    }
}

/// Writes row `row`'s state.
#[cube]
pub fn store_row_state(state: &mut [u32], row: usize, row_state: &RowState) {
    let s = row * ROW_STATE_WORDS;
    state[s] = row_state.bound;
    state[s + 1] = row_state.need;
    state[s + 2] = row_state.source;
    state[s + 3] = row_state.source_len;
    state[s + 4] = row_state.target;
    state[s + 5] = row_state.shared_from;
    state[s + 6] = row_state.sampled;
}

/// The input values (radix keys computed on the fly).
pub const SOURCE_INPUT: u32 = 0;
/// Candidate buffer A (radix keys).
pub const SOURCE_A: u32 = 1;
/// Candidate buffer B (radix keys).
pub const SOURCE_B: u32 = 2;

/// Rank-by-counting cubes of up to this many units unroll their loops over the units
/// ([`ranks_in_row`] also within [`UNROLL_BODIES`], as its nest grows with units times keys
/// per unit squared); larger cubes keep a loop.
pub const RANK_UNROLL_UNITS: u32 = 32;

/// 1 for a key below `bound`, `1 << 16` for a key equal to it, else 0: summed over at most
/// 65,535 keys, the (below, equal) counts packed in one word.
#[cube]
fn bound_class(key: u32, bound: u32) -> u32 {
    if key < bound {
        1u32
    } else if key == bound {
        0x1_0000u32
    } else {
        0u32
    }
}

/// [`bound_class`] summed over the unit's held keys that exist (bit `e` of `valid`).
#[cube]
fn held_classes(held: &Array<u32>, valid: u32, bound: u32, #[comptime] epu: u32) -> u32 {
    let mut packed = 0u32;
    #[unroll]
    for e in 0..epu {
        if (valid >> e) & 1u32 == 1u32 {
            packed += bound_class(held[e as usize], bound);
        }
    }
    packed
}

/// The most tiles a cube of a pass over the input takes ([`chunk_of_cube`]): the gather's
/// count keeps a shared counter per tile of its chunk.
pub const MAX_CHUNK_TILES: usize = 32;

/// The gather's count of one cube's chunk of tiles: how many keys of each tile are below
/// `bound` and equal to it, written to `tile_counts` as `[row][below: tiles | equal: tiles]`
/// (`tiles_per_row` tiles a row), so that an exclusive scan of a row gives each tile the first
/// slot of its keys below, and of its ties (after every key below). The values are read as
/// vectors of `vector` keys (`len` a multiple of it; the order within a tile does not
/// matter); each plane sums its packed counts of a tile ([`bound_class`]) and one unit adds
/// them to the tile's shared counter: no synchronisation per tile. Every unit must call it.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn count_chunk_tiles<K: Numeric, N: Size>(
    values: &[Vector<K, N>],
    tile_counts: &mut [u32],
    chunk: &TileChunk,
    grid: &ChunkGrid,
    bound: u32,
    #[comptime] vector: usize,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
) {
    let counters = Shared::<[Atomic<u32>]>::new_slice(MAX_CHUNK_TILES);
    clear_bins(&counters, MAX_CHUNK_TILES);
    sync_cube();
    let vectors_per_unit = comptime!(blueprint.elements_per_unit / vector as u32);
    let tile_vectors = comptime!(blueprint.tile() / vector);
    let row_vectors = grid.len / vector;
    let row_base = chunk.row * row_vectors;
    let tiles = chunk.end - min(chunk.first, chunk.end);
    let mut t = 0usize;
    // Two whole tiles at a time, every load issued before any key is classified (twice the
    // bytes in flight of a tile at a time).
    while t + 2 <= tiles && (chunk.first + t + 2) * tile_vectors <= row_vectors {
        let start = row_base + (chunk.first + t) * tile_vectors;
        let mut held = Array::<Vector<K, N>>::new(comptime!(2 * vectors_per_unit as usize));
        #[unroll]
        for e in 0..comptime!(2 * vectors_per_unit) {
            let second = comptime!(e / vectors_per_unit) as usize;
            let within = comptime!(e % vectors_per_unit);
            held[e as usize] =
                values[start + second * tile_vectors + (within * CUBE_DIM + UNIT_POS) as usize];
        }
        let mut packed = Array::<u32>::new(2usize);
        packed[0] = 0u32;
        packed[1] = 0u32;
        #[unroll]
        for e in 0..comptime!(2 * vectors_per_unit) {
            let v = held[e as usize];
            #[unroll]
            for j in 0..vector {
                let key = radix_key::<K>(v.extract(j), read.kind, read.largest);
                packed[comptime!(e / vectors_per_unit) as usize] += bound_class(key, bound);
            }
        }
        add_tile_count(&counters, t, packed[0], blueprint.use_planes);
        add_tile_count(&counters, t + 1, packed[1], blueprint.use_planes);
        t += 2;
    }
    while t < tiles {
        let start = (chunk.first + t) * tile_vectors;
        let mut packed = 0u32;
        #[unroll]
        for e in 0..vectors_per_unit {
            let index = start + (e * CUBE_DIM + UNIT_POS) as usize;
            if index < row_vectors {
                let v = values[row_base + index];
                #[unroll]
                for j in 0..vector {
                    let key = radix_key::<K>(v.extract(j), read.kind, read.largest);
                    packed += bound_class(key, bound);
                }
            }
        }
        add_tile_count(&counters, t, packed, blueprint.use_planes);
        t += 1;
    }
    sync_cube();
    let mut t = UNIT_POS as usize;
    while t < tiles {
        let packed = counters[t].load();
        let base = chunk.row * 2 * grid.tiles_per_row + chunk.first + t;
        tile_counts[base] = packed & 0xFFFFu32;
        tile_counts[base + grid.tiles_per_row] = packed >> 16u32;
        t += CUBE_DIM as usize;
    }
}

/// Adds a unit's packed counts of tile `t` of its chunk to the tile's shared counter: one add
/// per plane (its sum), or per unit without planes. Every unit of the plane must call it.
#[cube]
fn add_tile_count(
    counters: &Shared<[Atomic<u32>]>,
    t: usize,
    packed: u32,
    #[comptime] use_planes: bool,
) {
    if use_planes {
        let sum = plane_sum(packed);
        if UNIT_POS_PLANE == 0 && sum != 0u32 {
            counters[t].fetch_add(sum);
        }
    } else if packed != 0u32 {
        counters[t].fetch_add(packed);
    }
}

/// How a pass over the input splits into cubes (chosen on the host by `Run::chunks`): each
/// row of `len` keys is `tiles_per_row` tiles, taken in chunks of `tiles_per_cube`
/// consecutive tiles by `cubes_per_row` cubes a row, `total_cubes` in all. A cube takes
/// several tiles so that its fixed costs (clearing and flushing the histogram, the cube-wide
/// sums, the atomics into per-row counters) are paid once per chunk, not once per tile.
#[derive(CubeType, CubeLaunch, Clone, Copy, Debug)]
pub struct ChunkGrid {
    pub len: usize,
    pub tiles_per_row: usize,
    pub cubes_per_row: usize,
    pub tiles_per_cube: usize,
    pub total_cubes: usize,
}

/// The tiles one cube of a pass takes: tiles `first..end` of row `row` (`end <= first`: none).
#[derive(CubeType, Clone, Copy)]
pub struct TileChunk {
    pub row: usize,
    pub first: usize,
    pub end: usize,
}

/// The chunk of tiles cube `cube` of `grid` takes.
#[cube]
pub fn chunk_of_cube(cube: usize, grid: &ChunkGrid) -> TileChunk {
    let first = (cube % grid.cubes_per_row) * grid.tiles_per_cube;
    TileChunk {
        row: cube / grid.cubes_per_row,
        first,
        end: min(first + grid.tiles_per_cube, grid.tiles_per_row),
    }
}

/// The row position of candidate `c` of a cut row whose candidates start at `base` in
/// `positions` (the one-cube-per-row select's layout: `k` candidates a chunk of `chunk_len`
/// keys, each with its position in its chunk).
#[cube]
pub fn candidate_row_position(
    positions: &[u32],
    base: usize,
    c: usize,
    k: usize,
    chunk_len: usize,
) -> u32 {
    positions[base + c] + ((c / k) * chunk_len) as u32
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
    /// Whether only the ties are written (the keys below the boundary are already).
    pub ties_only: bool,
}

/// The gather of one tile. Each unit reads `elements_per_unit` consecutive keys of the tile
/// (the blocked layout: unit `u` holds positions `u * elements_per_unit ..`; a warp's loads
/// share cache lines, so they cost a striped load's traffic), so one cube-wide exclusive sum
/// of the units' packed (below, equal) counts ranks every chosen key in index order: a key
/// below the boundary goes to `slots.less + rank`, a key equal to it to `slots.equal + rank`
/// if that is below `k` (with `slots.ties_only` keys below are counted, not written: they
/// are already). A tile with nothing to write (no key below, and no tie whose slot is
/// below `k`; most tiles when `k` is small) writes nothing. Writes the radix key and the
/// position within the row. Returns the tile's (below, equal) counts packed as
/// `below | equal << 16`. Every unit must call it; a cube may call it tile after tile.
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
    #[comptime] blueprint: RadixBlueprint,
) -> u32 {
    let epu = blueprint.elements_per_unit;
    let first = start + (UNIT_POS * epu) as usize;
    let mut held = Array::<u32>::new(epu as usize);
    let valid =
        load_tile_keys_blocked::<K>(values, &mut held, row_base, start, len, read, blueprint);
    let prefix = cube_exclusive_sum(
        held_classes(&held, valid, bound, epu),
        blueprint.units,
        blueprint.use_planes,
    );
    let total = prefix.total;
    // Uniform per cube.
    if ((total & 0xFFFFu32) > 0u32 && !slots.ties_only)
        || ((total >> 16u32) > 0u32 && slots.equal < slots.k)
    {
        let mut less = slots.less + (prefix.before & 0xFFFFu32);
        let mut equal = slots.equal + (prefix.before >> 16u32);
        #[unroll]
        for e in 0..epu {
            if (valid >> e) & 1u32 == 1u32 {
                let key = held[e as usize];
                let position = (first + e as usize) as u32;
                if key < bound {
                    if !slots.ties_only {
                        // Always below k: fewer than k keys of the row are below the boundary.
                        cand_keys[slots.out_base + less as usize] = key;
                        cand_positions[slots.out_base + less as usize] = position;
                    }
                    less += 1u32;
                } else if key == bound {
                    if equal < slots.k {
                        cand_keys[slots.out_base + equal as usize] = key;
                        cand_positions[slots.out_base + equal as usize] = position;
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
pub fn ranks_in_row(keys: &Shared<[u32]>, #[comptime] blueprint: RadixBlueprint) -> Array<u32> {
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

/// What [`histogram_tile`] hands on to the next tile of its cube: the range of the keys the
/// unit counted, and how many candidates the cube holds staged (the same in every unit).
#[derive(CubeType, Clone, Copy)]
pub struct TileHistogram {
    /// The range of the keys the unit counted.
    pub range: U32Range,
    /// Candidates staged in the cube's `staging`, not yet appended.
    pub staged: u32,
}

/// Device-wide radix select, one pass over one tile of a row's current candidate source
/// (`source`: the input or a candidate buffer, `source_len` keys): [`count_tile_digits`],
/// and, when `target` is a candidate buffer, the counted keys staged in shared memory
/// (`staging`, a tile's worth, holding `staged` keys from the cube's earlier tiles) and
/// appended to the target in blocks ([`append_staged`]) only when the next tile's keys would
/// not fit, so a row's `appended` counter takes one atomic per block, not per tile (through
/// cubecl-spirv every buffer atomic is acquire/release: `docs/PERFORMANCE.md`, thirty-fifth
/// session); the cube appends what is left after its last tile. Blocks land in the order
/// cubes get there, which nothing downstream depends on (later passes only count). Every
/// unit must call it.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn histogram_tile<K: Numeric>(
    values: &[K],
    cand_a: &mut [u32],
    cand_b: &mut [u32],
    bins: &Shared<[Atomic<u32>]>,
    staging: &mut Shared<[u32]>,
    staged: u32,
    appended: &mut [Atomic<u32>],
    row: usize,
    row_base: usize,
    start: usize,
    state: &RowState,
    shift: u32,
    #[comptime] bits: u32,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
) -> TileHistogram {
    let epu = blueprint.elements_per_unit;
    let mut held = Array::<u32>::new(epu as usize);
    let source_len = state.source_len as usize;
    // Candidates are radix keys already: read as `u32`s, ascending (themselves).
    let candidates = comptime!(KeyRead::RADIX);
    let valid = if state.source == SOURCE_INPUT {
        load_tile_keys::<K>(
            values, &mut held, row_base, start, source_len, read, blueprint,
        )
    } else if state.source == SOURCE_A {
        let source = cand_a.slice(0usize, cand_a.len());
        load_tile_keys::<u32>(
            source, &mut held, row_base, start, source_len, candidates, blueprint,
        )
    } else {
        let source = cand_b.slice(0usize, cand_b.len());
        load_tile_keys::<u32>(
            source, &mut held, row_base, start, source_len, candidates, blueprint,
        )
    };
    let hits = count_tile_digits(bins, &held, valid, state.bound, shift, bits, blueprint);
    let mut now_staged = staged;
    if state.target != SOURCE_INPUT {
        // Uniform per cube (a pass with nowhere to append skips the rank altogether), as are
        // `staged` and the total. The hits go to shared memory in rank order after the staged
        // ones. (A block just appended leaves `staging` free: `append_staged` ends on a
        // barrier; otherwise earlier tiles' hits sit in the slots before these.)
        let ranks = cube_exclusive_sum(hits.count, blueprint.units, blueprint.use_planes);
        if now_staged + ranks.total > comptime!(blueprint.tile() as u32) {
            append_staged(
                cand_a, cand_b, staging, now_staged, appended, row, row_base, state,
            );
            now_staged = 0u32;
        }
        let mut slot = (now_staged + ranks.before) as usize;
        #[unroll]
        for e in 0..epu {
            if (hits.mask >> e) & 1u32 == 1u32 {
                staging[slot] = held[e as usize];
                slot += 1;
            }
        }
        now_staged += ranks.total;
    }
    TileHistogram {
        range: hits.range,
        staged: now_staged,
    }
}

/// Appends a cube's `staged` candidates (`staging`, written by every unit) to its row's
/// target buffer: one block of slots from the row's `appended` counter, written out in one
/// coalesced sweep. Uniform per cube: every unit must call it; it leaves `staging` free to
/// write again.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn append_staged(
    cand_a: &mut [u32],
    cand_b: &mut [u32],
    staging: &mut Shared<[u32]>,
    staged: u32,
    appended: &mut [Atomic<u32>],
    row: usize,
    row_base: usize,
    state: &RowState,
) {
    let mut block = Shared::<u32>::new();
    sync_cube();
    if UNIT_POS == 0 {
        *block = appended[row].fetch_add(staged);
    }
    sync_cube();
    let out = row_base + *block as usize;
    let mut j = UNIT_POS;
    while j < staged {
        if state.target == SOURCE_A {
            cand_a[out + j as usize] = staging[j as usize];
        } else {
            cand_b[out + j as usize] = staging[j as usize];
        }
        j += CUBE_DIM;
    }
    // Every unit has read `staging` and `block` before either is written again.
    sync_cube();
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
    #[comptime] blueprint: RadixBlueprint,
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

/// Cubes of up to this many units take the minima bound's `k`-th smallest unit key by
/// counting ([`kth_smallest_by_counting`]), larger ones by [`cube_select`]: a few dozen shared
/// reads and two barriers, where the digit select's four rounds (bins cleared, counted and
/// scanned, each behind barriers) cost the small rank-by-counting cubes 3.5x their kernel time
/// at [16384, 128] on the H200 (0.021 -> 0.074 ms raw; `bench/results/h200/8-rows`,
/// `9-rows`).
const COUNTED_KTH_UNITS: u32 = 64;

/// The `k`-th smallest (1-based, `1 <= k <= CUBE_DIM`) of the keys the cube's units hold, one
/// key each, ties by unit, by counting: each unit counts the keys below its own (equal ones of
/// lower units too), and the one with `k - 1` below publishes its key. Every unit must call it
/// and gets the key.
#[cube]
fn kth_smallest_by_counting(key: u32, k: u32, #[comptime] blueprint: RadixBlueprint) -> u32 {
    let units = comptime!(blueprint.units);
    let mut keys = Shared::<[u32]>::new_slice(comptime!(units as usize));
    let mut published = Shared::<[u32]>::new_slice(1usize);
    keys[UNIT_POS as usize] = key;
    sync_cube();
    let mut below = 0u32;
    #[unroll]
    for i in 0..units {
        let other = keys[i as usize];
        if other < key || (other == key && i < UNIT_POS) {
            below += 1u32;
        }
    }
    // Exactly one unit has `k - 1` below it (ties are ordered by unit).
    if below == k - 1 {
        published[0] = key;
    }
    sync_cube();
    published[0]
}

/// One sweep over a row: its keys at or below `bound` go to `keys` (and, `with_positions`,
/// their row positions to `positions`) in arrival order, with slots from the shared counters
/// `found` (which must start at 0 behind a barrier), while they fit `capacity`. A counter only
/// grows, so a unit that sees it past its limit stops appending but the counts stay exact up
/// to the limit.
///
/// Without `split_ties` one counter (`found[0]`) serves every key: after a barrier it is the
/// number staged (slots `0..found[0]`), or more than `capacity` where they did not all fit.
/// With `split_ties` keys below `bound` take slots from the front (`found[0]`, while under
/// `capacity`) and keys equal to it from the back (`found[1]`: slot `capacity - 1 - t`, while
/// `t < capacity - reserve`), so however many ties a row has, its first `reserve` keys below
/// the bound are never overwritten: a tied row (fewer than `k` keys below its bound, with
/// `reserve = k - 1`) keeps all of them staged. Every unit must call it.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage_under_bound<K: Numeric>(
    values: &[K],
    keys: &mut Shared<[u32]>,
    positions: &mut Shared<[u32]>,
    found: &Shared<[Atomic<u32>]>,
    row_base: usize,
    len: usize,
    bound: u32,
    reserve: u32,
    #[comptime] capacity: u32,
    #[comptime] split_ties: bool,
    #[comptime] with_positions: bool,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
) {
    let tile_keys = comptime!(blueprint.tile());
    let tiles = len.div_ceil(tile_keys);
    let tie_limit = capacity - reserve;
    let mut held = Array::<u32>::new(blueprint.elements_per_unit as usize);
    let mut appending = true;
    let mut appending_ties = true;
    for tile in 0..tiles {
        let start = tile * tile_keys;
        let valid = load_tile_keys::<K>(values, &mut held, row_base, start, len, read, blueprint);
        #[unroll]
        for e in 0..blueprint.elements_per_unit {
            let key = held[e as usize];
            if (valid >> e) & 1u32 == 1u32 && key <= bound {
                let position = (start + (e * CUBE_DIM + UNIT_POS) as usize) as u32;
                // Past the staging area: not written.
                let mut slot = 0xFFFF_FFFFu32;
                if comptime!(split_ties) {
                    if key < bound {
                        if appending {
                            slot = found[0].fetch_add(1u32);
                        }
                    } else if appending_ties {
                        let tie = found[1].fetch_add(1u32);
                        if tie < tie_limit {
                            slot = capacity - 1u32 - tie;
                        }
                    }
                } else if appending {
                    slot = found[0].fetch_add(1u32);
                }
                if slot < capacity {
                    keys[slot as usize] = key;
                    if with_positions {
                        positions[slot as usize] = position;
                    }
                }
            }
        }
        appending = found[0].load() <= capacity;
        if comptime!(split_ties) {
            appending_ties = found[1].load() <= tie_limit;
        }
    }
}

/// The row's boundary (its `k`-th smallest key, 1-based, and that key's rank among its
/// equals) from a sample, where the sample does not mislead (`found`):
/// 1. each unit reads one key, evenly spaced over the row, into `staged`, and the sample's
///    `rank`-th smallest key ([`cube_select`] over them) is the *bound* (the host picks
///    `rank` so that, in a row in random order, at least `k` keys reach it and the tile
///    holds the keys under it, but for odds below 1e-9);
/// 2. one sweep stages the row's keys at or below the bound in `staged`
///    ([`stage_under_bound`]);
/// 3. where at least `k` and at most a tile of them were found, the row's `k`-th key is the
///    `k`-th of the staged keys ([`cube_select`] over them): no digit sweeps of the row.
///
/// Otherwise (adversarial orders: a sample of the row's best or worst keys) `found` is false
/// and the caller runs its full select. `1 <= k <= len`, `1 <= rank <= CUBE_DIM`. Every unit
/// must call it and gets the same result.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn sampled_row_select<K: Numeric>(
    values: &[K],
    staged: &mut Shared<[u32]>,
    bins: &Shared<[Atomic<u32>]>,
    row_base: usize,
    len: usize,
    k: u32,
    rank: u32,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
) -> SampledSelect {
    let units = comptime!(blueprint.units as usize);
    let capacity = comptime!(blueprint.tile() as u32);
    let found = Shared::<[Atomic<u32>]>::new_slice(1usize);
    // `stage_under_bound` writes no positions here.
    let mut no_positions = Shared::<[u32]>::new_slice(1usize);
    if UNIT_POS == 0 {
        found[0].store(0u32);
    }
    // Positions `floor(u * len / units)`: distinct where `len >= units`, always in the row.
    let position = (UNIT_POS as usize * len) / units;
    staged[UNIT_POS as usize] = key_at::<K>(values, row_base + position, read);
    sync_cube();
    let bound = cube_select::<K>(
        values,
        &*staged,
        bins,
        row_base,
        units,
        rank,
        CubeKeys::Staged,
        read,
        blueprint,
    )
    .prefix;
    stage_under_bound::<K>(
        values,
        staged,
        &mut no_positions,
        &found,
        row_base,
        len,
        bound,
        0u32,
        capacity,
        false,
        false,
        read,
        blueprint,
    );
    sync_cube();
    let count = found[0].load();
    let mut result = SampledSelect {
        found: false,
        prefix: 0u32,
        need: 0u32,
    };
    // Uniform per cube.
    if k <= count && count <= capacity {
        let selected = cube_select::<K>(
            values,
            &*staged,
            bins,
            row_base,
            count as usize,
            k,
            CubeKeys::Staged,
            read,
            blueprint,
        );
        result.found = true;
        result.prefix = selected.prefix;
        result.need = selected.need;
    }
    result
}

/// What [`sampled_row_select`] found: where `found`, the row's boundary key (`prefix`) and
/// the rank of its `k`-th key among the keys equal to it (`need`), as [`cube_select`]
/// returns them.
#[derive(CubeType, Clone, Copy)]
pub struct SampledSelect {
    pub found: bool,
    pub prefix: u32,
    pub need: u32,
}

/// One unit's share of [`minima_bound`]: whether few enough keys lay under the bound (`fits`,
/// the same for every unit), and the radix key, row position and rank of the candidate the
/// unit ranked (`rank` is `u32::MAX` when it ranked none); the bound, and (with `count_below`)
/// how many keys of the row lie below it where they did not fit (`below`, the same for every
/// unit; past `CUBE_DIM` it may stop counting): where that is under `k`, the bound is the
/// row's `k`-th key and the keys below it are ranked already.
#[derive(CubeType, Clone, Copy)]
pub struct BoundedRank {
    pub fits: bool,
    pub key: u32,
    pub position: u32,
    pub rank: u32,
    pub bound: u32,
    pub below: u32,
}

/// The row's `k` smallest keys when they are few and easy to bound (`1 <= k <= CUBE_DIM`,
/// `k <= len`), in two sweeps of the row and no digit passes:
/// 1. every unit takes the smallest key it reads ([`unit_min_key`]), and the `k`-th smallest
///    of those minima ([`kth_smallest_by_counting`] or [`cube_select`]) is the *bound*: `k`
///    distinct units each read a key at or below it, so the row's `k`-th smallest key is at
///    or below it too, and every chosen key (ties included) and every key that outranks one
///    is at or below it;
/// 2. the keys at or below the bound, with their positions, go to shared memory
///    ([`stage_under_bound`]: arrival order, which nothing depends on), and each is ranked
///    among them by (key, position), which is its rank in the row.
///
/// For random data about `k` keys qualify. Where more than `CUBE_DIM` do (all-equal or
/// low-entropy rows: the bound is then a common key), or with `count_below` more than
/// `CUBE_DIM - (k - 1)` ties, `fits` is false. With `count_below` the
/// keys below the bound are staged apart from its ties (the first `k - 1` of them always
/// kept), so where fewer than `k` lie below it (a tied row: the bound is the row's `k`-th key)
/// they are ranked among themselves all the same, and the caller takes the first `k - below`
/// ties in row order. Otherwise (or without `count_below`) nothing is ranked and the caller
/// ranks by its full method. The rank-by-counting cube and the one-cube-per-row radix select
/// both try it first for small `k`. Every unit must call it.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn minima_bound<K: Numeric>(
    values: &[K],
    bins: &Shared<[Atomic<u32>]>,
    row_base: usize,
    len: usize,
    k: u32,
    #[comptime] count_below: bool,
    #[comptime] read: KeyRead,
    #[comptime] blueprint: RadixBlueprint,
) -> BoundedRank {
    let capacity = comptime!(blueprint.units);
    let mut keys = Shared::<[u32]>::new_slice(comptime!(blueprint.units as usize));
    let mut positions = Shared::<[u32]>::new_slice(comptime!(blueprint.units as usize));
    // One counter, or two where ties are staged apart (`count_below`).
    let found = Shared::<[Atomic<u32>]>::new_slice(comptime!(1 + count_below as usize));
    if UNIT_POS == 0 {
        found[0].store(0u32);
        if comptime!(count_below) {
            found[1].store(0u32);
        }
    }
    let smallest = unit_min_key::<K>(values, row_base, len, read, blueprint);
    // The `k`-th smallest of the units' minima; its first sync also orders the counters'
    // clear before any add.
    let bound = if comptime!(blueprint.units <= COUNTED_KTH_UNITS) {
        kth_smallest_by_counting(smallest, k, blueprint)
    } else {
        keys[UNIT_POS as usize] = smallest;
        sync_cube();
        let units = comptime!(blueprint.units as usize);
        cube_select::<K>(
            values,
            &keys,
            bins,
            row_base,
            units,
            k,
            CubeKeys::Staged,
            read,
            blueprint,
        )
        .prefix
    };
    // Keys below the bound from the front, ties from the back ([`stage_under_bound`]).
    let mut reserve = 0u32;
    if comptime!(count_below) {
        reserve = k - 1u32;
    }
    stage_under_bound::<K>(
        values,
        &mut keys,
        &mut positions,
        &found,
        row_base,
        len,
        bound,
        reserve,
        capacity,
        count_below,
        true,
        read,
        blueprint,
    );
    sync_cube();
    let below = found[0].load();
    let mut ties = 0u32;
    let mut fits = below <= capacity;
    if comptime!(count_below) {
        ties = found[1].load();
        fits = below + ties <= capacity && ties <= capacity - reserve;
    }
    let mut result = BoundedRank {
        fits,
        key: 0u32,
        position: 0u32,
        rank: 0xFFFF_FFFFu32,
        bound,
        below: 0u32,
    };
    // Staged keys to rank: all of them where they fit; in a tied row, the keys below.
    let mut count = 0u32;
    if fits {
        count = below + ties;
    } else if comptime!(count_below) {
        result.below = below;
        if below < k {
            count = below;
        }
    }
    // Uniform per cube. Key `i` of the `count` is in slot `i` when below the front's end,
    // else in the tie at the back (`staged_slot`).
    if UNIT_POS < count {
        let slot = staged_slot(UNIT_POS, below, capacity, count_below);
        let key = keys[slot as usize];
        let position = positions[slot as usize];
        let mut rank = 0u32;
        for j in 0..count {
            let other_slot = staged_slot(j, below, capacity, count_below);
            let other = keys[other_slot as usize];
            if other < key || (other == key && positions[other_slot as usize] < position) {
                rank += 1u32;
            }
        }
        result.key = key;
        result.position = position;
        result.rank = rank;
    }
    result
}

/// Where [`stage_under_bound`] put the `i`-th of the keys it staged: with `split_ties`,
/// `below` of them from the front and the rest (ties) from the back of `capacity` slots;
/// otherwise all from the front.
#[cube]
// The comptime test and the runtime one do not combine into one `if` in a cube function.
#[allow(clippy::collapsible_if)]
fn staged_slot(i: u32, below: u32, #[comptime] capacity: u32, #[comptime] split_ties: bool) -> u32 {
    let mut slot = i;
    if comptime!(split_ties) {
        if i >= below {
            slot = capacity - 1u32 - (i - below);
        }
    }
    slot
}
