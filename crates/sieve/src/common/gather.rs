//! Rows' outputs gathered by positions: the sort's last step (keys and indices from the final
//! positions), the top-k's (values and indices from the chosen positions, reordered by their
//! sort) and top-k's composition of candidate positions. One kernel for the three.

use cubecl::prelude::*;
use cubecl::server::Handle;

use super::address::AddressType;
use super::buffers::{bind, bind_optional};
use super::grid::{cube_count_1d, linear_unit_index};
use crate::Dtype;

/// How the gathers move values of `dtype`: 32-bit words a value and the element type they
/// move as (64-bit values as two `u32` words; the kernels need no 64-bit types).
pub(crate) fn moved_as(dtype: Dtype) -> (u32, ElemType) {
    if dtype.size_bytes() == 8 {
        (2, Dtype::U32.elem_type())
    } else {
        (1, dtype.elem_type())
    }
}

/// The buffers of one [`gather_rows`]: `[rows, len]` values, `[rows, stride]` positions (and
/// the columns of `order` that reorder them), `[rows, k]` outputs.
pub(crate) struct RowGather<'a> {
    pub values: &'a Handle,
    pub value_dtype: Dtype,
    pub positions: &'a Handle,
    pub order: Option<&'a Handle>,
    pub values_out: Option<&'a Handle>,
    pub indices_out: Option<&'a Handle>,
    pub index_dtype: Dtype,
}

/// Launches [`gather_rows_kernel`] over `rows` rows, one unit (of cubes of `units`) per
/// output: the sort's decode (`k = stride = len`) and the top-k's outputs from its chosen
/// positions.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_rows(
    client: &Client,
    units: u32,
    address: AddressType,
    io: RowGather<'_>,
    rows: usize,
    len: usize,
    k: usize,
    stride: usize,
) {
    let outputs = rows * k;
    let (words, value_elem) = moved_as(io.value_dtype);
    let words_of = |elements: usize| elements * words as usize;
    // SAFETY: one unit per output, bounds-checked; the caller's positions lie within their
    // row and its columns within `stride`; each buffer holds what is bound here.
    unsafe {
        gather_rows_kernel::launch_unchecked(
            client,
            cube_count_1d(client, outputs.div_ceil(units as usize)),
            CubeDim::new_1d(units),
            address,
            bind(io.values, words_of(rows * len)),
            bind(io.positions, rows * stride),
            bind_optional(client, io.order, rows * stride),
            bind_optional(client, io.values_out, words_of(outputs)),
            bind_optional(client, io.indices_out, outputs),
            len,
            k,
            stride,
            outputs,
            words,
            io.order.is_some(),
            io.values_out.is_some(),
            io.indices_out.is_some(),
            [value_elem, io.index_dtype.elem_type()],
        );
    }
}

/// Output `j` of row `r = j / k`: the element of `values`' row `r` (`len` elements, each
/// `words` values of `K`: 64-bit values move as two `u32` words) at position
/// `p = positions[r * stride + c]`, where `c = order[r * stride + j % k]` (`reorder`) or
/// `j % k`; and `p` itself as an index. So `k = stride = len` without `reorder` decodes a
/// sorted row from its positions.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
fn gather_rows_kernel<K: Numeric, I: Numeric>(
    values: &[K],
    positions: &[u32],
    order: &[u32],
    values_out: &mut [K],
    indices_out: &mut [I],
    len: usize,
    k: usize,
    stride: usize,
    total: usize,
    #[comptime] words: u32,
    #[comptime] reorder: bool,
    #[comptime] write_values: bool,
    #[comptime] write_indices: bool,
    #[define(K, I)] _dtypes: [ElemType; 2],
) {
    let index = linear_unit_index();
    if index >= total {
        terminate!();
    }
    let row = index / k;
    let mut column = index % k;
    if reorder {
        column = order[row * stride + column] as usize;
    }
    let position = positions[row * stride + column];
    write_gathered::<K, I>(
        values,
        values_out,
        indices_out,
        row * len + position as usize,
        index,
        position,
        words,
        write_values,
        write_indices,
    );
}

/// Output `out`: the element at `source` (`words` values of `K`) and its position in the row.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn write_gathered<K: Numeric, I: Numeric>(
    values: &[K],
    values_out: &mut [K],
    indices_out: &mut [I],
    source: usize,
    out: usize,
    position: u32,
    #[comptime] words: u32,
    #[comptime] write_values: bool,
    #[comptime] write_indices: bool,
) {
    if write_values {
        #[unroll]
        for w in 0..words {
            values_out[out * words as usize + w as usize] =
                values[source * words as usize + w as usize];
        }
    }
    if write_indices {
        indices_out[out] = I::cast_from(position);
    }
}
