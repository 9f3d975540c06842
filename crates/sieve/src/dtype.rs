//! Element types sieve kernels accept, and how each maps onto CubeCL's types.

use cubecl::ir::{ElemType, FloatKind, IntKind, UIntKind};

/// An element type of a sieve buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// 32-bit unsigned integers.
    U32,
    /// 32-bit signed integers (two's complement).
    I32,
    /// 32-bit IEEE floats.
    F32,
    /// Needs 64-bit integer support on the device.
    I64,
    /// Needs f16 support on the device; sums accumulate in f32 and round once at the store.
    F16,
    /// Needs bf16 support on the device. Sort keys only (the scan, compaction and top-k
    /// refuse it).
    BF16,
}

impl Dtype {
    /// Every dtype, in declaration order.
    pub const ALL: [Dtype; 6] = [
        Dtype::U32,
        Dtype::I32,
        Dtype::F32,
        Dtype::I64,
        Dtype::F16,
        Dtype::BF16,
    ];

    /// The CubeCL element type a buffer of this dtype holds.
    pub fn elem_type(self) -> ElemType {
        match self {
            Dtype::U32 => ElemType::UInt(UIntKind::U32),
            Dtype::I32 => ElemType::Int(IntKind::I32),
            Dtype::F32 => ElemType::Float(FloatKind::F32),
            Dtype::I64 => ElemType::Int(IntKind::I64),
            Dtype::F16 => ElemType::Float(FloatKind::F16),
            Dtype::BF16 => ElemType::Float(FloatKind::BF16),
        }
    }

    /// The type sums are carried in: the element type itself, except f16 and bf16, which
    /// accumulate in f32 (as PyTorch does) so long rows do not lose every low bit.
    pub fn accumulator(self) -> Dtype {
        match self {
            Dtype::F16 | Dtype::BF16 => Dtype::F32,
            other => other,
        }
    }

    /// Bytes per element: 4, 8 for i64, 2 for f16 and bf16.
    pub fn size_bytes(self) -> usize {
        match self {
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::I64 => 8,
            Dtype::F16 | Dtype::BF16 => 2,
        }
    }

    /// Whether this is a float dtype (f32, f16, bf16).
    pub fn is_float(self) -> bool {
        matches!(self, Dtype::F32 | Dtype::F16 | Dtype::BF16)
    }

    /// The lowercase name used in messages (`"u32"`, `"bf16"`, ...); also what `Display`
    /// prints.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::U32 => "u32",
            Dtype::I32 => "i32",
            Dtype::F32 => "f32",
            Dtype::I64 => "i64",
            Dtype::F16 => "f16",
            Dtype::BF16 => "bf16",
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
