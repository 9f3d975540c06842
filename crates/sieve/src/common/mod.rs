//! Building blocks shared by every family: grid shapes on the host, and cube- and
//! plane-level `#[cube]` functions that kernels call, and the few kernels every family
//! launches alike (fills, the gather by positions).

// `#[cube] pub fn f` also emits a public `mod f` (its expansion and launch glue), and
// `#[derive(CubeType)]` a public `<Type>Expand` struct; CubeCL gives them no docs and no way
// to add any, so `missing_docs` is off in the modules that hold public `#[cube]` items.
// Every item written by hand there is documented all the same.
pub mod address;
pub(crate) mod buffers;
#[allow(missing_docs)]
pub mod cube;
pub mod fill;
#[allow(missing_docs)]
pub mod fold;
#[allow(missing_docs)]
pub mod gather;
#[allow(missing_docs)]
pub mod grid;
#[allow(missing_docs)]
pub mod lookback;

use std::cell::Cell;
use std::thread::LocalKey;

/// Runs `f` with the thread-local `key` set to `value`, and puts the previous value back when
/// `f` returns or panics: the scoped per-thread overrides ([`crate::device::with_limits`],
/// [`address::with_wide_addressing`]) are this, so concurrently running calls on other
/// threads never see them.
pub(crate) fn with_thread_value<T: Copy + 'static, R>(
    key: &'static LocalKey<Cell<T>>,
    value: T,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore<T: Copy + 'static>(&'static LocalKey<Cell<T>>, T);
    impl<T: Copy + 'static> Drop for Restore<T> {
        fn drop(&mut self) {
            self.0.set(self.1);
        }
    }
    let _restore = Restore(key, key.replace(value));
    f()
}

/// The most loop bodies one nest of `#[unroll]` loops may expand to, for every tuning the
/// checks accept. Unrolling multiplies: a nest whose trip counts are tuning fields
/// (`units * elements_per_unit^2` in top-k's rank sweep) grows the kernel with their
/// product. At 32 units x 8 keys per unit that sweep expanded 2,048 bodies into 17,000 lines
/// of CUDA C++ that took about 100 s to compile on its first call on the H200 (issue 13:
/// it looked like a hang; the GPU sat idle while one host thread compiled). A nest past this
/// budget keeps its outer loop (`#[unroll(bodies <= UNROLL_BODIES)]`).
pub const UNROLL_BODIES: u32 = 512;
