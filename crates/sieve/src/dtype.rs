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
    /// Needs bf16 support on the device; sums accumulate in f32 and round once at the store.
    BF16,
    /// 8-bit signed integers. Needs 8-bit buffers on the device.
    I8,
    /// 16-bit signed integers. Needs 16-bit buffers on the device.
    I16,
    /// 8-bit unsigned integers. Needs 8-bit buffers on the device.
    U8,
    /// 16-bit unsigned integers. Needs 16-bit buffers on the device.
    U16,
    /// 64-bit unsigned integers. Needs 64-bit integers on the device.
    U64,
    /// 64-bit IEEE floats. Needs f64 on the device (CUDA and HIP have it; most wgpu
    /// devices do not).
    F64,
}

impl Dtype {
    /// Every dtype, in declaration order.
    pub const ALL: [Dtype; 12] = [
        Dtype::U32,
        Dtype::I32,
        Dtype::F32,
        Dtype::I64,
        Dtype::F16,
        Dtype::BF16,
        Dtype::I8,
        Dtype::I16,
        Dtype::U8,
        Dtype::U16,
        Dtype::U64,
        Dtype::F64,
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
            Dtype::I8 => ElemType::Int(IntKind::I8),
            Dtype::I16 => ElemType::Int(IntKind::I16),
            Dtype::U8 => ElemType::UInt(UIntKind::U8),
            Dtype::U16 => ElemType::UInt(UIntKind::U16),
            Dtype::U64 => ElemType::UInt(UIntKind::U64),
            Dtype::F64 => ElemType::Float(FloatKind::F64),
        }
    }

    /// The type scans are carried in: the element type itself, except f16 and bf16, which
    /// accumulate in f32 (as PyTorch does) so long rows do not lose every low bit, and the
    /// 8- and 16-bit integers, which accumulate in i32 or u32 and are truncated at the store:
    /// sums and products modulo 2^32 truncate to the same bits as modulo 2^8 or 2^16 (they
    /// wrap in their own width, as Burn keeps the dtype), minima and maxima are exact, and
    /// 32-bit arithmetic, plane operations and look-back words exist on every device, where
    /// 8- and 16-bit ones often do not (only their buffers are needed).
    pub fn accumulator(self) -> Dtype {
        match self {
            Dtype::F16 | Dtype::BF16 => Dtype::F32,
            Dtype::I8 | Dtype::I16 => Dtype::I32,
            Dtype::U8 | Dtype::U16 => Dtype::U32,
            other => other,
        }
    }

    /// Bytes per element.
    pub fn size_bytes(self) -> usize {
        match self {
            Dtype::I8 | Dtype::U8 => 1,
            Dtype::I16 | Dtype::U16 | Dtype::F16 | Dtype::BF16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::I64 | Dtype::U64 | Dtype::F64 => 8,
        }
    }

    /// Whether this is a float dtype (f16, bf16, f32, f64).
    pub fn is_float(self) -> bool {
        matches!(self, Dtype::F32 | Dtype::F16 | Dtype::BF16 | Dtype::F64)
    }

    /// Whether this is a signed integer dtype (i8, i16, i32, i64).
    pub fn is_signed_int(self) -> bool {
        matches!(self, Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64)
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
            Dtype::I8 => "i8",
            Dtype::I16 => "i16",
            Dtype::U8 => "u8",
            Dtype::U16 => "u16",
            Dtype::U64 => "u64",
            Dtype::F64 => "f64",
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
