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

// `#[backend_extension]` ends every generated `Dispatch` method with
// `_ => unimplemented!("Backend not supported for custom op `{}`", stringify!(op))`, the arm a
// tensor takes when its backend is not listed (Burn built with a backend feature that
// sieve-burn was not). This macro, in textual scope at every family's trait (the modules below),
// takes that call's place so the panic names the backend and the feature to enable. Should Burn
// change the call, this stops compiling rather than falling back to `unimplemented!`.
macro_rules! unimplemented {
    ($message:literal, stringify!($op:ident)) => {
        $crate::served::unserved(stringify!($op))
    };
}

/// Declares an op family's extension trait (`pub trait Name { methods }`, a `Backend`) with
/// the backends sieve-burn serves, one list for every family: Autodiff and Fusion around each
/// (burn's `fusion` feature is always on in this crate, so Fusion is listed unconditionally), the
/// CubeCL backend with the kernels, and the stock-op fallbacks' backends.
macro_rules! extension_trait {
    ($(#[$attr:meta])* pub trait $name:ident { $($body:tt)* }) => {
        $(#[$attr])*
        #[burn::backend::backend_extension(
            Autodiff,
            Fusion,
            Cube: cfg(feature = "cube"),
            Flex: cfg(feature = "flex"),
            NdArray: cfg(feature = "ndarray"),
            LibTorch: cfg(feature = "tch"),
            Remote: cfg(feature = "remote"),
        )]
        pub trait $name: burn::backend::Backend { $($body)* }
    };
}

// One module per op family: its extension trait (methods, Fusion metadata, stock-Burn
// fallback bodies) and public functions in `mod.rs`, its CubeCL and Autodiff impls beside.
mod compact;
pub mod sampling;
mod scan;
mod sort;

// What the families share: kind-generic operands, the CubeCL layout helpers, the stock-op
// fallbacks, gradient helpers, argument checks.
mod autodiff;
#[cfg(feature = "cube")]
mod cube;
mod fallback;
mod served;
mod sets;
mod stock;
mod tensor;
mod values;

// Each family's public items (its trait, functions and option types), so a new op is
// exported where it is written.
pub use compact::*;
pub use sampling::SampleOps;
pub use scan::*;
pub use sets::{Unique, kthvalue, median, unique, unique_consecutive, unique_with};
pub use sort::*;
pub use tensor::SieveKind;
pub use values::Values;

/// Every op family's extension trait: what a backend implements to serve all of sieve-burn
/// (the CubeCL backend with the kernels, Autodiff over it, and the stock-op fallbacks).
pub trait SieveOps: ScanOps + CompactOps + SortOps + SampleOps {}

impl<B: ScanOps + CompactOps + SortOps + SampleOps> SieveOps for B {}

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
