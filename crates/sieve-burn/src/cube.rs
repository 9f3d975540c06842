//! What the families' CubeCL impls share (each family's `cube.rs` holds its ops): a tensor laid
//! out as contiguous `[rows, len]` rows along `dim` (the kernels' shape; the caller's axis order
//! restored after), Burn's dtypes as sieve's, allocation, and the dtype check made before
//! anything is queued.

use burn::backend::DType;
use burn::tensor::{IntDType, Shape};
use burn_cubecl::{
    CubeBackend,
    kernel::into_contiguous,
    ops::{numeric::empty_device_contiguous_dtype, permute},
    tensor::CubeTensor,
};
use sieve::Dtype;
use sieve::sort::{self as radix};

use crate::values::Values;

/// Float or Int: the kind an op's value output keeps from its input (both are `CubeTensor`s
/// here).
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Float,
    Int,
}

impl Kind {
    pub(crate) fn of(x: Values<CubeBackend>) -> (Kind, CubeTensor) {
        match x {
            Values::Float(x) => (Kind::Float, x),
            Values::Int(x) => (Kind::Int, x),
        }
    }

    pub(crate) fn wrap(self, x: CubeTensor) -> Values<CubeBackend> {
        match self {
            Kind::Float => Values::Float(x),
            Kind::Int => Values::Int(x),
        }
    }
}

/// The sieve dtype of a Burn dtype, or a panic naming the ones sieve handles. Every numeric
/// Burn dtype has one; whether the device holds it is the kernels' check (a clear error
/// naming the dtype and the runtime).
pub(crate) fn sieve_dtype(op: &str, dtype: DType) -> Dtype {
    match dtype {
        DType::F64 => Dtype::F64,
        DType::F32 | DType::Flex32 => Dtype::F32,
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::I64 => Dtype::I64,
        DType::I32 => Dtype::I32,
        DType::I16 => Dtype::I16,
        DType::I8 => Dtype::I8,
        DType::U64 => Dtype::U64,
        DType::U32 => Dtype::U32,
        DType::U16 => Dtype::U16,
        DType::U8 => Dtype::U8,
        other => panic!(
            "{op}: dtype {other:?} is not supported by sieve (supported: f64, f32, f16, bf16, \
             i64, i32, i16, i8, u64, u32, u16, u8)"
        ),
    }
}

/// A tensor viewed as contiguous rows along one dim, and how to map results back.
pub(crate) struct Rows {
    pub tensor: CubeTensor,
    pub rows: usize,
    pub len: usize,
    /// The axis permutation applied (its own inverse: a swap of `dim` and the last axis).
    pub swap: Option<Vec<usize>>,
}

/// Moves `dim` last and makes the tensor contiguous (no copy when it already is).
pub(crate) fn rows_along(x: CubeTensor, dim: usize) -> Rows {
    let rank = x.meta.num_dims();
    let shape = x.meta.shape().clone();
    let len = shape[dim];
    // The product of the other dims, not `numel / len`: along a size-0 dim there are still
    // rows (of length 0), and the split writes their counts (zeros).
    let rows = (0..rank).filter(|&d| d != dim).map(|d| shape[d]).product();
    let swap = (dim + 1 != rank).then(|| {
        let mut axes: Vec<usize> = (0..rank).collect();
        axes.swap(dim, rank - 1);
        axes
    });
    let tensor = match &swap {
        Some(axes) => into_contiguous(permute(x, axes)),
        None => into_contiguous(x),
    };
    Rows {
        tensor,
        rows,
        len,
        swap,
    }
}

/// An output laid out like [`rows_along`]'s tensor (`dim` last), in the caller's axis order:
/// the swap undone as a view (no copy). Any stride addresses a dim of size 1, but Burn 0.22's
/// fused kernels, vectorising such a view with another input, read its elements from the wrong
/// places (`[n, 1]` seen as `[1, n]`; `props::sets_property`, `median` along dim 0 of `[1, n]`
/// and of `[2, n, 1]`). So the dims of size 1 get the strides a contiguous tensor has where
/// the others are in row-major order (the view then is a contiguous tensor, as when `dim` had
/// size 1, a `kthvalue`); elsewhere a dim of size 1 that the swap left with stride 1 beside
/// another dim of stride 1 gets the tensor's size as its stride.
pub(crate) fn restore_axes(t: CubeTensor, swap: &Option<Vec<usize>>) -> CubeTensor {
    let Some(axes) = swap else {
        return t;
    };
    let mut t = permute(t, axes);
    let shape = t.meta.shape().clone();
    let rank = shape.num_dims();
    let contiguous: Vec<usize> = (0..rank)
        .map(|d| (d + 1..rank).map(|e| shape[e]).product())
        .collect();
    if (0..rank).all(|d| shape[d] == 1 || t.meta.strides()[d] == contiguous[d]) {
        for (d, &stride) in contiguous.iter().enumerate() {
            t.meta.strides_mut()[d] = stride;
        }
        return t;
    }
    let unit = |d: usize| t.meta.strides()[d] == 1;
    let moved: Vec<usize> = (0..rank)
        .filter(|&d| shape[d] == 1 && unit(d))
        .filter(|&d| (0..rank).any(|e| e != d && shape[e] > 1 && unit(e)))
        .collect();
    for d in moved {
        t.meta.strides_mut()[d] = shape.num_elements();
    }
    t
}

/// The sieve dtype of Burn's index dtype, or a panic naming the ones sieve writes.
pub(crate) fn sieve_index_dtype(op: &str, dtype: IntDType) -> Dtype {
    match dtype {
        IntDType::I32 => Dtype::I32,
        IntDType::I64 => Dtype::I64,
        IntDType::U32 => Dtype::U32,
        other => panic!("{op}: index dtype {other:?} is not supported (supported: i32, i64, u32)"),
    }
}

/// An uninitialised contiguous tensor on `like`'s device.
pub(crate) fn empty_of(like: &CubeTensor, shape: Shape, dtype: DType) -> CubeTensor {
    empty_device_contiguous_dtype(like.client.clone(), like.device.clone(), shape, dtype)
}

/// An uninitialised contiguous tensor shaped like `like`.
pub(crate) fn empty_like(like: &CubeTensor, shape: Shape) -> CubeTensor {
    empty_device_contiguous_dtype(like.client.clone(), like.device.clone(), shape, like.dtype)
}

/// Panics, naming the dtype and the device, if `op` cannot run on a tensor of `dtype` on
/// `device`'s CubeCL runtime: the kernels' own error, given before anything is queued (under
/// Fusion it would otherwise surface only when the result is read, after Burn's own layout
/// copies had run). Devices of other backends serve every dtype through Burn's ops.
pub(crate) fn refuse_unserved_dtype(
    op: &str,
    device: &burn::tensor::Device,
    dtype: DType,
    dtype_use: crate::tensor::DtypeUse,
) {
    let Some(client) = crate::cube_client(device) else {
        return;
    };
    let dtype = sieve_dtype(op, dtype);
    // 64-bit keys are read as pairs of 32-bit words: they sort on every device.
    if dtype_use == crate::tensor::DtypeUse::Values || radix::key_needs_device_dtype(dtype) {
        sieve::device::check_dtype(&client, dtype).unwrap_or_else(|e| panic!("{op}: {e}"));
    }
}
