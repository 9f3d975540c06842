//! Order-preserving radix keys: each key dtype mapped to a `u32` whose unsigned order is the
//! sort order (PyTorch's for floats), and back to positions.

use cubecl::prelude::*;

use crate::Dtype;

/// The key dtypes the radix kernels read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    F32,
    I32,
    U32,
    /// Half floats: the 16-bit pattern, recovered from the exact f32 widening, keyed as a
    /// 16-bit float.
    F16,
    /// Brain floats: the high half of the exact f32 widening, keyed as a 16-bit float.
    BF16,
    I8,
    I16,
    U8,
    U16,
    /// Two 32-bit radix words (low, then high), sorted one after the other: LSD order makes
    /// that a sort by the 64-bit key. [`wide_radix_word()`] keys the words.
    I64,
    U64,
    F64,
    /// f32 read as token sampling reads logits (`crate::sample`): NaN as `-inf` and `+inf`
    /// as `f32::MAX` (so a NaN ties with `-inf` and a `+inf` with the largest finite value,
    /// ties going to the lower index). Never a dtype's own kind: only chosen by the crate's
    /// sampling entry points, so that the top-k under a draw needs no sanitising pass.
    F32Logits,
}

impl KeyKind {
    /// The kind of keys of `dtype` (every dtype is a key dtype).
    pub fn of(dtype: Dtype) -> KeyKind {
        match dtype {
            Dtype::F32 => KeyKind::F32,
            Dtype::I32 => KeyKind::I32,
            Dtype::U32 => KeyKind::U32,
            Dtype::F16 => KeyKind::F16,
            Dtype::BF16 => KeyKind::BF16,
            Dtype::I8 => KeyKind::I8,
            Dtype::I16 => KeyKind::I16,
            Dtype::U8 => KeyKind::U8,
            Dtype::U16 => KeyKind::U16,
            Dtype::I64 => KeyKind::I64,
            Dtype::U64 => KeyKind::U64,
            Dtype::F64 => KeyKind::F64,
        }
    }

    /// The keys' own 32 bits ride through the passes (their radix key is recomputed from
    /// them): no encode or decode pass.
    pub fn carried_raw(self) -> bool {
        matches!(
            self,
            KeyKind::F32 | KeyKind::I32 | KeyKind::U32 | KeyKind::F32Logits
        )
    }

    /// 64-bit keys: read as pairs of 32-bit words (no 64-bit arithmetic), keyed by
    /// [`wide_radix_word()`], one radix word at a time.
    pub fn wide(self) -> bool {
        matches!(self, KeyKind::I64 | KeyKind::U64 | KeyKind::F64)
    }

    /// Bits of a radix key (of each radix word of a wide key). A key lives in the low bits
    /// of its `u32`, and the bits above are zero in both directions, so the passes rank only
    /// these: one 8-bit pass for 8-bit keys, two for 16-bit keys.
    pub fn key_bits(self) -> u32 {
        match self {
            KeyKind::I8 | KeyKind::U8 => 8,
            KeyKind::I16 | KeyKind::U16 | KeyKind::F16 | KeyKind::BF16 => 16,
            _ => 32,
        }
    }

    /// The radix key's bits: the mask descending flips.
    pub fn key_mask(self) -> u32 {
        u32::MAX >> (32 - self.key_bits())
    }
}

/// The radix key of `key` (a value of `kind`; not a wide kind, whose words
/// [`wide_radix_word()`] keys): unsigned order = sort order, in the low
/// [`KeyKind::key_bits`] bits.
/// - Floats (f32, and f16 and bf16 as their 16-bit patterns): NaN (any payload, either
///   sign) -> every key bit set, the largest; -0.0 -> +0.0's key; negative floats have
///   every bit flipped, others the sign bit set.
/// - [`KeyKind::F32Logits`]: `-inf`'s key for NaN, `f32::MAX`'s for `+inf`, else as f32.
/// - Signed integers: the sign bit flipped. Unsigned: themselves.
/// - Descending: every key bit flipped, so the order reverses but equal keys stay equal (the
///   passes are stable, so ties keep their input order).
#[cube]
pub fn radix_key<K: Numeric>(
    key: K,
    #[comptime] kind: KeyKind,
    #[comptime] descending: bool,
) -> u32 {
    let radix = if comptime!(kind == KeyKind::F32) {
        float_order(u32::reinterpret(key), 0x8000_0000u32, 0x7F80_0000u32)
    } else if comptime!(kind == KeyKind::F32Logits) {
        float_order(
            logit_bits(u32::reinterpret(key)),
            0x8000_0000u32,
            0x7F80_0000u32,
        )
    } else if comptime!(kind == KeyKind::F16) {
        float_order(
            half_bits(u32::reinterpret(f32::cast_from(key))),
            0x8000u32,
            0x7C00u32,
        )
    } else if comptime!(kind == KeyKind::BF16) {
        // A bf16 is the high half of its f32 widening.
        float_order(
            u32::reinterpret(f32::cast_from(key)) >> 16u32,
            0x8000u32,
            0x7F80u32,
        )
    } else if comptime!(kind == KeyKind::I32) {
        u32::reinterpret(key) ^ 0x8000_0000u32
    } else if comptime!(kind == KeyKind::I8 || kind == KeyKind::I16) {
        // Sign-extended to 32 bits, the sign bit flipped, cut to the key's bits.
        let sign = comptime!(1u32 << (kind.key_bits() - 1));
        (u32::reinterpret(i32::cast_from(key)) ^ sign) & comptime!(kind.key_mask())
    } else if comptime!(kind == KeyKind::U8 || kind == KeyKind::U16) {
        u32::cast_from(key)
    } else {
        u32::reinterpret(key)
    };
    if descending {
        radix ^ comptime!(kind.key_mask())
    } else {
        radix
    }
}

/// The order-preserving key of a float's bit pattern `raw`, whose sign bit is `sign` and
/// whose infinity is `infinity` (f32: `0x8000_0000`, `0x7F80_0000`; f16: `0x8000`,
/// `0x7C00`; bf16: `0x8000`, `0x7F80`): NaN -> every bit below `2 * sign` set; -0.0 and
/// +0.0 -> `sign`; negatives flipped; others with `sign` set.
#[cube]
fn float_order(raw: u32, #[comptime] sign: u32, #[comptime] infinity: u32) -> u32 {
    let all = comptime!(sign | (sign - 1));
    let magnitude = raw & comptime!(sign - 1);
    // Bit tests, not float compares: some compilers assume NaN never occurs. Selects, not
    // branches: every pass of a float sort maps each key twice (13-b's SASS had a branch and
    // its reconvergence a key for the branches).
    let ordered = select(raw >= sign, !raw & all, raw | sign);
    let zeroed = select(magnitude == 0u32, sign, ordered);
    select(magnitude > infinity, all, zeroed)
}

/// The radix key of f32 bits `raw` that are neither -0.0 nor NaN ([`f32_needs_full_key`]):
/// the sign flip alone, [`radix_key`]'s order of every such float in fewer instructions than
/// [`float_order`] (descending: every bit flipped). The sort's plain map
/// (`SortTuning::plain_float_keys`).
#[cube]
pub(crate) fn plain_f32_key(raw: u32, #[comptime] descending: bool) -> u32 {
    let flipped = select(raw >= 0x8000_0000u32, !raw, raw | 0x8000_0000u32);
    if descending { !flipped } else { flipped }
}

/// Whether f32 bits `raw` are -0.0 or a NaN: the floats whose radix key is not
/// [`plain_f32_key`]'s.
#[cube]
pub(crate) fn f32_needs_full_key(raw: u32) -> bool {
    (raw & 0x7FFF_FFFFu32) > 0x7F80_0000u32 || raw == 0x8000_0000u32
}

/// The bits of f32 `raw` as a logit counts: `-inf` for NaN, `f32::MAX` for `+inf` (bit tests,
/// as in [`float_order`]). The top-k ranks logits by it and the sampling draw reads them
/// through it, so both see the same value.
#[cube]
pub(crate) fn logit_bits(raw: u32) -> u32 {
    let mut bits = raw;
    if (raw & 0x7FFF_FFFFu32) > 0x7F80_0000u32 {
        bits = 0xFF80_0000u32;
    } else if raw == 0x7F80_0000u32 {
        bits = 0x7F7F_FFFFu32;
    }
    bits
}

/// The f16 bit pattern of an f16 value from the bits of its exact f32 widening: integer
/// work only (a kernel cannot reinterpret an f16 as a 16-bit integer where the device has
/// no 16-bit integers, as WGSL has not). f16 subnormals are normal f32s: their significand
/// shifted back down.
#[cube]
fn half_bits(widened: u32) -> u32 {
    let sign = (widened >> 16u32) & 0x8000u32;
    let exponent = (widened >> 23u32) & 0xFFu32;
    let mantissa = widened & 0x7F_FFFFu32;
    // Zero (exponent 0: an f16 widening has no f32 subnormals).
    let mut magnitude = 0u32;
    if exponent == 0xFFu32 {
        // Infinity, or NaN with its payload's top bits (never zero for a NaN).
        magnitude = 0x7C00u32 | (mantissa >> 13u32);
    } else if exponent >= 113u32 {
        // Normal: rebias 127 -> 15.
        magnitude = ((exponent - 112u32) << 10u32) | (mantissa >> 13u32);
    } else if exponent >= 103u32 {
        // Subnormal f16: value * 2^24, the significand with its hidden bit.
        magnitude = (0x80_0000u32 | mantissa) >> (126u32 - exponent);
    }
    sign | magnitude
}

/// One 32-bit word of a 64-bit key's radix key (the two words in radix order, high word
/// most significant), from the key's two little-endian words:
/// - u64: the words as they are; i64: the high word's sign bit flipped;
/// - f64 (both words decide NaN and zero): NaN -> both words `u32::MAX`; -0.0 and +0.0 ->
///   +0.0's key (`0x8000_0000`, 0); negatives have both words flipped, others the high
///   word's sign bit set.
///
/// Descending flips every bit.
#[cube]
pub fn wide_radix_word(
    low: u32,
    high: u32,
    #[comptime] kind: KeyKind,
    #[comptime] high_word: bool,
    #[comptime] descending: bool,
) -> u32 {
    let mut radix_high = high;
    let mut radix_low = low;
    if comptime!(kind == KeyKind::I64) {
        radix_high = high ^ 0x8000_0000u32;
    } else if comptime!(kind == KeyKind::F64) {
        let magnitude = high & 0x7FFF_FFFFu32;
        if magnitude > 0x7FF0_0000u32 || (magnitude == 0x7FF0_0000u32 && low != 0u32) {
            radix_high = 0xFFFF_FFFFu32;
            radix_low = 0xFFFF_FFFFu32;
        } else if magnitude == 0u32 && low == 0u32 {
            radix_high = 0x8000_0000u32;
        } else if high >= 0x8000_0000u32 {
            radix_high = !high;
            radix_low = !low;
        } else {
            radix_high = high | 0x8000_0000u32;
        }
    }
    let word = if high_word { radix_high } else { radix_low };
    if descending { !word } else { word }
}
