//! Rows' outputs gathered by positions: the sort's last step (keys and indices from the final
//! positions), the top-k's (values and indices from the chosen positions, reordered by their
//! sort) and top-k's composition of candidate positions. One kernel for the three.

use cubecl::prelude::*;

use super::grid::linear_cube_index;

/// Output `j` of row `r = j / k`: the element of `values`' row `r` (`len` elements, each
/// `words` values of `K`: 64-bit values move as two `u32` words) at position
/// `p = positions[r * stride + c]`, where `c = order[r * stride + j % k]` (`reorder`) or
/// `j % k`; and `p` itself as an index. So `k = stride = len` without `reorder` decodes a
/// sorted row from its positions.
#[cube(launch_unchecked, address_type = "dynamic")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_rows_kernel<K: Numeric, I: Numeric>(
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
    let index = linear_cube_index() * CUBE_DIM as usize + UNIT_POS as usize;
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
