//! # sieve-burn: Burn 0.22 tensor ops on sieve's kernels
//!
//! Tensor-level functions with Burn's names, backed by `sieve`'s CubeCL kernels on every
//! CubeCL runtime (wgpu, Vulkan, Metal, WebGPU, CUDA, ROCm), through Burn's
//! `#[backend_extension]` machinery (`Dispatch` -> `Fusion` -> `CubeBackend`, and `Autodiff`).
//! On a backend without a sieve kernel (Flex) each op falls back to stock Burn ops.
//!
//! - Scans: [`cumsum`], [`cumprod`], [`cummin`], [`cummax`].
//! - Filter: [`mask_select`], [`argwhere`], [`nonzero`] (and `_async` twins: one read of the
//!   count), [`mask_select_padded`], [`compact_rows`] (no read at all).
//! - Split: [`stable_partition`], [`split_by_bit`].
//! - Sort (stable, PyTorch's float order): [`sort`], [`sort_descending`],
//!   [`sort_with_indices`], [`sort_descending_with_indices`], [`argsort`],
//!   [`argsort_descending`].
//! - Top-k (the first k of a stable sort):
//!   [`topk`], [`topk_with_indices`], [`argtopk`], [`bottomk_with_indices`],
//!   [`topk_with_options`] ([`TopKOptions`]).
//! - Sets and order statistics on the sort and compaction engines: [`unique`],
//!   [`unique_with`] (inverse, counts), [`unique_consecutive`], [`searchsorted`],
//!   [`bucketize`], [`kthvalue`], [`median`].
//! - Sampling from logits on the device ([`sampling`]): top-k/top-p, min-p and plain
//!   Gumbel-max draws from per-row seeds, and the top-k and top-p filters on their own.
//!
//! Every op takes every numeric Burn dtype (f64, f32, f16, bf16, i64, i32, i16, i8, u64, u32,
//! u16, u8) and keeps it in its value outputs; indices and counts are the device's default
//! int dtype. On the cube backends a dtype the device lacks (WGSL: bf16 and the 8- and 16-bit
//! integers; f16 and f64 on some devices) panics with a message naming the dtype and the
//! device (the sort and top-k take 64-bit keys on every device).
//!
//! ```no_run
//! use burn::tensor::{Device, Tensor};
//! let device = Device::default();
//! let x = Tensor::<2>::from_floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], &device);
//! let running = sieve_burn::cumsum(x.clone(), 1); // [[1, 3, 6], [4, 9, 15]]
//! let big = sieve_burn::mask_select(x.clone(), x.clone().greater_elem(2.5)); // [3, 4, 5, 6]
//! let (sorted, order) = sieve_burn::sort_descending_with_indices(x, 1);
//! ```

#![warn(missing_docs)]

// The `backend_extension` macro generates code that names `burn::...`.
extern crate burn;

mod autodiff;
#[cfg(feature = "cube")]
mod cube;
mod fallback;
mod meta;
mod ops;
pub mod sampling;
mod served;
mod sets;
mod stock;
mod tensor;
mod values;

pub use ops::SieveOps;
pub use sets::{
    Unique, bucketize, kthvalue, median, searchsorted, unique, unique_consecutive, unique_with,
};
pub use tensor::{
    SieveKind, TopKOptions, argsort, argsort_descending, argtopk, argwhere, argwhere_async,
    bottomk_with_indices, compact_rows, cummax, cummin, cumprod, cumsum, mask_select,
    mask_select_async, mask_select_padded, nonzero, nonzero_async, sort, sort_descending,
    sort_descending_with_indices, sort_with_indices, split_by_bit, stable_partition, topk,
    topk_with_indices, topk_with_options,
};
pub use values::Values;

/// The CubeCL client behind a Burn device, for calling `sieve`'s raw-buffer API on the same
/// device (benchmarks, tests). `None` for a device of a backend without CubeCL (Flex).
#[cfg(feature = "cube")]
pub fn cube_client(device: &burn::tensor::Device) -> Option<cubecl::prelude::Client> {
    match device.clone().inner().as_dispatch() {
        burn::backend::DispatchDevice::Cube(cube) => Some(cube.client()),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}
