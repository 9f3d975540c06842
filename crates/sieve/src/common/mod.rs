//! Building blocks shared by every family: grid shapes on the host, and cube- and
//! plane-level `#[cube]` functions that kernels call. Nothing here launches a kernel.

pub mod address;
pub(crate) mod buffers;
pub mod cube;
pub(crate) mod fill;
pub mod grid;
pub mod lookback;

/// The most loop bodies one nest of `#[unroll]` loops may expand to, for every tuning the
/// checks accept. Unrolling multiplies: a nest whose trip counts are tuning fields
/// (`units * elements_per_unit^2` in top-k's rank sweep) grows the kernel with their
/// product. At 32 units x 8 keys per unit that sweep expanded 2,048 bodies into 17,000 lines
/// of CUDA C++ that took about 100 s to compile on its first call on the H200 (issue 13:
/// it looked like a hang; the GPU sat idle while one host thread compiled). A nest past this
/// budget keeps its outer loop (`#[unroll(bodies <= UNROLL_BODIES)]`).
pub const UNROLL_BODIES: u32 = 512;
