//! Binary search of queries in a sorted sequence (`torch.searchsorted`'s job): for each query,
//! how many sequence elements come before it in sieve's order (its radix keys: integers by
//! value, floats in PyTorch's order with every NaN equal and last), counting the equal ones
//! too with `right`. One unit per query, `ceil(log2(keys + 1))` probes each; the sequence is
//! small next to the queries in the usual use, so its probes stay in cache.
//!
//! The sequence must be ascending in that order (not checked: an unsorted one gives some
//! position, never a read out of bounds). Every dtype: the 8-, 16- and 32-bit ones where the
//! device has them, 64-bit ones everywhere (read as pairs of 32-bit words).

use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::common::address::{address_type, check_extent, check_index_capacity, check_index_dtype};
use crate::common::buffers::BufferRules;
use crate::common::grid::{linear_cube_index, one_unit_per_element};
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

#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
fn search_kernel<K: Numeric, I: Numeric>(
    sorted: &[K],
    queries: &[K],
    out: &mut [I],
    keys: usize,
    count: usize,
    #[comptime] kind: KeyKind,
    #[comptime] right: bool,
    #[define(K, I)] _dtypes: [ElemType; 2],
) {
    let q = linear_cube_index() * CUBE_DIM as usize + UNIT_POS as usize;
    if q < count {
        let mut lo = 0usize;
        let mut hi = keys;
        if comptime!(kind.wide()) {
            // 64-bit elements as (low, high) words: compare the high radix words, then the low.
            let low = u32::reinterpret(queries[2 * q]);
            let high = u32::reinterpret(queries[2 * q + 1]);
            let query_high = wide_radix_word(low, high, kind, true, false);
            let query_low = wide_radix_word(low, high, kind, false, false);
            while lo < hi {
                let mid = (lo + hi) / 2;
                let low = u32::reinterpret(sorted[2 * mid]);
                let high = u32::reinterpret(sorted[2 * mid + 1]);
                let key_high = wide_radix_word(low, high, kind, true, false);
                let key_low = wide_radix_word(low, high, kind, false, false);
                let before = key_high < query_high
                    || (key_high == query_high
                        && (key_low < query_low || (right && key_low == query_low)));
                if before {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
        } else {
            let query = radix_key::<K>(queries[q], kind, false);
            while lo < hi {
                let mid = (lo + hi) / 2;
                let key = radix_key::<K>(sorted[mid], kind, false);
                if key < query || (right && key == query) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
        }
        out[q] = I::cast_from(lo);
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
    let (cubes, cube_dim) = one_unit_per_element(client, queries);
    // SAFETY: units past `queries` return; probes stay in `0..keys` (`mid < hi <= keys`);
    // the buffers hold what the checks above asked for.
    unsafe {
        search_kernel::launch_unchecked(
            client,
            cubes,
            cube_dim,
            address_type(&[keys * words, queries * words]),
            BufferArg::from_raw_parts(io.sorted.clone(), (keys * words).max(1)),
            BufferArg::from_raw_parts(io.queries.clone(), queries * words),
            BufferArg::from_raw_parts(io.out.clone(), queries),
            keys,
            queries,
            kind,
            right,
            [element, io.index_dtype.elem_type()],
        );
    }
    Ok(())
}
