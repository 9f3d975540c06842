//! Order-preserving radix keys: each key dtype mapped to a `u32` whose unsigned order is the
//! sort order (PyTorch's for floats), and back to positions.

use cubecl::prelude::*;

/// The key dtypes the radix kernels read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    F32,
    I32,
    U32,
    /// Half floats: widened to f32 (exactly), then keyed as f32.
    F16,
    /// Brain floats: likewise widened to f32 (exactly), then keyed as f32.
    BF16,
    /// Two 32-bit radix words (low, then high with the sign flipped), sorted one after the
    /// other: LSD order makes that a sort by the 64-bit key.
    I64,
}

impl KeyKind {
    /// The keys' own 32 bits ride through the passes (their radix key is recomputed from
    /// them): no encode or decode pass.
    pub fn carried_raw(self) -> bool {
        matches!(self, KeyKind::F32 | KeyKind::I32 | KeyKind::U32)
    }

    /// The radix bits of a 32-bit radix word that can differ between keys, `(lowest, count)`:
    /// a half float widened to f32 leaves the low mantissa bits zero.
    pub fn significant_bits(self) -> (u32, u32) {
        match self {
            KeyKind::F16 => (13, 19),
            KeyKind::BF16 => (16, 16),
            _ => (0, 32),
        }
    }
}

/// The radix key of `key` (a value of `kind`; not I64, whose words [`wide_radix_word`] keys): unsigned order = sort order.
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
    let raw = if comptime!(kind == KeyKind::F16 || kind == KeyKind::BF16) {
        u32::reinterpret(f32::cast_from(key))
    } else {
        u32::reinterpret(key)
    };
    let mut radix = raw;
    if comptime!(kind == KeyKind::F32 || kind == KeyKind::F16 || kind == KeyKind::BF16) {
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

/// One 32-bit word of an i64 key's radix key, from the key's two little-endian words: the
/// low word as it is, the high word with the sign bit flipped; descending flips every bit.
#[cube]
pub fn wide_radix_word(
    low: u32,
    high: u32,
    #[comptime] high_word: bool,
    #[comptime] descending: bool,
) -> u32 {
    let word = if high_word {
        high ^ 0x8000_0000u32
    } else {
        low
    };
    if descending { !word } else { word }
}
