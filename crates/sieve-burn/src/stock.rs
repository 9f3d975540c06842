//! Backends without sieve kernels: the trait's default bodies, built from stock Burn ops
//! ([`crate::fallback`]), serve them, one generic fallback for all.
//!
//! Remote is implemented on Burn's `Remote` type itself, which with Burn's `fusion` feature is
//! `Fusion<BackendRouter<..>>`: the generated Fusion impl would ship each op to the server as
//! an opaque custom op that a stock server cannot run, whereas the default bodies send it the
//! stock ops they are made of. (`BackendRouter` does not implement `SieveOps`, so the two
//! impls do not overlap.)

#[cfg(feature = "flex")]
impl crate::SieveOps for burn::backend::Flex {}

#[cfg(feature = "ndarray")]
#[allow(deprecated)] // Burn deprecates NdArray in favour of Flex; users of it are still served.
impl crate::SieveOps for burn::backend::NdArray {}

#[cfg(feature = "tch")]
#[allow(deprecated)] // Burn deprecates LibTorch in favour of the CubeCL backends.
impl crate::SieveOps for burn::backend::LibTorch {}

#[cfg(feature = "remote")]
impl crate::SieveOps for burn::backend::Remote {}
