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
//! - [`compact`]: stream compaction and the stable split on one engine (flags from a mask,
//!   a comparison or one bit, ranked by the scan's register scan, placed by scatter or by
//!   binary-search gather).
//! - [`sort`]: stable radix sort of rows (keys and/or permutation), in one cube for short
//!   rows, by LSD counting passes for long ones.
//! - [`topk`]: the `k` largest or smallest values of every row and/or their positions
//!   (ties to the lower index, PyTorch's float order), by rank counting in one cube for short
//!   rows, by a radix select (MSB-first digit histograms over shrinking candidates) for long
//!   ones, or by the sort.
//! - [`distinct`]: the distinct values of a row by hashing (`unique` where values repeat):
//!   one pass into a table, then the compaction and the sort of the table's values only.
//! - [`search`]: binary search of queries in a sorted sequence (`searchsorted`).
//! - [`random`]: counter-based uniform numbers from per-row seeds (the same bits on every
//!   runtime), for sampling.
//! - [`sample`]: the last stage of token sampling in one kernel: one token per row drawn
//!   from its ranked candidates under top-k, top-p and a temperature (Gumbel-max).
//! - [`radix`]: the radix parts the sort and the top-k share: radix keys of every dtype,
//!   digit bins and the MSB digit select.
//!
//! Layers follow CUB's device -> pass -> cube -> plane split, in CubeCL's words:
//! `scan::scan` (device op, validation) -> `scan::launch` (pass sequence, workspaces) ->
//! `scan::kernels` (one thin `#[cube]` entry point per pass) -> `scan::tile` (what one cube
//! does with one tile) -> [`common`], the building blocks every family shares: cube- and
//! plane-level scans ([`common::cube`]), the decoupled look-back ([`common::lookback`]),
//! grids past 65,535 cubes ([`common::grid`]), 32- or 64-bit addressing
//! ([`common::address`]), and, inside the crate, caller-buffer checks (`common::buffers`) and
//! zero fills (`common::fill`). The other families keep the same layers.

#![warn(missing_docs)]

pub mod common;
pub mod compact;
pub mod device;
pub mod distinct;
pub mod dtype;
pub mod error;
pub mod radix;
pub mod random;
pub mod sample;
pub mod scan;
pub mod search;
pub mod sort;
pub mod topk;

pub use device::DeviceCaps;
pub use dtype::Dtype;
pub use error::SieveError;
