//! Decoupled look-back (Merrill & Garland), shared by every single-pass kernel (the scan,
//! compaction): tiles are numbered in launch order by an atomic counter, each publishes its
//! total in a status word, then finds the sum of its row's earlier tiles by walking back over
//! their status words until it meets an inclusive prefix.
//!
//! **Needs forward progress between cubes**: a cube spins on a predecessor that has started
//! but not finished. Launch code gates it to runtimes that promise it (CUDA, HIP).
//!
//! Deterministic: the prefix is folded forward from the nearest inclusive prefix, so it is bit
//! for bit the chain `((t0 + t1) + t2) + ...` however far the walk went.
//!
//! The values are folded with the scan's operator ([`Fold`]: sum, product, minimum or
//! maximum); a status word carries any 32-bit accumulator as its bit pattern.

use cubecl::ir::UIntKind;
use cubecl::prelude::*;
use cubecl::server::Handle;

use super::fill::fill_zero;
use super::fold::{Fold, combine, identity};

/// A look-back launch's workspace: one status word per tile and the tile counter, in one
/// allocation zeroed by one launch (each look-back pass is then one fill and its kernel).
pub(crate) struct Workspace {
    /// `tiles` status words (u64).
    pub status: Handle,
    /// The tile counter (one u32), at a 256-byte boundary past the status words: wgpu binds
    /// storage buffers only at such offsets.
    pub counter: Handle,
}

impl Workspace {
    /// A zeroed workspace for `tiles` tiles.
    pub(crate) fn zeroed(client: &Client, tiles: usize) -> Self {
        let counter_at = (tiles * 8).next_multiple_of(256);
        let workspace = client.empty(counter_at + 4);
        fill_zero(
            client,
            &workspace,
            counter_at / 4 + 1,
            ElemType::UInt(UIntKind::U32),
        );
        Workspace {
            status: workspace.clone(),
            counter: workspace.offset_start(counter_at as u64),
        }
    }
}

/// Status word flags of the look-back: the high 32 bits of a status word; the low 32 bits
/// hold the value's bits.
const FLAG_AGGREGATE: u64 = 1;
const FLAG_INCLUSIVE: u64 = 2;
/// How many predecessors' aggregates one look-back may collect before it waits for an
/// inclusive prefix instead.
const LOOKBACK_WINDOW: usize = 32;

#[cube]
fn pack_status<A: Numeric>(flag: u64, value: A) -> u64 {
    (flag << 32u64) | u64::cast_from(u32::reinterpret(value))
}

#[cube]
fn unpack_status<A: Numeric>(word: u64) -> A {
    A::reinterpret(u32::cast_from(word & 0xFFFF_FFFFu64))
}

/// This cube's tile number, taken from `counter` in the order cubes start (so every
/// predecessor a tile waits on has started). Synchronises the cube.
#[cube]
pub fn take_tile_number(counter: &[Atomic<u32>]) -> usize {
    take_tile_number_at(counter, 0usize)
}

/// [`take_tile_number()`] from the counter `words[at]`.
#[cube]
pub fn take_tile_number_at(words: &[Atomic<u32>], at: usize) -> usize {
    let mut tile_slot = Shared::<u32>::new();
    if UNIT_POS == 0 {
        *tile_slot = words[at].fetch_add(1u32);
    }
    sync_cube();
    *tile_slot as usize
}

/// Flags of a count's 32-bit status word (the onesweep sort's per-digit look-back): the top
/// two bits; the low 30 bits hold the count, so a row's counts must stay below
/// [`COUNT_LIMIT`].
const COUNT_AGGREGATE: u32 = 1 << 30;
const COUNT_INCLUSIVE: u32 = 2 << 30;
const COUNT_VALUE: u32 = (1 << 30) - 1;
/// The bit of [`COUNT_AGGREGATE`] (and, one above, of [`COUNT_INCLUSIVE`]).
const COUNT_FLAG_SHIFT: u32 = 30;
/// Counts a per-digit look-back carries are below this.
pub const COUNT_LIMIT: usize = 1 << 30;

/// Per-digit look-back of counts, first half: tile `tile` (part `part` of its row) publishes
/// its `count` of `digit` in `status[tile * digits + digit]`, as an aggregate, or (a row's
/// first tile) as the inclusive `seed + count` at once (the seed is the digit's start in the
/// row). Publish as early as the count is known, walk ([`digit_prefix()`]) as late as possible:
/// the later the walk, the nearer the inclusive prefix it meets.
#[cube]
pub fn publish_digit_count(
    status: &[Atomic<u32>],
    tile: usize,
    part: usize,
    digits: u32,
    digit: u32,
    count: u32,
    seed: u32,
) {
    let own = tile * digits as usize + digit as usize;
    if part == 0 {
        status[own].store(COUNT_INCLUSIVE | (seed + count));
    } else {
        status[own].store(COUNT_AGGREGATE | count);
    }
}

/// Per-digit look-back of counts, second half (after [`publish_digit_count()`], by the same
/// unit): `seed` plus the counts of `digit` in the row's earlier tiles, found by walking back
/// over their status words until an inclusive prefix; publishes this tile's own inclusive
/// prefix. A row's first tile returns `seed`. The walk reads `window` predecessors' words at
/// once (independent loads: one round trip for up to `window` aggregates) and takes them
/// nearest first, stopping at an inclusive prefix, or at a word not yet published, which the
/// next round reads again. Integer sums, so the result is exact whatever the walk met. Units of
/// one cube may call it for different digits (no cube-wide step).
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn digit_prefix(
    status: &[Atomic<u32>],
    tile: usize,
    part: usize,
    digits: u32,
    digit: u32,
    count: u32,
    seed: u32,
    #[comptime] window: u32,
) -> u32 {
    let own = tile * digits as usize + digit as usize;
    let mut prefix = seed;
    if part != 0 {
        // Distance (in tiles) of the nearest predecessor not yet taken; the row's first tile,
        // `part` back, always ends the walk (it publishes an inclusive prefix).
        let mut back = 1usize;
        let mut searching = true;
        while searching {
            let mut words = Array::<u32>::new(window as usize);
            #[unroll]
            for j in 0..window {
                let distance = back + j as usize;
                words[j as usize] = 0u32;
                if distance <= part {
                    words[j as usize] = status[own - distance * digits as usize].load();
                }
            }
            // Taken nearest first while every nearer word was an aggregate. Flags as 0/1
            // words and masks, not branches and booleans: the walk is the sort pass's longest
            // stall (`bench/results/h200/21-a`, SASS), and each branch a word cost a
            // reconvergence and byte moves.
            let mut taking = 1u32;
            let mut found = 0u32;
            #[unroll]
            for j in 0..window {
                let word = words[j as usize];
                let aggregate = (word >> COUNT_FLAG_SHIFT) & 1u32;
                let inclusive = word >> comptime!(COUNT_FLAG_SHIFT + 1);
                let take = taking & (aggregate | inclusive);
                prefix += word & COUNT_VALUE & (0u32 - take);
                found |= take & inclusive;
                taking = take & aggregate;
                back += taking as usize;
            }
            searching = found == 0u32;
        }
        status[own].store(COUNT_INCLUSIVE | (prefix + count));
    }
    prefix
}

/// Publishes tile `tile`'s `total` (tile `part` of its row) and returns, to every unit of the
/// cube, the fold of the earlier tiles of its row (the identity for a row's first tile). With planes the first plane walks back
/// `PLANE_DIM` predecessors per read; without, unit 0 walks alone. Every unit must call it.
#[cube]
pub fn tile_prefix<A: Numeric>(
    status: &[Atomic<u64>],
    tile: usize,
    part: usize,
    total: A,
    #[comptime] fold: Fold,
    #[comptime] use_planes: bool,
) -> A {
    let mut offset_slot = Shared::<A>::new();
    if use_planes {
        if UNIT_POS < PLANE_DIM {
            let prefix = look_back_plane::<A>(status, tile, part, total, fold);
            if UNIT_POS == 0 {
                *offset_slot = prefix;
            }
        }
    } else if UNIT_POS == 0 {
        *offset_slot = look_back::<A>(status, tile, part, total, fold);
    }
    sync_cube();
    *offset_slot
}

/// Publishes this tile's total, finds the sum of every earlier tile of its row, publishes
/// the inclusive prefix and returns the exclusive one. Run by one unit.
#[cube]
fn look_back<A: Numeric>(
    status: &[Atomic<u64>],
    tile: usize,
    part: usize,
    total: A,
    #[comptime] fold: Fold,
) -> A {
    let mut prefix = identity::<A>(fold);
    if part == 0 {
        status[tile].store(pack_status::<A>(FLAG_INCLUSIVE, total));
    } else {
        status[tile].store(pack_status::<A>(FLAG_AGGREGATE, total));
        let mut stash = Array::<A>::new(LOOKBACK_WINDOW);
        let mut stashed = 0usize;
        let mut predecessor = tile - 1;
        let mut searching = true;
        while searching {
            let word = status[predecessor].load();
            let flag = word >> 32u64;
            if flag == FLAG_INCLUSIVE {
                prefix = unpack_status::<A>(word);
                searching = false;
            } else if flag == FLAG_AGGREGATE && stashed < LOOKBACK_WINDOW {
                stash[stashed] = unpack_status::<A>(word);
                stashed += 1;
                predecessor -= 1;
            }
            // Otherwise the predecessor has not published yet, or the window is full and we
            // wait for an inclusive prefix: read the same word again.
        }
        for i in 0..stashed {
            prefix = combine::<A>(prefix, stash[stashed - 1 - i], fold);
        }
        status[tile].store(pack_status::<A>(
            FLAG_INCLUSIVE,
            combine::<A>(prefix, total, fold),
        ));
    }
    prefix
}

/// [`look_back`] by a whole plane: each lane reads one predecessor's status word (lane `l`
/// reads tile `end - 1 - l` of a window ending at `end`, first `tile`), so one round of reads
/// covers `PLANE_DIM` predecessors. The nearest inclusive prefix (lowest lane) is the base;
/// once every lane before it holds an aggregate, the window is folded from the base down to
/// lane 0 (higher lanes hold earlier tiles). Until a window holds an inclusive prefix with
/// ready aggregates before it, the plane reads the window again, except:
///
/// - **Exact folds** ([`Fold::exact`]: integers, minima, maxima) give the same bits in any
///   grouping, so a window of aggregates only is folded (a butterfly, log2(`PLANE_DIM`)
///   steps) and the walk moves one window further back: a tile never waits for an inclusive
///   prefix to come within reach, and the fold of a window is 5 steps, not 32.
/// - **Float sums and products** fold forward lane by lane from the base (every lane's value is
///   shuffled; those past the base are dropped), the order of the serial walk, so the prefix is bit for bit the chain however far the walk went; the
///   window does not move (moving it would fold part of the chain first).
///
/// Called by every unit of one plane; returns the exclusive prefix to all of them.
#[cube]
fn look_back_plane<A: Numeric>(
    status: &[Atomic<u64>],
    tile: usize,
    part: usize,
    total: A,
    #[comptime] fold: Fold,
) -> A {
    let mut prefix = identity::<A>(fold);
    if part == 0 {
        if UNIT_POS_PLANE == 0 {
            status[tile].store(pack_status::<A>(FLAG_INCLUSIVE, total));
        }
    } else {
        if UNIT_POS_PLANE == 0 {
            status[tile].store(pack_status::<A>(FLAG_AGGREGATE, total));
        }
        let lane = UNIT_POS_PLANE as usize;
        // The window's first tile is `end - 1`; `before_end` tiles of the row precede `end`.
        let mut end = tile;
        let mut before_end = part;
        // Exact folds: the fold of the windows already passed (later tiles than the window).
        let mut later = identity::<A>(fold);
        let mut searching = true;
        while searching {
            // Lanes past the row's first tile read nothing: they act as an inclusive identity,
            // never chosen since the row's first tile (a nearer lane) is always inclusive.
            let word = if lane < before_end {
                status[end - 1 - lane].load()
            } else {
                pack_status::<A>(FLAG_INCLUSIVE, identity::<A>(fold))
            };
            let flag = word >> 32u64;
            let value = unpack_status::<A>(word);
            let base = plane_min(if flag == FLAG_INCLUSIVE {
                UNIT_POS_PLANE
            } else {
                PLANE_DIM
            });
            let ready = plane_all(UNIT_POS_PLANE >= base || flag == FLAG_AGGREGATE);
            if ready {
                if comptime!(fold.exact()) {
                    // Lanes past the base hold tiles before it: out of the fold.
                    let masked = if UNIT_POS_PLANE > base {
                        identity::<A>(fold)
                    } else {
                        value
                    };
                    let window = plane_fold_descending::<A>(masked, fold);
                    later = combine::<A>(window, later, fold);
                    if base < PLANE_DIM {
                        prefix = later;
                        searching = false;
                    } else {
                        end -= PLANE_DIM as usize;
                        before_end -= PLANE_DIM as usize;
                    }
                } else if base < PLANE_DIM {
                    // A fixed count of steps whose shuffles do not wait on the fold: the
                    // compiler issues them back to back (a loop of `base` steps measured 15%
                    // slower on the H200: one shuffle's latency per step).
                    let mut acc = identity::<A>(fold);
                    for step in 0..PLANE_DIM {
                        let from = PLANE_DIM - 1 - step;
                        let v = plane_shuffle(value, from);
                        if from == base {
                            acc = v;
                        } else if from < base {
                            acc = combine::<A>(acc, v, fold);
                        }
                    }
                    prefix = acc;
                    searching = false;
                }
            }
        }
        if UNIT_POS_PLANE == 0 {
            status[tile].store(pack_status::<A>(
                FLAG_INCLUSIVE,
                combine::<A>(prefix, total, fold),
            ));
        }
    }
    prefix
}

/// The fold of one value per lane over the plane, where lane 0 holds the *latest* element and
/// the highest lane the earliest (a look-back window), given to every lane. A butterfly, so
/// its grouping is a tree: exact folds only ([`Fold::exact`]). Every lane must call it.
#[cube]
fn plane_fold_descending<A: Numeric>(value: A, #[comptime] fold: Fold) -> A {
    let mut acc = value;
    let mut distance = 1u32;
    while distance < PLANE_DIM {
        let other = plane_shuffle_xor(acc, distance);
        // The block with the higher lanes holds the earlier elements.
        let mine_earlier = (UNIT_POS_PLANE & distance) != 0;
        acc = combine::<A>(
            select(mine_earlier, acc, other),
            select(mine_earlier, other, acc),
            fold,
        );
        distance *= 2u32;
    }
    acc
}
