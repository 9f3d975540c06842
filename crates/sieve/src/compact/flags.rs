//! Unit-level flag computation: one 0/1 flag per element, from a mask, a comparison, a bit or
//! the element before it.

use cubecl::prelude::*;

use super::FlagRule;
use crate::radix::keys::{KeyKind, radix_key, wide_radix_word};

/// The flag of one element: the mask element is not zero, `value` compares true with
/// `threshold` (IEEE: NaN compares false except for `NotEqual`; in f32 when `in_f32`), or
/// (`BitClear`) bit `threshold` of the integer `value` is 0, read from its 64-bit pattern
/// when `wide`.
#[cube]
pub fn element_flag<E: Numeric, M: Numeric>(
    value: E,
    mask: M,
    threshold: E,
    #[comptime] rule: FlagRule,
    #[comptime] wide: bool,
    #[comptime] in_f32: bool,
) -> u32 {
    let keep = if comptime!(rule == FlagRule::BitClear) {
        // Integer casts keep the two's-complement bits (sign-extending to 64).
        if wide {
            (u64::cast_from(value) >> u64::cast_from(threshold)) & 1u64 == 0u64
        } else {
            (u32::cast_from(value) >> u32::cast_from(threshold)) & 1u32 == 0u32
        }
    } else if comptime!(rule == FlagRule::Mask) {
        mask != M::from_int(0)
    } else if in_f32 {
        // f16 and bf16 widen exactly, so the order is theirs; a device may have bf16 for
        // conversions and storage only (Vulkan's bf16 has no comparisons).
        compare::<f32>(f32::cast_from(value), f32::cast_from(threshold), rule)
    } else {
        compare::<E>(value, threshold, rule)
    };
    u32::cast_from(keep)
}

/// `value <rule> threshold` for a comparison rule, IEEE (NaN satisfies only `NotEqual`).
#[cube]
fn compare<T: Numeric>(value: T, threshold: T, #[comptime] rule: FlagRule) -> bool {
    if comptime!(rule == FlagRule::Greater) {
        value > threshold
    } else if comptime!(rule == FlagRule::GreaterEqual) {
        value >= threshold
    } else if comptime!(rule == FlagRule::Less) {
        value < threshold
    } else if comptime!(rule == FlagRule::LessEqual) {
        value <= threshold
    } else if comptime!(rule == FlagRule::Equal) {
        value == threshold
    } else {
        // Not `!=`: WGSL compilers may assume NaN never occurs and emit an ordered
        // not-equal (false for NaN); the negated equality is true for NaN everywhere.
        !(value == threshold)
    }
}

/// Flags of one vector of `N` elements.
#[cube]
pub fn vector_flags<E: Numeric, M: Numeric, N: Size>(
    values: Vector<E, N>,
    mask: Vector<M, N>,
    threshold: E,
    #[comptime] rule: FlagRule,
    #[comptime] wide: bool,
    #[comptime] in_f32: bool,
) -> Vector<u32, N> {
    let mut flags = Vector::<u32, N>::new(0u32);
    #[unroll]
    for j in 0..flags.vector_size() {
        flags.insert(
            j,
            element_flag::<E, M>(
                values.extract(j),
                mask.extract(j),
                threshold,
                rule,
                wide,
                in_f32,
            ),
        );
    }
    flags
}

/// `RunStart` flags of one vector of `N` elements: 1 where an element's radix key (`kind`:
/// the sort's order, so NaNs are equal and -0.0 equals +0.0; bit tests, which no compiler's
/// no-NaN assumption can fold) differs from the one before it (for the first, the last
/// element of `before`, the vector before this one; `row_start`: the vector opens its row, so
/// its first element is flagged whatever `before` holds).
#[cube]
pub fn run_start_flags<E: Numeric, N: Size>(
    values: Vector<E, N>,
    before: Vector<E, N>,
    row_start: bool,
    #[comptime] kind: KeyKind,
) -> Vector<u32, N> {
    let mut flags = Vector::<u32, N>::new(0u32);
    // The last element of `before` (unrolled: the extracts before it fold away).
    let mut previous = before.extract(0usize);
    #[unroll]
    for j in 1..flags.vector_size() {
        previous = before.extract(j);
    }
    #[unroll]
    for j in 0..flags.vector_size() {
        let value = values.extract(j);
        let first = row_start && j == 0;
        flags.insert(
            j,
            u32::cast_from(first || !same_key::<E>(value, previous, kind)),
        );
        previous = value;
    }
    flags
}

/// Two values have the same radix key (64-bit values: both radix words).
#[cube]
fn same_key<E: Numeric>(a: E, b: E, #[comptime] kind: KeyKind) -> bool {
    if comptime!(kind.wide()) {
        let (a, b) = (u64::reinterpret(a), u64::reinterpret(b));
        let (a_low, a_high) = (u32::cast_from(a), u32::cast_from(a >> 32u64));
        let (b_low, b_high) = (u32::cast_from(b), u32::cast_from(b >> 32u64));
        wide_radix_word(a_low, a_high, kind, true, false)
            == wide_radix_word(b_low, b_high, kind, true, false)
            && wide_radix_word(a_low, a_high, kind, false, false)
                == wide_radix_word(b_low, b_high, kind, false, false)
    } else {
        radix_key::<E>(a, kind, false) == radix_key::<E>(b, kind, false)
    }
}
