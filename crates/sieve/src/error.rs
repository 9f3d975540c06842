//! One error type for every sieve entry point. Each variant names the argument, the value
//! it had and what would have been valid, so a caller can fix the call without reading code.

use crate::Dtype;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SieveError {
    /// An argument is outside its valid range.
    #[error("invalid argument `{name}` = {value}: expected {expected}")]
    InvalidArgument {
        name: &'static str,
        value: String,
        expected: String,
    },
    /// The device cannot run this dtype (e.g. no 64-bit integers or no f16 arithmetic).
    #[error("dtype {dtype} is not supported on this device ({device}): {reason}")]
    UnsupportedDtype {
        dtype: Dtype,
        device: String,
        reason: &'static str,
    },
    /// A forced strategy needs a device feature this device lacks.
    #[error("strategy {strategy} cannot run on this device ({device}): {reason}")]
    UnsupportedStrategy {
        strategy: &'static str,
        device: String,
        reason: &'static str,
    },
    /// A caller's buffer holds fewer bytes than the call reads or writes through it (checked
    /// before anything launches; a bigger buffer is fine).
    #[error(
        "buffer `{name}` is too small: {needed} bytes needed ({elements} {elem} elements), the \
         handle holds {given} bytes"
    )]
    BufferTooSmall {
        name: &'static str,
        elements: usize,
        elem: &'static str,
        needed: u128,
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
