//! Filling workspaces on the device (status words, counters), so no host upload is
//! needed between launches.

use cubecl::prelude::*;
use cubecl::server::Handle;

use super::address::address_type;
use super::grid::{linear_unit_index, one_unit_per_element};

#[cube(launch_unchecked, address_type = "dynamic")]
fn fill_kernel<T: Numeric>(
    buffer: &mut [T],
    len: usize,
    value: u32,
    #[define(T)] _dtype: ElemType,
) {
    let index = linear_unit_index();
    if index < len {
        buffer[index] = T::cast_from(value);
    }
}

/// Writes `value` (as an `elem`) to the first `len` elements of `buffer`, whose elements are
/// `elem`.
pub fn fill(client: &Client, buffer: &Handle, len: usize, elem: ElemType, value: u32) {
    if len == 0 {
        return;
    }
    // At most the device's own units per cube (any device runs it; no tuning is involved).
    let (cubes, cube_dim) = one_unit_per_element(client, len);
    // SAFETY: every write is bounds-checked against `len`, which the caller sized the buffer for.
    unsafe {
        fill_kernel::launch_unchecked(
            client,
            cubes,
            cube_dim,
            address_type(&[len]),
            BufferArg::from_raw_parts(buffer.clone(), len),
            len,
            value,
            elem,
        );
    }
}

/// Writes zero to the first `len` elements of `buffer`, whose elements are `elem`.
pub fn fill_zero(client: &Client, buffer: &Handle, len: usize, elem: ElemType) {
    fill(client, buffer, len, elem, 0);
}
