//! CPU twin of the scan: the sequential definition every GPU strategy is checked against.

use super::ScanOp;

/// Element types the reference scans: every sieve dtype. f32, f16 and bf16 accumulate in
/// `f64`, so the reference is the exact value the GPU result is compared to, within a
/// tolerance (f64 sums and products round in f64, sequentially); integers wrap in their own
/// width, as the device's truncating store makes them.
pub trait ScanElement: Copy + PartialOrd {
    /// The running sum's type: `f64` for floats, wrapping arithmetic for integers.
    type Acc: Copy + std::ops::Add<Output = Self::Acc>;
    /// The empty sum.
    fn zero() -> Self::Acc;
    /// The element as a term of the sum (exact).
    fn widen(self) -> Self::Acc;
    /// A running sum as an output element (rounded once, for floats).
    fn narrow(acc: Self::Acc) -> Self;
    /// The product's identity.
    fn one() -> Self::Acc;
    /// `a * b` as the device multiplies: wrapping for integers, rounded to f32 for floats
    /// (f16 multiplies in f32 on the device too).
    fn mul(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The minimum's identity: +inf, or the largest integer.
    fn highest() -> Self;
    /// The maximum's identity: -inf, or the smallest integer.
    fn lowest() -> Self;
    /// Whether the element is a NaN (never, for integers).
    fn is_nan(self) -> bool;
}

macro_rules! wrapping_element {
    ($($t:ty),*) => {$(
        impl ScanElement for $t {
            type Acc = std::num::Wrapping<$t>;
            fn zero() -> Self::Acc { std::num::Wrapping(0) }
            fn widen(self) -> Self::Acc { std::num::Wrapping(self) }
            fn narrow(acc: Self::Acc) -> Self { acc.0 }
            fn one() -> Self::Acc { std::num::Wrapping(1) }
            fn mul(a: Self::Acc, b: Self::Acc) -> Self::Acc { a * b }
            fn highest() -> Self { <$t>::MAX }
            fn lowest() -> Self { <$t>::MIN }
            fn is_nan(self) -> bool { false }
        }
    )*};
}
wrapping_element!(u32, i32, i64, u64, i8, i16, u8, u16);

/// The product of two f32 values (held in f64) rounded once to f32, as the device computes
/// it: the f64 product of two f32s is exact, so one rounding gives IEEE's f32 product.
fn mul_f32(a: f64, b: f64) -> f64 {
    (a * b) as f32 as f64
}

impl ScanElement for f32 {
    type Acc = f64;
    fn zero() -> f64 {
        0.0
    }
    fn widen(self) -> f64 {
        self as f64
    }
    fn narrow(acc: f64) -> Self {
        acc as f32
    }
    fn one() -> f64 {
        1.0
    }
    fn mul(a: f64, b: f64) -> f64 {
        mul_f32(a, b)
    }
    fn highest() -> Self {
        f32::INFINITY
    }
    fn lowest() -> Self {
        f32::NEG_INFINITY
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}

impl ScanElement for f64 {
    type Acc = f64;
    fn zero() -> f64 {
        0.0
    }
    fn widen(self) -> f64 {
        self
    }
    fn narrow(acc: f64) -> Self {
        acc
    }
    fn one() -> f64 {
        1.0
    }
    fn mul(a: f64, b: f64) -> f64 {
        a * b
    }
    fn highest() -> Self {
        f64::INFINITY
    }
    fn lowest() -> Self {
        f64::NEG_INFINITY
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

/// The half floats: reference arithmetic in f64, each product rounded as the device's f32
/// accumulator rounds it, the result rounded once to the dtype (as the kernels store it).
macro_rules! half_element {
    ($t:ty) => {
        impl ScanElement for $t {
            type Acc = f64;
            fn zero() -> f64 {
                0.0
            }
            fn widen(self) -> f64 {
                self.to_f64()
            }
            fn narrow(acc: f64) -> Self {
                <$t>::from_f64(acc)
            }
            fn one() -> f64 {
                1.0
            }
            fn mul(a: f64, b: f64) -> f64 {
                mul_f32(a, b)
            }
            fn highest() -> Self {
                <$t>::INFINITY
            }
            fn lowest() -> Self {
                <$t>::NEG_INFINITY
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
    };
}
half_element!(half::bf16);
half_element!(half::f16);

/// Row-wise scan of `input` laid out as `[rows, len]`: inclusive, or exclusive (each element
/// the sum of those before it in its row). Integers wrap on overflow, as on the GPU.
pub fn scan_rows<T: ScanElement>(input: &[T], rows: usize, len: usize, exclusive: bool) -> Vec<T> {
    scan_rows_op(input, rows, len, ScanOp::Sum, exclusive)
}

/// [`scan_rows`] with the operator `op`, sequentially (semantics on [`ScanOp`]): sums
/// exactly (floats in f64, rounded once per output), products rounded to f32 after every
/// step (integers wrap), minima and maxima by PyTorch's `cummin`/`cummax` rule (a NaN
/// replaces the running value; so does a later value equal to it, which decides between
/// -0.0 and +0.0). Exclusive outputs start with the operator's identity.
pub fn scan_rows_op<T: ScanElement>(
    input: &[T],
    rows: usize,
    len: usize,
    op: ScanOp,
    exclusive: bool,
) -> Vec<T> {
    assert_eq!(input.len(), rows * len, "input is not [rows, len]");
    let mut out = Vec::with_capacity(input.len());
    for row in input.chunks(len.max(1)).take(rows) {
        let mut state = Running::<T>::new(op);
        for &x in row {
            if exclusive {
                out.push(state.value());
                state.push(x);
            } else {
                state.push(x);
                out.push(state.value());
            }
        }
    }
    out
}

/// The running value of one row.
enum Running<T: ScanElement> {
    Sum(T::Acc),
    Prod(T::Acc),
    Min(T),
    Max(T),
}

impl<T: ScanElement> Running<T> {
    fn new(op: ScanOp) -> Self {
        match op {
            ScanOp::Sum => Running::Sum(T::zero()),
            ScanOp::Prod => Running::Prod(T::one()),
            ScanOp::Min => Running::Min(T::highest()),
            ScanOp::Max => Running::Max(T::lowest()),
        }
    }

    fn push(&mut self, x: T) {
        // PyTorch's cummin/cummax step (`cummax_cummin_helper`): x replaces the running
        // value when x is NaN, or when neither is NaN and x is <= (min) or >= (max) it.
        let replaces = |running: T, better: bool| x.is_nan() || (!running.is_nan() && better);
        match self {
            Running::Sum(acc) => *acc = *acc + x.widen(),
            Running::Prod(acc) => *acc = T::mul(*acc, x.widen()),
            Running::Min(m) => {
                if replaces(*m, x <= *m) {
                    *m = x;
                }
            }
            Running::Max(m) => {
                if replaces(*m, x >= *m) {
                    *m = x;
                }
            }
        }
    }

    fn value(&self) -> T {
        match self {
            Running::Sum(acc) | Running::Prod(acc) => T::narrow(*acc),
            Running::Min(m) | Running::Max(m) => *m,
        }
    }
}
