//! # sieve: GPU selection primitives as CubeCL kernels
//!
//! Each primitive is written once as CubeCL kernels over raw device buffers and runs on any
//! CubeCL runtime (wgpu/Vulkan/Metal/WebGPU, CUDA, ROCm/HIP). This crate has no Burn
//! dependency and no runtime of its own: callers pass a [`cubecl::client::Client`] and buffer
//! handles. `sieve-burn` wraps it as Burn tensor ops.
//!
//! Families:
//! - [`scan`]: exclusive and inclusive row-wise sums (`[rows, len]`), deterministic, with a
//!   portable reduce-then-scan and a single-pass decoupled look-back where the runtime
//!   guarantees forward progress between cubes.
//! - [`compact`]: stream compaction and the stable split on one engine (flags from a mask or
//!   a comparison, ranked by the scan's register scan, placed by scatter or by binary-search
//!   gather).
//! - [`sort`]: stable radix sort of rows (keys and/or permutation), in one cube for short
//!   rows, by LSD counting passes for long ones.
//! - [`topk`]: the `k` largest or smallest values of every row and/or their positions
//!   (ties to the lower index, PyTorch's float order), by rank counting in one cube for short
//!   rows, by a radix select (MSB-first digit histograms over shrinking candidates) or a
//!   bisection on the key axis for long ones, or by the sort.
//!
//! Layers follow CUB's device -> pass -> cube -> plane split, in CubeCL's words:
//! `scan::scan` (device op, validation) -> `scan::launch` (pass sequence, workspaces) ->
//! `scan::kernels` (one thin `#[cube]` entry point per pass) -> `common::cube` /
//! `common::tile` (cube- and plane-level building blocks).

pub mod common;
pub mod compact;
pub mod device;
pub mod dtype;
pub mod error;
pub mod scan;
pub mod sort;
pub mod topk;

pub use device::DeviceCaps;
pub use dtype::Dtype;
pub use error::SieveError;
