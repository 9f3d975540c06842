//! Binary search of queries in a sorted sequence (`torch.searchsorted`'s job): for each query,
//! how many sequence elements come before it in sieve's order (its radix keys: integers by
//! value, floats in PyTorch's order with every NaN equal and last), counting the equal ones
//! too with `right`. Each cube first holds the last key of every block of the sequence (up to
//! 2048 blocks) in shared memory; each of its units then answers 8 queries, each by a binary
//! search of those splitters and then of its block in global memory: `log2(keys / 2048)`
//! probes of global memory a query where a plain binary search makes `log2(keys)` (the
//! ninth session's kernel lost to torch at 2^24 queries into 2^20 keys, 1.19 against
//! 0.94 ms). 64-bit keys search global memory only.
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

/// Units of a search cube (fewer where a cube may not have them).
const SEARCH_UNITS: u32 = 256;

/// Queries each unit answers: a cube's splitters serve `units * QUERIES_PER_UNIT` queries.
const QUERIES_PER_UNIT: u32 = 8;

/// The most splitters a cube holds (8 KiB of keys): a sequence of 2^20 keys leaves 9 probes in
/// global memory instead of 20, and one of up to 2048 keys sits whole in shared memory.
const SPLITTERS: u32 = 2048;

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
                // The blocks wholly before the query, among the splitters...
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
                // ...then the query's place in the next block (or the last one).
                let mut lo = block_lo * stride;
                let mut hi = (block_lo + 1) * stride;
                if hi > keys {
                    hi = keys;
                }
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

/// Writes, for each of `queries` elements, the number of the `keys` sorted elements that come
/// before it (`right = false`: strictly less; `right = true`: less or equal). `queries == 0`
/// launches nothing; `keys == 0` writes zeros.
pub fn searchsorted(
    client: &Client,
    io: SearchIo<'_>,
    keys: usize,
    queries: usize,
    right: bool,
) -> Result<(), SieveError> {
    let caps = DeviceCaps::of(client);
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
    check_extent(client, &caps, "keys", keys * words)?;
    check_extent(client, &caps, "queries", queries * words)?;
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
    let units = caps.cube_units(SEARCH_UNITS);
    // Splitters: as many as fit a quarter of the shared memory, up to SPLITTERS, at least one
    // per unit (a multiple of the units: powers of two).
    let fit = (caps.max_shared_bytes / 16).max(units as usize) as u32;
    let layout = SearchLayout {
        units,
        per_unit: QUERIES_PER_UNIT,
        splitters: if kind.wide() {
            units
        } else {
            SPLITTERS.min(1 << (31 - fit.leading_zeros())).max(units)
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
