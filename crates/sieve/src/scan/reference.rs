//! CPU twin of the scan: the sequential definition every GPU strategy is checked against.

/// Element types the reference scans. Floats accumulate in `f64` so the reference is the
/// exact value the GPU result is compared to, within a tolerance.
pub trait ScanElement: Copy {
    /// The running sum's type: `f64` for floats, wrapping arithmetic for integers.
    type Acc: Copy + std::ops::Add<Output = Self::Acc>;
    /// The empty sum.
    fn zero() -> Self::Acc;
    /// The element as a term of the sum (exact).
    fn widen(self) -> Self::Acc;
    /// A running sum as an output element (rounded once, for floats).
    fn narrow(acc: Self::Acc) -> Self;
}

macro_rules! wrapping_element {
    ($($t:ty),*) => {$(
        impl ScanElement for $t {
            type Acc = std::num::Wrapping<$t>;
            fn zero() -> Self::Acc { std::num::Wrapping(0) }
            fn widen(self) -> Self::Acc { std::num::Wrapping(self) }
            fn narrow(acc: Self::Acc) -> Self { acc.0 }
        }
    )*};
}
wrapping_element!(u32, i32, i64);

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
}

impl ScanElement for half::f16 {
    type Acc = f64;
    fn zero() -> f64 {
        0.0
    }
    fn widen(self) -> f64 {
        self.to_f64()
    }
    fn narrow(acc: f64) -> Self {
        half::f16::from_f64(acc)
    }
}

/// Row-wise scan of `input` laid out as `[rows, len]`: inclusive, or exclusive (each element
/// the sum of those before it in its row). Integers wrap on overflow, as on the GPU.
pub fn scan_rows<T: ScanElement>(input: &[T], rows: usize, len: usize, exclusive: bool) -> Vec<T> {
    assert_eq!(input.len(), rows * len, "input is not [rows, len]");
    let mut out = Vec::with_capacity(input.len());
    for row in input.chunks(len.max(1)).take(rows) {
        let mut acc = T::zero();
        for &x in row {
            if exclusive {
                out.push(T::narrow(acc));
                acc = acc + x.widen();
            } else {
                acc = acc + x.widen();
                out.push(T::narrow(acc));
            }
        }
    }
    out
}
