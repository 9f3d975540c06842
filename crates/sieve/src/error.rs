//! One error type for every sieve entry point. Each variant names the argument, the value
//! it had and what would have been valid, so a caller can fix the call without reading code.

use crate::Dtype;

/// Why a sieve call refused to run; each entry point's docs say which checks it makes (all
/// before it launches anything).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SieveError {
    /// An argument is outside its valid range.
    #[error("invalid argument `{name}` = {value}: expected {expected}")]
    InvalidArgument {
        /// The argument, as the caller wrote it (`problem.len`, `io.index_dtype`,
        /// `tuning.radix_bits`, ...).
        name: &'static str,
        /// The value it had.
        value: String,
        /// What would have been valid (a range, a list of dtypes, a reason).
        expected: String,
    },
    /// The device cannot run this dtype (e.g. no 64-bit integers or no f16 arithmetic).
    #[error("dtype {dtype} is not supported on this device ({device}): {reason}")]
    UnsupportedDtype {
        /// The dtype the device lacks.
        dtype: Dtype,
        /// The device, as [`DeviceCaps::describe`](crate::DeviceCaps::describe) names it.
        device: String,
        /// What the device lacks.
        reason: &'static str,
    },
    /// A forced strategy (or a tuning's `use_planes`) this device or this call cannot run:
    /// e.g. a look-back without 64-bit atomics, a split (`Rejected::Keep`) on the look-back,
    /// plane operations on a device without them.
    #[error("strategy {strategy} cannot run on this device ({device}): {reason}")]
    UnsupportedStrategy {
        /// The strategy's name (`ScanStrategy::name` and its twins), or `use_planes`.
        strategy: &'static str,
        /// The device, as [`DeviceCaps::describe`](crate::DeviceCaps::describe) names it.
        device: String,
        /// Why it cannot run.
        reason: &'static str,
    },
    /// A caller's buffer holds fewer bytes than the call reads or writes through it (checked
    /// before anything launches; a bigger buffer is fine).
    #[error(
        "buffer `{name}` is too small: {needed} bytes needed ({elements} {elem} elements), the \
         handle holds {given} bytes"
    )]
    BufferTooSmall {
        /// The argument holding the buffer (`input`, `io.keys_out`, `flags.mask`, ...).
        name: &'static str,
        /// Elements the call reads or writes through it.
        elements: usize,
        /// Their element type (`f32`, `u8`, ...).
        elem: &'static str,
        /// Bytes those elements take.
        needed: u128,
        /// Bytes the handle addresses (its size less its view offsets).
        given: u64,
    },
}

impl SieveError {
    pub(crate) fn invalid(
        name: &'static str,
        value: impl ToString,
        expected: impl ToString,
    ) -> Self {
        SieveError::InvalidArgument {
            name,
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }
}
