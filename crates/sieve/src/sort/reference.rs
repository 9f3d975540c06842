//! CPU twin of the sort: a stable sort of each row in PyTorch's order.

use std::cmp::Ordering;

/// Keys the reference sorts, with the order the device uses.
pub trait SortKey: Copy {
    /// The ascending order of two keys (floats: PyTorch's, every NaN equal and last).
    fn order(a: &Self, b: &Self) -> Ordering;
}

macro_rules! float_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            /// -inf < ... < -0.0 == +0.0 < ... < +inf < NaN, all NaNs equal.
            fn order(a: &$t, b: &$t) -> Ordering {
                match (a.is_nan(), b.is_nan()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Greater,
                    (false, true) => Ordering::Less,
                    // Neither is NaN, so the order is total.
                    _ => a.partial_cmp(b).unwrap_or(Ordering::Equal),
                }
            }
        }
    )*};
}
// f64 serves the Flex fallback, whose float keys (f16, bf16, f32, f64) widen to f64 exactly.
float_key!(f32, f64);

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            fn order(a: &$t, b: &$t) -> Ordering { a.cmp(b) }
        }
    )*};
}
// u64 (and i64 exact past 2^53) for the Flex fallback's integer keys.
int_key!(i32, u32, i64, u64);

/// Each row of `keys` (`[rows, len]`) stably sorted: the permutation (positions within the
/// row), ascending or descending; equal keys keep their input order either way.
pub fn sort_rows<T: SortKey>(keys: &[T], rows: usize, len: usize, descending: bool) -> Vec<usize> {
    assert_eq!(keys.len(), rows * len, "keys are not [rows, len]");
    let mut out = Vec::with_capacity(keys.len());
    for r in 0..rows {
        let row = &keys[r * len..(r + 1) * len];
        let mut order: Vec<usize> = (0..len).collect();
        order.sort_by(|&a, &b| {
            let o = T::order(&row[a], &row[b]);
            if descending { o.reverse() } else { o }
        });
        out.extend(order);
    }
    out
}
