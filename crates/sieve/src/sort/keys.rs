//! Order-preserving radix keys: each key dtype mapped to a `u32` whose unsigned order is the
//! sort order (PyTorch's for floats), and back to positions.

use cubecl::prelude::*;

/// The key dtypes the radix kernels read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    F32,
    I32,
    U32,
}

/// The radix key of `key` (a 32-bit value of `kind`): unsigned order = sort order.
/// - f32: NaN (any payload, either sign) -> `u32::MAX`, the largest; -0.0 -> +0.0's key;
///   negative floats have every bit flipped, others the sign bit set.
/// - i32: the sign bit flipped. u32: itself.
/// - Descending: every bit flipped, so the order reverses but equal keys stay equal (the
///   passes are stable, so ties keep their input order).
#[cube]
pub fn radix_key<K: Numeric>(
    key: K,
    #[comptime] kind: KeyKind,
    #[comptime] descending: bool,
) -> u32 {
    let raw = u32::reinterpret(key);
    let mut radix = raw;
    if comptime!(kind == KeyKind::F32) {
        let magnitude = raw & 0x7FFF_FFFFu32;
        // Bit tests, not float compares: some compilers assume NaN never occurs.
        if magnitude > 0x7F80_0000u32 {
            radix = 0xFFFF_FFFFu32;
        } else if magnitude == 0u32 {
            radix = 0x8000_0000u32;
        } else if raw >= 0x8000_0000u32 {
            radix = !raw;
        } else {
            radix = raw | 0x8000_0000u32;
        }
    } else if comptime!(kind == KeyKind::I32) {
        radix = raw ^ 0x8000_0000u32;
    }
    if descending { !radix } else { radix }
}
