//! The distinct values of a row by hashing: `unique`'s path where values repeat, instead of
//! sorting every element. Each element of a row of 32-bit values (f32, i32, u32) goes into an
//! open-addressed table of raw bit patterns in global memory (linear probing from a mixed hash,
//! `u32::MAX` marking an empty slot); the table's occupied slots then go through the
//! compaction engine ([`crate::compact`]) and the few distinct values through the sort engine
//! ([`crate::sort`]). Only the distinct values are sorted: at 2^28 elements of 2^20 distinct
//! values the sort of the whole row is replaced by one pass over it whose probes stay in a
//! 16 MiB table.
//!
//! # Semantics
//! The output is what the sort path gives (`unique`'s: sieve's order, NaNs one value and the
//! two zeros one value, each group's first element in row order as its representative):
//! - A value whose bit pattern is the only one of its group goes into the table as it is.
//! - Two groups hold several patterns, and one pattern is the empty mark; their elements stay
//!   out of the table, and the first position of each is kept instead (an atomic minimum),
//!   so their representative is the group's first element:
//!   - *the mark's group*: every NaN for f32 (`u32::MAX` is a NaN's bits), the value with bits
//!     `u32::MAX` for i32 (-1) and u32;
//!   - *the zeros*: -0.0 and +0.0 for f32.
//! - The result does not depend on which unit inserts first: the table holds each pattern
//!   once, and the distinct values come out sorted.
//!
//! # Giving up
//! The table has [`DistinctOptions::max_table_slots`] slots at most (and four per element
//! below that). A value that finds no place within [`PROBES`] slots (the table is crowded:
//! more distinct values than it holds comfortably) sets a flag. The insert's cubes read it
//! before each chunk of the row they take, a unit stops at its first failed value, and a
//! probe walk that reaches [`FLAG_PROBES`] reads it too, so the pass stops soon after (a
//! crowded table's walks are long: before these checks, giving up cost 1 ms at 2^28 elements
//! on an H100, `54-b`). Then
//! [`count_distinct`] writes a count of 0, which no non-empty row has: the caller sorts
//! instead. Rows of `u32::MAX` elements or more are refused (positions are
//! 32-bit).
//!
//! # Steps
//! [`count_distinct`] fills the table, inserts, compacts the table and writes the count (the
//! caller reads it); [`write_distinct`] sorts that many values into an output of exactly that
//! size. Both take the same workspace ([`distinct_workspace`] `u32` words).

use cubecl::ir::{ElemType, UIntKind};
use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::common::address::{address_type, check_index_dtype};
use crate::common::buffers::{BufferRules, bind};
use crate::common::cube::{U32Range, cube_range};
use crate::common::fill::fill;
use crate::common::grid::{cube_count_1d, linear_cube_index};
use crate::compact::{
    CompactIo, CompactOptions, CompactProblem, FlagRule, Flags, Rejected, compact,
};
use crate::scan::launch::vector_size_for;
use crate::sort::launch::sort_with;
use crate::sort::{SortIo, SortOptions, SortOrder, SortProblem};
use crate::{DeviceCaps, Dtype, SieveError};

/// The most slots a table probes for one value before the insert gives up. A CPU simulation
/// of linear probing from uniform hashes into 2^22 slots (the fifty-third session; the set of
/// occupied slots, and so the longest run, does not depend on the order of the inserts) took
/// at most 15 probes for 2^20 distinct values (a quarter full), 52 for 2^21 (half), and past
/// 64 for 18 values of 2.5 x 2^20 and for 934 of 3 x 2^20: a table gives up between about
/// half and five eighths full.
pub const PROBES: u32 = 64;

/// Default most slots of a table: 2^22 (16 MiB of `u32`s), within the L2 cache of the GPUs
/// sieve was measured on (50 MB on the H100 and H200), so probes stay in it. Rows of more
/// than about 2^21 distinct values crowd it and give up ([`PROBES`]).
pub const MAX_TABLE_SLOTS: usize = 1 << 22;

/// Bit pattern of an empty slot.
const EMPTY: u32 = u32::MAX;

/// Units of an insert cube.
const INSERT_UNITS: u32 = 256;

/// Elements an insert unit takes by default (in vectors of up to 4): several probes in
/// flight a unit.
pub const INSERT_ELEMENTS: u32 = 8;

/// Words of the workspace's header (first positions and the give-up flag), and the
/// alignment of every region of the workspace, in `u32` words (4 KiB: a multiple of any
/// device's binding alignment sieve runs on; checked at the call).
const REGION_WORDS: usize = 1024;

/// Header word: the first position of the mark's group (`u32::MAX`: none).
const FIRST_MARKED: usize = 0;
/// Header word: the first position of a zero (`u32::MAX`: none).
const FIRST_ZERO: usize = 1;
/// Header word: 0 once an insert gave up (`u32::MAX` until then).
const GAVE_UP: usize = 2;
/// Header word: the chunks the insert's cubes have claimed, less one (starts at `u32::MAX`).
const NEXT_CHUNK: usize = 3;
/// Header words the insert reads and writes.
const HEADER_WORDS: usize = 4;

/// An insert whose probes reach this many reads the give-up flag, and stops if it is set.
pub const FLAG_PROBES: u32 = 16;

/// Insert cubes a multiprocessor by default ([`DistinctOptions::cubes_per_multiprocessor`]):
/// 0, a cube a chunk, the grid the fifty-fourth session timed (`54-b`). A grid of a few cubes
/// a multiprocessor claiming chunks (16, say) skips the cubes that start after a give-up only
/// to return, but no GPU has timed it yet, so it is not the default.
pub const INSERT_CUBES_PER_MULTIPROCESSOR: u32 = 0;

/// Multiprocessors assumed where the device does not say (wgpu).
const ASSUMED_MULTIPROCESSORS: u32 = 128;

/// Options of one call (plain data; the defaults are this module's constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistinctOptions {
    /// The most slots a table may have: a power of two, at least 1024.
    pub max_table_slots: usize,
    /// Elements each unit of the insert pass takes: a multiple of 4 in 4..=32.
    pub elements_per_unit: u32,
    /// Insert cubes a multiprocessor (at most 64; 128 multiprocessors assumed where the
    /// device does not say), which claim chunks of the row from a counter; 0: a cube a chunk,
    /// each taking the chunk of its index.
    pub cubes_per_multiprocessor: u32,
}

impl Default for DistinctOptions {
    fn default() -> Self {
        DistinctOptions {
            max_table_slots: MAX_TABLE_SLOTS,
            elements_per_unit: INSERT_ELEMENTS,
            cubes_per_multiprocessor: INSERT_CUBES_PER_MULTIPROCESSOR,
        }
    }
}

/// The buffers of one call, shared by its two steps.
#[derive(Debug, Clone, Copy)]
pub struct DistinctIo<'a> {
    /// `[len]` values.
    pub values: &'a Handle,
    /// Their dtype: f32, i32 or u32 ([`supports`]).
    pub value_dtype: Dtype,
    /// [`distinct_workspace`] `u32` words, written by step one and read by step two.
    pub workspace: &'a Handle,
}

/// Whether the hash path takes values of `dtype` (the 32-bit ones, whose bits it keeps).
pub fn supports(dtype: Dtype) -> bool {
    matches!(dtype, Dtype::F32 | Dtype::I32 | Dtype::U32)
}

/// Slots of the table for a row of `len` elements: four per element (a power of two, at
/// least 1024), at most `max_slots`.
fn table_slots(len: usize, max_slots: usize) -> usize {
    (len.max(1) * 4).next_power_of_two().clamp(1024, max_slots)
}

/// The workspace's regions, in `u32` words from its start: the header, the table (the two
/// filled by one fill), the compaction's count, and the survivors (the table's values, then
/// the first of each group kept aside).
#[derive(Debug, Clone, Copy)]
struct Layout {
    slots: usize,
}

impl Layout {
    fn table(&self) -> usize {
        REGION_WORDS
    }
    fn count(&self) -> usize {
        REGION_WORDS + self.slots
    }
    fn survivors(&self) -> usize {
        2 * REGION_WORDS + self.slots
    }
    fn words(&self) -> usize {
        // The table's survivors and the two kept aside.
        self.survivors() + self.slots + 2
    }
}

/// `u32` words of the workspace of a row of `len` elements at `options` (at the defaults, a
/// bound that needs no device, for callers that declare it first: Burn's Fusion).
pub fn distinct_workspace(len: usize, options: DistinctOptions) -> usize {
    Layout {
        slots: table_slots(len, options.max_table_slots),
    }
    .words()
}

/// The murmur3 finaliser: every input bit moves every output bit, so nearby values (small
/// integers, floats of one exponent) spread over the table.
#[cube]
fn mix(bits: u32) -> u32 {
    let mut h = bits ^ (bits >> 16u32);
    h *= 0x85EB_CA6Bu32;
    h ^= h >> 13u32;
    h *= 0xC2B2_AE35u32;
    h ^ (h >> 16u32)
}

/// Which values stay out of the table (see the module docs): `(marked, zero)`.
#[cube]
fn set_aside(bits: u32, #[comptime] float: bool) -> (bool, bool) {
    if float {
        let magnitude = bits & 0x7FFF_FFFFu32;
        (magnitude > 0x7F80_0000u32, magnitude == 0u32)
    } else {
        (bits == EMPTY, false)
    }
}

/// Puts `bits` (not [`EMPTY`]) into the table from slot `slot`, whose word `held` was read
/// already; false if [`PROBES`] slots held other values, or if at [`FLAG_PROBES`] probes
/// another insert has given up (a crowded table's probes are long: they stop early instead
/// of walking it). A weak exchange may fail with the slot still empty: the slot is read
/// again and tried again (each try counts as a probe).
#[cube]
fn insert(
    table: &[Atomic<u32>],
    header: &[Atomic<u32>],
    bits: u32,
    slot: u32,
    held: u32,
    mask: u32,
) -> bool {
    let mut at = slot;
    let mut seen = held;
    let mut probes = 1u32;
    let mut placed = seen == bits;
    while !placed && probes < PROBES {
        if seen == EMPTY {
            let old = table[at as usize].compare_exchange_weak(EMPTY, bits);
            seen = old;
            if old == EMPTY {
                seen = table[at as usize].load();
            }
        }
        if seen == bits {
            placed = true;
        } else {
            if seen != EMPTY {
                at = (at + 1u32) & mask;
                seen = table[at as usize].load();
            }
            probes += 1u32;
            placed = seen == bits;
            if probes == FLAG_PROBES && !placed && header[GAVE_UP].load() != EMPTY {
                probes = PROBES;
            }
        }
    }
    placed
}

/// Compile-time shape of an insert cube.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct InsertLayout {
    /// Units of a cube.
    units: u32,
    /// Vectors each unit takes of a chunk (at `v * units + UNIT_POS` of the chunk).
    vectors_per_unit: u32,
    /// Elements a vector (the launch's vector size).
    width: u32,
    /// f32 values (two groups set aside) or integers (one).
    float: bool,
    /// The cube-wide minimum of first positions through plane operations.
    use_planes: bool,
    /// Cubes take chunks from a counter until none is left (a grid of a few cubes a
    /// multiprocessor), or each takes the chunk of its own index (a cube a chunk).
    claimed: bool,
}

/// Inserts every element of the row into the table, a chunk of `units * vectors_per_unit`
/// vectors at a time; the first position of each group kept aside goes to the header by an
/// atomic minimum (one a cube). Before each chunk the cube reads the give-up flag (one unit,
/// shared): once an insert gave up, the cube stops. With `claimed` chunks come from the
/// header's counter, so a grid of a few cubes a multiprocessor covers the row and stops
/// within a chunk of the flag; otherwise cube `c` takes chunk `c` (no cube waits on
/// another either way).
#[cube(launch_unchecked, address_type = "dynamic")]
fn insert_kernel<K: Numeric, N: Size>(
    values: &[Vector<K, N>],
    table: &[Atomic<u32>],
    header: &[Atomic<u32>],
    vectors: usize,
    chunks: u32,
    mask: u32,
    #[comptime] layout: InsertLayout,
    #[define(K)] _dtype: ElemType,
) {
    let mut next = Shared::<u32>::new();
    let cube = linear_cube_index() as u32;
    // Literals, so the variables are runtime ones (`EMPTY`: none seen).
    let mut marked = 0xFFFF_FFFFu32;
    let mut zero = 0xFFFF_FFFFu32;
    let mut done = false;
    while !done {
        // The previous chunk's readers of `next` are past it.
        sync_cube();
        if UNIT_POS == 0 {
            let mut chunk = cube;
            if comptime!(layout.claimed) {
                // The counter starts at `EMPTY` (the fill's word): the first claim wraps to 0.
                chunk = header[NEXT_CHUNK].fetch_add(1u32) + 1u32;
            }
            if header[GAVE_UP].load() != EMPTY {
                chunk = chunks;
            }
            *next = chunk;
        }
        sync_cube();
        // Uniform per cube: every unit reads the one word unit 0 shared.
        let chunk = *next;
        if chunk >= chunks {
            done = true;
        } else {
            let (failed, chunk_marked, chunk_zero) =
                insert_chunk::<K, N>(values, table, header, vectors, chunk, mask, layout);
            marked = min(marked, chunk_marked);
            zero = min(zero, chunk_zero);
            if failed {
                header[GAVE_UP].store(0u32);
            }
        }
        // A cube a chunk: its one chunk is done.
        done = done || !comptime!(layout.claimed);
    }
    let firsts = cube_range(
        U32Range {
            min: zero,
            max: !marked,
        },
        layout.use_planes,
    );
    if UNIT_POS == 0 {
        if firsts.min != EMPTY {
            header[FIRST_ZERO].fetch_min(firsts.min);
        }
        if firsts.max != 0u32 {
            header[FIRST_MARKED].fetch_min(!firsts.max);
        }
    }
}

/// One unit's part of chunk `chunk`: every element's first probe loaded before any is
/// resolved (the loads overlap), then the inserts of the values those probes did not find,
/// stopping at the unit's first failure. Returns whether an insert failed, and the first
/// positions of the unit's elements of the mark's group and of the zeros (`EMPTY`: none).
#[cube]
fn insert_chunk<K: Numeric, N: Size>(
    values: &[Vector<K, N>],
    table: &[Atomic<u32>],
    header: &[Atomic<u32>],
    vectors: usize,
    chunk: u32,
    mask: u32,
    #[comptime] layout: InsertLayout,
) -> (bool, u32, u32) {
    let width = comptime!(layout.width as usize);
    let elements = comptime!((layout.vectors_per_unit * layout.width) as usize);
    let first = chunk as usize * (layout.units * layout.vectors_per_unit) as usize;
    let mut bits = Array::<u32>::new(elements);
    let mut held = Array::<u32>::new(elements);
    let mut slots = Array::<u32>::new(elements);
    let mut marked = 0xFFFF_FFFFu32;
    let mut zero = 0xFFFF_FFFFu32;
    #[unroll]
    for v in 0..layout.vectors_per_unit {
        let index = first + (v * layout.units + UNIT_POS) as usize;
        let mut vector = Vector::<K, N>::new(K::from_int(0));
        if index < vectors {
            vector = values[index];
        }
        #[unroll]
        for j in 0..width {
            let e = comptime!(v as usize * width + j);
            let raw = u32::reinterpret(vector.extract(j));
            let position = (index * width + j) as u32;
            let (is_marked, is_zero) = set_aside(raw, layout.float);
            // Elements past the row and set aside hold their own bits: nothing to insert.
            bits[e] = raw;
            held[e] = raw;
            slots[e] = mix(raw) & mask;
            if index < vectors {
                if is_marked {
                    marked = min(marked, position);
                } else if is_zero {
                    zero = min(zero, position);
                } else {
                    held[e] = table[slots[e] as usize].load();
                }
            }
        }
    }
    let mut failed = false;
    #[unroll]
    for e in 0..elements {
        // The insert runs only for a value its first probe did not find, and not after
        // this unit's first failure (the call sorts instead).
        if !failed && held[e] != bits[e] {
            failed = !insert(table, header, bits[e], slots[e], held[e], mask);
        }
    }
    (failed, marked, zero)
}

/// After the table's compaction: the count (0 where an insert gave up) to `count`, and the
/// first element of each group kept aside after the table's survivors. One unit.
#[cube(launch_unchecked, address_type = "dynamic")]
fn finish_count_kernel<K: Numeric, I: Numeric>(
    values: &[K],
    header: &[u32],
    table_count: &[u32],
    survivors: &mut [K],
    count: &mut [I],
    #[define(K, I)] _dtypes: [ElemType; 2],
) {
    if UNIT_POS == 0 {
        let mut total = 0u32;
        if header[GAVE_UP] == EMPTY {
            total = table_count[0];
            let marked = header[FIRST_MARKED];
            if marked != EMPTY {
                survivors[total as usize] = values[marked as usize];
                total += 1u32;
            }
            let zero = header[FIRST_ZERO];
            if zero != EMPTY {
                survivors[total as usize] = values[zero as usize];
                total += 1u32;
            }
        }
        count[0] = I::cast_from(total);
    }
}

/// The checks both steps make, and the workspace's layout.
fn validate(
    client: &Client,
    caps: &DeviceCaps,
    io: &DistinctIo<'_>,
    len: usize,
    options: DistinctOptions,
) -> Result<Layout, SieveError> {
    if !supports(io.value_dtype) {
        return Err(SieveError::invalid(
            "io.value_dtype",
            io.value_dtype,
            "f32, i32 or u32 (the hash path keeps 32-bit patterns; sort other dtypes)",
        ));
    }
    caps.check_dtype(io.value_dtype)?;
    if len >= u32::MAX as usize {
        return Err(SieveError::invalid(
            "len",
            len,
            format!("0..{} (positions are 32-bit)", u32::MAX),
        ));
    }
    let slots = options.max_table_slots;
    if !slots.is_power_of_two() || !(1024..=1 << 30).contains(&slots) {
        return Err(SieveError::invalid(
            "options.max_table_slots",
            slots,
            "a power of two in 1024..=2^30",
        ));
    }
    let epu = options.elements_per_unit;
    if !epu.is_multiple_of(4) || !(4..=32).contains(&epu) {
        return Err(SieveError::invalid(
            "options.elements_per_unit",
            epu,
            "a multiple of 4 in 4..=32",
        ));
    }
    if options.cubes_per_multiprocessor > 64 {
        return Err(SieveError::invalid(
            "options.cubes_per_multiprocessor",
            options.cubes_per_multiprocessor,
            "0..=64 (0: a cube a chunk of the row)",
        ));
    }
    let alignment = client.properties().memory.alignment.max(1) as usize;
    if !(REGION_WORDS * 4).is_multiple_of(alignment) {
        return Err(SieveError::invalid(
            "io.workspace",
            format!("a device with {alignment}-byte binding alignment"),
            format!(
                "a device whose binding alignment divides {} bytes (the workspace's regions)",
                REGION_WORDS * 4
            ),
        ));
    }
    let layout = Layout {
        slots: table_slots(len, slots),
    };
    let rules = BufferRules::of(client);
    rules.check_dtype("io.values", io.values, len, io.value_dtype)?;
    rules.check_dtype("io.workspace", io.workspace, layout.words(), Dtype::U32)?;
    Ok(layout)
}

/// A region of the workspace from word `start`.
fn region(workspace: &Handle, start: usize) -> Handle {
    workspace.clone().offset_start(start as u64 * 4)
}

/// Step one: the number of distinct values of the row of `len` elements, written to `count`
/// (one element of `index_dtype`: i32, u32 or i64), or 0 where the table gave up (the caller
/// sorts instead; a row of `len > 0` has at least one value). Never waits. For `len == 0`
/// writes 0 and launches nothing else.
///
/// Errors before anything launches: a dtype other than f32, i32 or u32 or one the device
/// lacks, `len >= u32::MAX`, a `max_table_slots` that is not a power of two in
/// `1024..=2^30`, an `elements_per_unit` that is not a multiple of 4 in `4..=32`, a buffer
/// too small or off the binding alignment, or a device whose binding
/// alignment does not divide 4096 bytes.
pub fn count_distinct(
    client: &Client,
    io: DistinctIo<'_>,
    len: usize,
    count: &Handle,
    index_dtype: Dtype,
    options: DistinctOptions,
) -> Result<(), SieveError> {
    let caps = DeviceCaps::of(client);
    let layout = validate(client, &caps, &io, len, options)?;
    check_index_dtype("index_dtype", index_dtype)?;
    BufferRules::of(client).check_dtype("count", count, 1, index_dtype)?;
    if len == 0 {
        fill(client, count, 1, index_dtype.elem_type(), 0);
        return Ok(());
    }
    let u32_elem = ElemType::UInt(UIntKind::U32);
    let header = region(io.workspace, 0);
    // The header and the table, every word `EMPTY`, in one fill.
    fill(
        client,
        &header,
        layout.table() + layout.slots,
        u32_elem,
        EMPTY,
    );
    let table = region(io.workspace, layout.table());
    let width = vector_size_for(len, 4, &[(io.values, 4)]);
    let vectors = len / width;
    let units = caps.cube_units(INSERT_UNITS);
    let claimed = options.cubes_per_multiprocessor > 0;
    let insert_layout = InsertLayout {
        units,
        vectors_per_unit: options.elements_per_unit / width as u32,
        width: width as u32,
        float: io.value_dtype == Dtype::F32,
        use_planes: caps.plane_ops,
        claimed,
    };
    let per_chunk = units as usize * insert_layout.vectors_per_unit as usize;
    // `len < u32::MAX`, so the chunks fit a `u32`.
    let chunks = vectors.div_ceil(per_chunk);
    let cubes = if claimed {
        let multiprocessors = caps.multiprocessors.unwrap_or(ASSUMED_MULTIPROCESSORS);
        chunks.min((multiprocessors * options.cubes_per_multiprocessor) as usize)
    } else {
        chunks
    };
    // SAFETY: every load is bounds-checked against `vectors`; the table's slots are masked
    // to its power-of-two size; chunks past `chunks` are not read, and the header holds
    // `HEADER_WORDS` words.
    unsafe {
        insert_kernel::launch_unchecked(
            client,
            cube_count_1d(client, cubes),
            CubeDim::new_1d(units),
            address_type(&[len]),
            width,
            bind(io.values, len),
            bind(&table, layout.slots),
            bind(&header, HEADER_WORDS),
            vectors,
            chunks as u32,
            (layout.slots - 1) as u32,
            insert_layout,
            io.value_dtype.elem_type(),
        );
    }
    let table_count = region(io.workspace, layout.count());
    let survivors = region(io.workspace, layout.survivors());
    compact(
        client,
        Flags::Compare {
            rule: FlagRule::NotEqual,
            threshold: EMPTY as f64,
        },
        CompactIo {
            values: Some(&table),
            value_dtype: Dtype::U32,
            values_out: Some(&survivors),
            indices_out: None,
            counts: &table_count,
            index_dtype: Dtype::U32,
        },
        CompactProblem {
            rows: 1,
            len: layout.slots,
        },
        Rejected::Drop,
        CompactOptions::default(),
    )?;
    // SAFETY: one unit; the first positions are below `len` (written only for elements of
    // the row) and the survivors' region holds the table's slots and two more.
    unsafe {
        finish_count_kernel::launch_unchecked(
            client,
            CubeCount::Static(1, 1, 1),
            CubeDim::new_1d(1),
            address_type(&[len, layout.words()]),
            bind(io.values, len),
            bind(&header, HEADER_WORDS),
            bind(&table_count, 1),
            bind(&survivors, layout.slots + 2),
            bind(count, 1),
            [io.value_dtype.elem_type(), index_dtype.elem_type()],
        );
    }
    Ok(())
}

/// Step two: the row's `total` distinct values (step one's count, not 0), ascending, to
/// `values_out` (at least `total` elements of the values' dtype), from step one's workspace.
///
/// Errors before anything launches: as [`count_distinct`], a `total` of 0 or past what the
/// workspace holds, or `values_out` too small.
pub fn write_distinct(
    client: &Client,
    io: DistinctIo<'_>,
    len: usize,
    total: usize,
    values_out: &Handle,
    options: DistinctOptions,
) -> Result<(), SieveError> {
    let caps = DeviceCaps::of(client);
    let layout = validate(client, &caps, &io, len, options)?;
    if total == 0 || total > len.min(layout.slots + 2) {
        return Err(SieveError::invalid(
            "total",
            total,
            format!(
                "1..={} (step one's count; 0 means the table gave up: sort instead)",
                len.min(layout.slots + 2)
            ),
        ));
    }
    BufferRules::of(client).check_dtype("values_out", values_out, total, io.value_dtype)?;
    let survivors = region(io.workspace, layout.survivors());
    sort_with(
        client,
        &caps,
        SortIo {
            keys: &survivors,
            key_dtype: io.value_dtype,
            keys_out: Some(values_out),
            indices_out: None,
            index_dtype: Dtype::U32,
        },
        SortProblem {
            rows: 1,
            len: total,
        },
        SortOrder::Ascending,
        SortOptions::default(),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_hold_four_slots_an_element_within_the_limit() {
        assert_eq!(table_slots(0, MAX_TABLE_SLOTS), 1024);
        assert_eq!(table_slots(300, MAX_TABLE_SLOTS), 2048);
        assert_eq!(table_slots(1 << 20, MAX_TABLE_SLOTS), 1 << 22);
        assert_eq!(table_slots(1 << 28, MAX_TABLE_SLOTS), 1 << 22);
        assert_eq!(table_slots(1 << 28, 1024), 1024);
        let layout = Layout { slots: 2048 };
        // Regions on 4 KiB boundaries.
        for start in [layout.table(), layout.count(), layout.survivors()] {
            assert_eq!(start % REGION_WORDS, 0);
        }
        assert!(distinct_workspace(300, DistinctOptions::default()) >= layout.words());
    }
}
