//! Binary search of queries in a sorted sequence (`torch.searchsorted`'s job): for each query,
//! how many sequence elements come before it in sieve's order (its radix keys: integers by
//! value, floats in PyTorch's order with every NaN equal and last), counting the equal ones
//! too with `right`. Each cube first holds the last key of every block of the sequence (up to
//! 4096 blocks) in shared memory; each of its units then answers 32 queries, each by a binary
//! search of those splitters and then of its block in global memory: `log2(keys / 4096)`
//! probes of global memory a query where a plain binary search makes `log2(keys)` (the
//! ninth session's kernel lost to torch at 2^24 queries into 2^20 keys, 1.19 against
//! 0.94 ms). 64-bit keys search global memory only. [`SearchTuning`] holds the shape
//! (units, queries a unit, splitters). A unit's queries probing global memory in lock-step
//! (one probe of each a step) was slower twice on the H200 (`12-d`; `27-b`, every shape), so
//! each query searches on its own.
//!
//! The sequence must be ascending in that order (not checked: an unsorted one gives some
//! position, never a read out of bounds). Every dtype: the 8-, 16- and 32-bit ones where the
//! device has them, 64-bit ones everywhere (read as pairs of 32-bit words).

use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::common::address::{address_type, check_extent, check_index_capacity, check_index_dtype};
use crate::common::buffers::BufferRules;
use crate::common::grid::{cube_count_1d, linear_cube_index};
use crate::radix::keys::{KeyKind, radix_key, wide_radix_word};
use crate::{DeviceCaps, Dtype, SieveError};

/// The buffers of one search.
#[derive(Debug, Clone, Copy)]
pub struct SearchIo<'a> {
    /// `[keys]` elements, ascending.
    pub sorted: &'a Handle,
    /// `[queries]` elements of the same dtype.
    pub queries: &'a Handle,
    /// Their dtype.
    pub dtype: Dtype,
    /// `[queries]` positions, each in `0..=keys`.
    pub out: &'a Handle,
    /// The positions' dtype: i32, u32 or i64.
    pub index_dtype: Dtype,
}

/// The shape of a search (plain data; [`SearchTuning::for_device`] gives the defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchTuning {
    /// Units of a search cube (at most what a cube may have).
    pub units_per_cube: u32,
    /// Queries each unit answers (1..=32): a cube's splitters serve `units * this` queries.
    pub queries_per_unit: u32,
    /// The most splitters a cube holds (a power of two; fewer where a quarter of the shared
    /// memory holds fewer; at least one per unit): 4096 (16 KiB of keys) leave a sequence of
    /// 2^20 keys 8 probes in global memory instead of 20, and one of up to 4096 keys sits
    /// whole in shared memory.
    pub max_splitters: u32,
}

impl SearchTuning {
    /// 256 units (fewer where a cube may not have them), 32 queries a unit, up to 4096
    /// splitters (fewer where a quarter of the shared memory holds fewer: 2048 in wgpu's
    /// 48 KiB). Measured on the H200 through CUDA (2^24 f32 queries into 2^20 keys, ms;
    /// torch 0.942 in both calls): `bench/results/h200/27-b`, 4 / 8 / 16 queries a unit
    /// 0.972 / 0.941 / 0.941 at 1024 splitters, 1.018 / 0.948 / 0.928 at 2048; `27-c`, 16 / 32
    /// a unit 0.918 / 0.904 at 2048, 0.916 / **0.877** at 4096.
    pub fn for_device(caps: &DeviceCaps) -> Self {
        SearchTuning {
            units_per_cube: caps.cube_units(256),
            queries_per_unit: 32,
            max_splitters: 4096,
        }
    }
}

/// Compile-time shape of a search cube.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct SearchLayout {
    /// Units of a cube.
    units: u32,
    /// Queries a unit answers (at `e * units + UNIT_POS` of its cube's span).
    per_unit: u32,
    /// Splitter keys a cube holds in shared memory (a multiple of the units; 32-bit-or-less
    /// keys only): the last key of each of the sequence's blocks of `stride` elements.
    splitters: u32,
}

/// Whether sequence key `key` comes before query `query` (is counted).
#[cube]
fn before(key: u32, query: u32, #[comptime] right: bool) -> bool {
    key < query || (right && key == query)
}

/// One cube per `units * per_unit` queries. 32-bit-or-less keys: the cube first loads the
/// last key of every block of `stride` sequence elements (but the last block) into shared
/// memory, so each query searches those splitters in shared memory and then `log2(stride)`
/// probes of its own block in global memory, not `log2(keys)`. 64-bit keys probe global
/// memory all the way.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
fn search_kernel<K: Numeric, I: Numeric>(
    sorted: &[K],
    queries: &[K],
    out: &mut [I],
    keys: usize,
    count: usize,
    stride: usize,
    #[comptime] kind: KeyKind,
    #[comptime] right: bool,
    #[comptime] layout: SearchLayout,
    #[define(K, I)] _dtypes: [ElemType; 2],
) {
    let first = linear_cube_index() * (CUBE_DIM * layout.per_unit) as usize;
    // A whole cube past the queries (before any barrier).
    if first >= count {
        terminate!();
    }
    if comptime!(kind.wide()) {
        #[unroll]
        for e in 0..layout.per_unit {
            let q = first + (e * CUBE_DIM + UNIT_POS) as usize;
            if q < count {
                // 64-bit elements as (low, high) words: the high radix words, then the low.
                let low = u32::reinterpret(queries[2 * q]);
                let high = u32::reinterpret(queries[2 * q + 1]);
                let query_high = wide_radix_word(low, high, kind, true, false);
                let query_low = wide_radix_word(low, high, kind, false, false);
                let mut lo = 0usize;
                let mut hi = keys;
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    let low = u32::reinterpret(sorted[2 * mid]);
                    let high = u32::reinterpret(sorted[2 * mid + 1]);
                    let key_high = wide_radix_word(low, high, kind, true, false);
                    let key_low = wide_radix_word(low, high, kind, false, false);
                    let earlier = key_high < query_high
                        || (key_high == query_high && before(key_low, query_low, right));
                    if earlier {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                out[q] = I::cast_from(lo);
            }
        }
    } else {
        let mut splitters = Shared::<[u32]>::new_slice(comptime!(layout.splitters as usize));
        // Blocks whose last key is a splitter: all but the last block.
        let blocks = keys.div_ceil(stride);
        let mut held = 0usize;
        if blocks > 0 {
            held = blocks - 1;
        }
        #[unroll]
        for i in 0..comptime!(layout.splitters / layout.units) {
            let j = (i * CUBE_DIM + UNIT_POS) as usize;
            if j < held {
                splitters[j] = radix_key::<K>(sorted[(j + 1) * stride - 1], kind, false);
            }
        }
        sync_cube();
        #[unroll]
        for e in 0..layout.per_unit {
            let q = first + (e * CUBE_DIM + UNIT_POS) as usize;
            if q < count {
                let query = radix_key::<K>(queries[q], kind, false);
                let (block_lo, block_hi) =
                    query_block(&splitters, held, query, stride, keys, right);
                let mut lo = block_lo;
                let mut hi = block_hi;
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if before(radix_key::<K>(sorted[mid], kind, false), query, right) {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                out[q] = I::cast_from(lo);
            }
        }
    }
}

/// The block of the sequence holding `query`'s place, as `[lo, hi)`: the blocks wholly before
/// it found among the `held` splitters in shared memory, then the next block (or the last
/// one, cut at `keys`).
#[cube]
fn query_block(
    splitters: &Shared<[u32]>,
    held: usize,
    query: u32,
    stride: usize,
    keys: usize,
    #[comptime] right: bool,
) -> (usize, usize) {
    let mut block_lo = 0usize;
    let mut block_hi = held;
    while block_lo < block_hi {
        let mid = (block_lo + block_hi) / 2;
        if before(splitters[mid], query, right) {
            block_lo = mid + 1;
        } else {
            block_hi = mid;
        }
    }
    let lo = block_lo * stride;
    let mut hi = (block_lo + 1) * stride;
    if hi > keys {
        hi = keys;
    }
    (lo, hi)
}

/// Writes, for each of `queries` elements, the number of the `keys` sorted elements that come
/// before it (`right = false`: strictly less; `right = true`: less or equal). `queries == 0`
/// launches nothing; `keys == 0` writes zeros. The device's default [`SearchTuning`].
pub fn searchsorted(
    client: &Client,
    io: SearchIo<'_>,
    keys: usize,
    queries: usize,
    right: bool,
) -> Result<(), SieveError> {
    let caps = DeviceCaps::of(client);
    let tuning = SearchTuning::for_device(&caps);
    search(client, &caps, io, keys, queries, right, tuning)
}

/// [`searchsorted`] with a given tuning (checked against the device before anything launches).
pub fn searchsorted_with(
    client: &Client,
    io: SearchIo<'_>,
    keys: usize,
    queries: usize,
    right: bool,
    tuning: SearchTuning,
) -> Result<(), SieveError> {
    search(
        client,
        &DeviceCaps::of(client),
        io,
        keys,
        queries,
        right,
        tuning,
    )
}

/// [`searchsorted_with`] on the device facts its entry point read once.
fn search(
    client: &Client,
    caps: &DeviceCaps,
    io: SearchIo<'_>,
    keys: usize,
    queries: usize,
    right: bool,
    tuning: SearchTuning,
) -> Result<(), SieveError> {
    caps.check_units_per_cube(tuning.units_per_cube)?;
    if !(1..=32).contains(&tuning.queries_per_unit) {
        return Err(SieveError::invalid(
            "tuning.queries_per_unit",
            tuning.queries_per_unit,
            "1..=32",
        ));
    }
    if !tuning.max_splitters.is_power_of_two() {
        return Err(SieveError::invalid(
            "tuning.max_splitters",
            tuning.max_splitters,
            "a power of two",
        ));
    }
    let kind = KeyKind::of(io.dtype);
    if !kind.wide() {
        caps.check_dtype(io.dtype)?;
    }
    check_index_dtype("io.index_dtype", io.index_dtype)?;
    if io.index_dtype == Dtype::I64 {
        caps.check_dtype(Dtype::I64)?;
    }
    check_index_capacity("io.index_dtype", io.index_dtype, keys)?;
    let words = if kind.wide() { 2 } else { 1 };
    check_extent(client, caps, "keys", keys * words)?;
    check_extent(client, caps, "queries", queries * words)?;
    let rules = BufferRules::of(client);
    rules.check_dtype("io.sorted", io.sorted, keys, io.dtype)?;
    rules.check_dtype("io.queries", io.queries, queries, io.dtype)?;
    rules.check_dtype("io.out", io.out, queries, io.index_dtype)?;
    if queries == 0 {
        return Ok(());
    }
    let element = if kind.wide() {
        Dtype::U32.elem_type()
    } else {
        io.dtype.elem_type()
    };
    let units = tuning.units_per_cube;
    // Splitters: as many as fit a quarter of the shared memory, up to the tuning's, at least
    // one per unit (a multiple of the units: powers of two).
    let fit = (caps.max_shared_bytes / 16).max(units as usize) as u32;
    let layout = SearchLayout {
        units,
        per_unit: tuning.queries_per_unit,
        splitters: if kind.wide() {
            units
        } else {
            tuning
                .max_splitters
                .min(1 << (31 - fit.leading_zeros()))
                .max(units)
        },
    };
    let stride = keys.div_ceil(layout.splitters as usize).max(1);
    let span = (units * layout.per_unit) as usize;
    // SAFETY: whole cubes past `queries` return, units past it skip; probes stay in
    // `0..keys` (`mid < hi <= keys`; splitter `j < blocks - 1` reads `(j + 1) * stride - 1 <
    // keys`); shared slots `j < held <= splitters`; the buffers hold what the checks above
    // asked for.
    unsafe {
        search_kernel::launch_unchecked(
            client,
            cube_count_1d(client, queries.div_ceil(span)),
            CubeDim::new_1d(units),
            address_type(&[keys * words, queries * words]),
            BufferArg::from_raw_parts(io.sorted.clone(), (keys * words).max(1)),
            BufferArg::from_raw_parts(io.queries.clone(), queries * words),
            BufferArg::from_raw_parts(io.out.clone(), queries),
            keys,
            queries,
            stride,
            kind,
            right,
            layout,
            [element, io.index_dtype.elem_type()],
        );
    }
    Ok(())
}
