//! `SieveOps` on the CubeCL backend (every CubeCL runtime): lay the tensor out as contiguous
//! `[rows, len]` rows along `dim`, run the sieve kernel, and restore the caller's axis order.

use burn::backend::DType;
use burn::tensor::Shape;
use burn_cubecl::{
    CubeBackend,
    kernel::into_contiguous,
    ops::{numeric::empty_device_contiguous_dtype, permute},
    tensor::CubeTensor,
};
use sieve::Dtype;
use sieve::scan::{self, ScanKind, ScanOptions, ScanProblem};

use crate::SieveOps;

impl SieveOps for CubeBackend {
    fn sieve_float_cumsum(x: CubeTensor, dim: usize) -> CubeTensor {
        cumsum(x, dim, ScanKind::Inclusive)
    }

    fn sieve_int_cumsum(x: CubeTensor, dim: usize) -> CubeTensor {
        cumsum(x, dim, ScanKind::Inclusive)
    }
}

/// The sieve dtype of a Burn dtype, or a panic naming the ones sieve handles.
pub(crate) fn sieve_dtype(op: &str, dtype: DType) -> Dtype {
    match dtype {
        DType::F32 | DType::Flex32 => Dtype::F32,
        DType::F16 => Dtype::F16,
        DType::I32 => Dtype::I32,
        DType::U32 => Dtype::U32,
        DType::I64 => Dtype::I64,
        other => panic!(
            "{op}: dtype {other:?} is not supported by sieve (supported: f32, f16, i32, u32, i64)"
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
    let rows = if len == 0 {
        0
    } else {
        shape.num_elements() / len
    };
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

/// An uninitialised contiguous tensor shaped like `like`.
pub(crate) fn empty_like(like: &CubeTensor, shape: Shape) -> CubeTensor {
    empty_device_contiguous_dtype(like.client.clone(), like.device.clone(), shape, like.dtype)
}

fn cumsum(x: CubeTensor, dim: usize, kind: ScanKind) -> CubeTensor {
    let dtype = sieve_dtype("cumsum", x.dtype);
    let Rows {
        tensor,
        rows,
        len,
        swap,
    } = rows_along(x, dim);
    let output = empty_like(&tensor, tensor.meta.shape().clone());
    scan::scan(
        &tensor.client,
        &tensor.handle,
        &output.handle,
        ScanProblem { rows, len },
        dtype,
        kind,
        ScanOptions::default(),
    )
    .unwrap_or_else(|e| panic!("cumsum: {e}"));
    match swap {
        Some(axes) => permute(output, &axes),
        None => output,
    }
}
