//! The associative operators the scan engine folds with: sum, product, minimum, maximum.
//! Every step of a scan (a vector's elements, a plane, the cube's spine, the look-back)
//! combines values through [`combine()`], starting from [`identity()`]. The operator is a
//! comptime value, so each one compiles its own kernels and the sum compiles to the plain
//! additions it always did.
//!
//! Every fold takes `(earlier, later)` in element order: minimum and maximum are not
//! commutative in the bits they return (which NaN, which of -0.0 and +0.0), so every caller
//! keeps the earlier operand first.

use cubecl::prelude::*;

use crate::Dtype;

/// The associative operator of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ScanOp {
    /// Running sum (`cumsum`); identity 0. Integers wrap.
    #[default]
    Sum,
    /// Running product (`cumprod`); identity 1. Integers wrap; floats round each product as
    /// IEEE does (`0 * inf` is NaN, and a NaN stays NaN).
    Prod,
    /// Running minimum (`cummin`); identity +inf for floats, the dtype's largest value for
    /// integers. PyTorch's rule: a NaN replaces the running value (so every later output of
    /// the row is a NaN, the latest one met), and of equal values the later one is kept (so
    /// -0.0 after +0.0 gives -0.0, and +0.0 after -0.0 gives +0.0).
    Min,
    /// Running maximum (`cummax`); identity -inf for floats, the dtype's smallest value for
    /// integers. NaN and ties as for [`ScanOp::Min`].
    Max,
}

impl ScanOp {
    /// Every operator, for tests and benches.
    pub const ALL: [ScanOp; 4] = [ScanOp::Sum, ScanOp::Prod, ScanOp::Min, ScanOp::Max];

    /// The operator's name (`sum`, `prod`, `min`, `max`).
    pub fn name(self) -> &'static str {
        match self {
            ScanOp::Sum => "sum",
            ScanOp::Prod => "prod",
            ScanOp::Min => "min",
            ScanOp::Max => "max",
        }
    }
}

/// What a kernel needs to fold: the operator, and the dtype of the elements scanned, which
/// fixes the accumulator ([`Dtype::accumulator`]): whether NaN is tested (f32 or f64 bits) and
/// which values are the identities of minimum and maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fold {
    /// The operator.
    pub op: ScanOp,
    /// The dtype of the elements folded (the accumulator is its [`Dtype::accumulator`]).
    pub elem: Dtype,
    /// The compiler keeps IEEE's NaN rule for comparisons
    /// ([`crate::DeviceCaps::ieee_nan_compare`]): a float minimum's or maximum's step then
    /// tests only the later operand for NaN, with the runtime's `isnan` (else both, by their
    /// bits).
    pub ieee_nan_compare: bool,
}

impl Fold {
    /// The sum of integers: what the compaction's counts and ranks fold with.
    pub const COUNT: Fold = Fold {
        op: ScanOp::Sum,
        elem: Dtype::U32,
        ieee_nan_compare: false,
    };

    /// Whether the fold gives the same bits however its operands are grouped: integer sums
    /// and products (they wrap, exactly), and every minimum and maximum (the result is an
    /// operand, chosen by a rule that does not depend on the grouping). Float sums and products
    /// round, so the scan keeps one fixed grouping for them (see `scan::tile`).
    pub fn exact(self) -> bool {
        matches!(self.op, ScanOp::Min | ScanOp::Max) || !self.elem.is_float()
    }

    /// The accumulator is f32 (f16, bf16 and f32 elements).
    fn f32(self) -> bool {
        self.elem.accumulator() == Dtype::F32
    }

    /// The accumulator is f64.
    fn f64(self) -> bool {
        self.elem.accumulator() == Dtype::F64
    }

    /// The smallest and largest element of an 8- or 16-bit integer dtype, whose accumulator
    /// is wider: its own extremes are the identities of maximum and minimum, so an exclusive
    /// scan's first output survives the narrowing store (the accumulator's `i32::MAX` would
    /// come out as -1 in an i8).
    fn narrow_bounds(self) -> Option<(i64, i64)> {
        match self.elem {
            Dtype::I8 => Some((i8::MIN as i64, i8::MAX as i64)),
            Dtype::I16 => Some((i16::MIN as i64, i16::MAX as i64)),
            Dtype::U8 => Some((0, u8::MAX as i64)),
            Dtype::U16 => Some((0, u16::MAX as i64)),
            _ => None,
        }
    }
}

/// The operator's identity: `combine(identity, x)` is `x`, bit for bit (for the sum, but for
/// `0 + -0.0`, which is +0.0 as it always was).
#[cube]
pub fn identity<A: Numeric>(#[comptime] fold: Fold) -> A {
    if comptime!(fold.op == ScanOp::Sum) {
        A::from_int(0)
    } else if comptime!(fold.op == ScanOp::Prod) {
        A::from_int(1)
    } else if comptime!(fold.f32()) {
        // The infinities by their bits.
        if comptime!(fold.op == ScanOp::Min) {
            A::reinterpret(0x7F80_0000u32)
        } else {
            A::reinterpret(0xFF80_0000u32)
        }
    } else if comptime!(fold.f64()) {
        if comptime!(fold.op == ScanOp::Min) {
            A::reinterpret(0x7FF0_0000_0000_0000u64)
        } else {
            A::reinterpret(0xFFF0_0000_0000_0000u64)
        }
    } else if comptime!(fold.narrow_bounds().is_some()) {
        let bound = comptime!(match fold.narrow_bounds() {
            Some((_, highest)) if fold.op == ScanOp::Min => highest,
            Some((lowest, _)) => lowest,
            None => 0,
        });
        A::from_int(bound)
    } else if comptime!(fold.op == ScanOp::Min) {
        A::max_value()
    } else {
        A::min_value()
    }
}

/// `earlier` folded with `later` (in element order; see the module docs).
#[cube]
pub fn combine<A: Numeric>(earlier: A, later: A, #[comptime] fold: Fold) -> A {
    if comptime!(fold.op == ScanOp::Sum) {
        earlier + later
    } else if comptime!(fold.op == ScanOp::Prod) {
        earlier * later
    } else {
        // PyTorch's cummin/cummax step: the later value replaces the running one when it is
        // NaN, or when neither is NaN and it is <= (min) or >= (max) it.
        let mut replace = if comptime!(fold.op == ScanOp::Min) {
            later <= earlier
        } else {
            later >= earlier
        };
        if comptime!((fold.f32() || fold.f64()) && fold.ieee_nan_compare) {
            // An ordered comparison with a NaN `earlier` is false: no test of the running
            // value, which is the step's critical path.
            replace = is_nan::<A>(later, fold) || replace;
        } else if comptime!(fold.f32() || fold.f64()) {
            replace = is_nan::<A>(later, fold) || (!is_nan::<A>(earlier, fold) && replace);
        }
        select(replace, later, earlier)
    }
}

/// [`combine()`] of one earlier value with every element of a vector of later ones.
#[cube]
pub fn combine_vector<A: Numeric, N: Size>(
    earlier: A,
    later: Vector<A, N>,
    #[comptime] fold: Fold,
) -> Vector<A, N> {
    if comptime!(fold.op == ScanOp::Sum) {
        Vector::new(earlier) + later
    } else if comptime!(fold.op == ScanOp::Prod) {
        Vector::new(earlier) * later
    } else {
        let mut out = later;
        #[unroll]
        for j in 0..later.vector_size() {
            out.insert(j, combine::<A>(earlier, later.extract(j), fold));
        }
        out
    }
}

/// A vector of accumulators converted to the element dtype for the store. bf16 sums and
/// products are rounded to nearest-even by their bits first, so the conversion only ever meets
/// values it represents exactly: the H200's Vulkan driver converts f32 to bf16 toward zero
/// (`bench/results/h200/7-check2`: 258 where 259 rounds to 260), CUDA and lavapipe to nearest.
/// Every other dtype converts as the runtime does (minima and maxima, and integers, are exact).
#[cube]
pub fn narrow<A: Numeric, E: Numeric, N: Size>(
    value: Vector<A, N>,
    #[comptime] fold: Fold,
) -> Vector<E, N> {
    if comptime!(fold.elem == Dtype::BF16 && matches!(fold.op, ScanOp::Sum | ScanOp::Prod)) {
        let mut rounded = value;
        #[unroll]
        for j in 0..value.vector_size() {
            rounded.insert(
                j,
                A::reinterpret(round_to_bf16(u32::reinterpret(value.extract(j)))),
            );
        }
        Vector::cast_from(rounded)
    } else {
        Vector::cast_from(value)
    }
}

/// The f32 of bits `bits` rounded to the nearest bf16 (ties to even), as f32 bits whose low 16
/// are zero; a NaN stays a NaN (quiet, its payload's top bits kept), an overflow becomes an
/// infinity.
#[cube]
pub fn round_to_bf16(bits: u32) -> u32 {
    let nan = (bits & 0x7FFF_FFFFu32) > 0x7F80_0000u32;
    let rounded = (bits + 0x7FFFu32 + ((bits >> 16u32) & 1u32)) & 0xFFFF_0000u32;
    select(nan, (bits & 0xFFFF_0000u32) | 0x0040_0000u32, rounded)
}

/// Whether a float accumulator (f32 or f64, as `A`) is a NaN. Where the compiler keeps IEEE's
/// NaN rules ([`Fold::ieee_nan_compare`]: CUDA, HIP) the runtime's own test: one float compare
/// that the compiler can merge with the `<=` beside it, where the bit test is a mask and an
/// integer compare (the float minimum's extra instructions over the integer one's; on the
/// H200 this took the look-back cummin f32 at 2^28 from 0.771 to 0.725 ms,
/// `docs/PERFORMANCE.md`). Elsewhere by the bits, as Vulkan and WGSL let a driver assume NaN
/// never occurs.
#[cube]
fn is_nan<A: Numeric>(value: A, #[comptime] fold: Fold) -> bool {
    if comptime!(fold.ieee_nan_compare && fold.f64()) {
        f64::reinterpret(value).is_nan()
    } else if comptime!(fold.ieee_nan_compare) {
        f32::reinterpret(value).is_nan()
    } else if comptime!(fold.f64()) {
        (u64::reinterpret(value) & 0x7FFF_FFFF_FFFF_FFFFu64) > 0x7FF0_0000_0000_0000u64
    } else {
        (u32::reinterpret(value) & 0x7FFF_FFFFu32) > 0x7F80_0000u32
    }
}

/// Inclusive scan of one value per lane across the plane (lane order is element order).
/// The sum and product use CubeCL's plane scans; minimum and maximum (which CubeCL has no
/// plane scan for, and whose hardware reductions drop NaNs) take log2(`PLANE_DIM`) shuffle
/// steps. Every lane of the plane must call it.
#[cube]
pub fn plane_inclusive<A: Numeric>(value: A, #[comptime] fold: Fold) -> A {
    if comptime!(fold.op == ScanOp::Sum) {
        plane_inclusive_sum(value)
    } else if comptime!(fold.op == ScanOp::Prod) {
        plane_inclusive_prod(value)
    } else {
        let mut acc = value;
        let mut delta = 1u32;
        while delta < PLANE_DIM {
            let earlier = plane_shuffle_up(acc, delta);
            if UNIT_POS_PLANE >= delta {
                acc = combine::<A>(earlier, acc, fold);
            }
            delta *= 2u32;
        }
        acc
    }
}

/// The fold of one value per lane over the whole plane, given to every lane. Every lane of
/// the plane must call it.
#[cube]
pub fn plane_total<A: Numeric>(value: A, #[comptime] fold: Fold) -> A {
    if comptime!(fold.op == ScanOp::Sum) {
        plane_sum(value)
    } else {
        plane_shuffle(plane_inclusive::<A>(value, fold), PLANE_DIM - 1)
    }
}
