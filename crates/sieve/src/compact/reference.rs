//! CPU twin of the compaction: the sequential definition every strategy is checked against.

use super::Rejected;

/// What a compaction of `[rows, len]` rows produces: per row, `len` output slots (values and
/// positions) and the survivor count. Slots the mode leaves unwritten (`Drop`) are `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted<T> {
    /// `[rows, len]` output values.
    pub values: Vec<Option<T>>,
    /// `[rows, len]` output positions (within the input row).
    pub indices: Vec<Option<usize>>,
    /// Survivors per row (`rows` entries).
    pub counts: Vec<usize>,
}

/// Row-wise compaction of `values` by `flags` (both `[rows, len]`): survivors first, in
/// input order, then what `rejected` says.
pub fn compact_rows<T: Copy + Default>(
    values: &[T],
    flags: &[bool],
    rows: usize,
    len: usize,
    rejected: Rejected,
) -> Compacted<T> {
    assert_eq!(values.len(), rows * len, "values are not [rows, len]");
    assert_eq!(flags.len(), rows * len, "flags are not [rows, len]");
    let mut out = Compacted {
        values: vec![None; rows * len],
        indices: vec![None; rows * len],
        counts: Vec::with_capacity(rows),
    };
    for row in 0..rows {
        let base = row * len;
        let survivors: Vec<usize> = (0..len).filter(|&i| flags[base + i]).collect();
        let others: Vec<usize> = (0..len).filter(|&i| !flags[base + i]).collect();
        for (slot, &i) in survivors.iter().enumerate() {
            out.values[base + slot] = Some(values[base + i]);
            out.indices[base + slot] = Some(i);
        }
        let tail = base + survivors.len();
        for (k, &i) in others.iter().enumerate() {
            match rejected {
                Rejected::Drop => {}
                Rejected::Zero => {
                    out.values[tail + k] = Some(T::default());
                    out.indices[tail + k] = Some(0);
                }
                Rejected::Keep => {
                    out.values[tail + k] = Some(values[base + i]);
                    out.indices[tail + k] = Some(i);
                }
            }
        }
        out.counts.push(survivors.len());
    }
    out
}
