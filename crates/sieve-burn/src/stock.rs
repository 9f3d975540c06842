//! Backends without sieve kernels: the trait's default bodies, built from stock Burn ops
//! ([`crate::fallback`]), serve them, one generic fallback for all.
//!
//! Remote is implemented on Burn's `Remote` type itself, which with Burn's `fusion` feature is
//! `Fusion<BackendRouter<..>>`: the generated Fusion impl would ship each op to the server as
//! an opaque custom op that a stock server cannot run, whereas the default bodies send it the
//! stock ops they are made of. (`BackendRouter` does not implement `SieveOps`, so the two
//! impls do not overlap.)

/// Every family's trait on `$backend`, served by the default bodies. (Burn deprecates
/// NdArray and LibTorch in favour of Flex and the CubeCL backends; their users are still
/// served.)
macro_rules! serve_with_fallbacks {
    ($backend:ty) => {
        #[allow(deprecated)]
        impl crate::ScanOps for $backend {}
        #[allow(deprecated)]
        impl crate::CompactOps for $backend {}
        #[allow(deprecated)]
        impl crate::SortOps for $backend {}
        #[allow(deprecated)]
        impl crate::SampleOps for $backend {}
    };
}

#[cfg(feature = "flex")]
serve_with_fallbacks!(burn::backend::Flex);

#[cfg(feature = "ndarray")]
serve_with_fallbacks!(burn::backend::NdArray);

#[cfg(feature = "tch")]
serve_with_fallbacks!(burn::backend::LibTorch);

#[cfg(feature = "remote")]
serve_with_fallbacks!(burn::backend::Remote);
