//! Building blocks shared by every family: grid shapes on the host, and cube- and
//! plane-level `#[cube]` functions that kernels call. Nothing here launches a kernel.

pub mod address;
pub(crate) mod buffers;
pub mod cube;
pub(crate) mod fill;
pub mod grid;
pub mod lookback;
