//! CPU twin of the top-k: a stable sort of each row (the sort's reference), first `k` taken.

use crate::sort::reference::{SortKey, sort_rows};

/// The positions (within the row) of the top-k (`largest`) or bottom-k of each row of `keys`
/// (`[rows, len]`), in rank order: `[rows, k]`. Ties go to the lower position.
pub fn topk_rows<T: SortKey>(
    keys: &[T],
    rows: usize,
    len: usize,
    k: usize,
    largest: bool,
) -> Vec<usize> {
    assert!(k <= len, "k = {k} is more than len = {len}");
    let order = sort_rows(keys, rows, len, largest);
    let mut out = Vec::with_capacity(rows * k);
    for r in 0..rows {
        out.extend_from_slice(&order[r * len..r * len + k]);
    }
    out
}
