//! Building blocks shared by every family: grid shapes on the host, and cube- and
//! plane-level `#[cube]` functions that kernels call. Nothing here launches a kernel.

pub mod address;
pub mod cube;
pub mod fill;
pub mod grid;
pub mod lookback;
