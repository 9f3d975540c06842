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
// f64 keys, and the Flex fallback's float keys (f16, bf16, f32, f64), which widen to f64
// exactly.
float_key!(f32, f64);

macro_rules! half_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            /// f32's order of the exact widening (the same order: widening is exact).
            fn order(a: &$t, b: &$t) -> Ordering {
                f32::order(&a.to_f32(), &b.to_f32())
            }
        }
    )*};
}
half_key!(half::f16, half::bf16);

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            fn order(a: &$t, b: &$t) -> Ordering { a.cmp(b) }
        }
    )*};
}
// Every integer key dtype (u64 and i64 also serve the Flex fallback, exact past 2^53).
int_key!(i8, i16, i32, i64, u8, u16, u32, u64);

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
