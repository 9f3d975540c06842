//! The address type of a launch: 32-bit indices where every index fits, 64-bit where a
//! launch's extent needs them.
//!
//! Every kernel is compiled with `#[cube(launch_unchecked, address_type = "dynamic")]`, so
//! `usize` inside it is the launch's address type: `u32` by default, `u64` when a launch
//! passes [`AddressType::U64`] (a separate compiled kernel, built only when used, so small
//! tensors pay nothing). A 32-bit launch whose indices pass `u32::MAX` would wrap (a row
//! starting at 2^32 reads row 0), and a `usize` scalar past `u32::MAX` cannot be passed to it.
//!
//! The rule, in one place ([`address_type`]): a launch uses 64-bit addresses when any buffer
//! it binds (workspaces included) holds more than [`U32_EXTENT`] elements. The margin below
//! 2^32 covers the indices kernels compute past a buffer's end before their bounds checks
//! (at most one tile or one row cube, never 2^24 elements). Each device op checks its largest
//! buffer with [`check_extent`] before it launches anything, so a device without 64-bit
//! addressing refuses the call instead of wrapping.

use std::cell::Cell;

use cubecl::prelude::*;

use crate::{DeviceCaps, Dtype, SieveError};

pub use cubecl::ir::AddressType;

/// The most elements a buffer of a 32-bit launch may hold: 2^32 - 2^24.
pub const U32_EXTENT: usize = (1usize << 32) - (1 << 24);

thread_local! {
    /// Inside [`with_wide_addressing`]: every launch on this thread takes 64-bit addresses.
    static FORCE_WIDE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with every sieve launch on this thread using 64-bit addresses, however small its
/// buffers: to test the 64-bit kernels on small inputs. On a device without 64-bit
/// addressing every non-empty call inside refuses (see [`check_extent`]). As for
/// [`crate::device::with_limits`], Burn ops under Fusion run when their stream is flushed,
/// so read their results inside the scope.
pub fn with_wide_addressing<R>(f: impl FnOnce() -> R) -> R {
    super::with_thread_value(&FORCE_WIDE, true, f)
}

/// The address type of a launch whose buffers hold `lens` elements (every buffer it binds,
/// in elements, not vectors; workspaces included): 64-bit when any holds more than
/// [`U32_EXTENT`] (or inside [`with_wide_addressing`]), else 32-bit.
pub fn address_type(lens: &[usize]) -> AddressType {
    let extent = lens.iter().copied().max().unwrap_or(0);
    if extent > U32_EXTENT || FORCE_WIDE.with(Cell::get) {
        AddressType::U64
    } else {
        AddressType::U32
    }
}

/// Refuses, before anything launches, a call whose largest buffer (`extent` elements, named
/// `name`) needs 64-bit addresses on a device that has none.
pub fn check_extent(
    client: &Client,
    caps: &DeviceCaps,
    name: &'static str,
    extent: usize,
) -> Result<(), SieveError> {
    if extent == 0
        || address_type(&[extent]) == AddressType::U32
        || client.properties().supports_address(AddressType::U64)
    {
        return Ok(());
    }
    Err(SieveError::invalid(
        name,
        format!("{extent} elements"),
        format!(
            "at most {U32_EXTENT} elements on this device ({}): it has no 64-bit addressing{}",
            caps.describe(),
            if FORCE_WIDE.with(Cell::get) {
                " (forced by with_wide_addressing)"
            } else {
                ""
            }
        ),
    ))
}

/// The index dtypes an index or count output may have: i32, u32 or i64 (`name` is the
/// argument).
pub fn check_index_dtype(name: &'static str, dtype: Dtype) -> Result<(), SieveError> {
    match dtype {
        Dtype::I32 | Dtype::U32 | Dtype::I64 => Ok(()),
        other => Err(SieveError::invalid(name, other, "i32, u32 or i64")),
    }
}

/// A clear error, naming the index dtype to use, when index dtype `dtype` cannot hold
/// `positions` (a row's length: its positions and its survivor count run up to it).
pub fn check_index_capacity(
    name: &'static str,
    dtype: Dtype,
    positions: usize,
) -> Result<(), SieveError> {
    let max = match dtype {
        Dtype::I32 => i32::MAX as u64,
        Dtype::U32 => u32::MAX as u64,
        _ => i64::MAX as u64,
    };
    if positions as u64 <= max {
        return Ok(());
    }
    Err(SieveError::invalid(
        name,
        dtype,
        format!("indices need i64: {positions} positions exceed {dtype} (at most {max})"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_up_to_the_extent_wide_past_it() {
        assert_eq!(address_type(&[]), AddressType::U32);
        assert_eq!(address_type(&[0, 7]), AddressType::U32);
        assert_eq!(address_type(&[U32_EXTENT]), AddressType::U32);
        assert_eq!(address_type(&[3, U32_EXTENT + 1]), AddressType::U64);
        assert_eq!(address_type(&[(1 << 32) - 1]), AddressType::U64);
        assert_eq!(address_type(&[1 << 32]), AddressType::U64);
        assert_eq!(address_type(&[(1 << 32) + 7, 1]), AddressType::U64);
    }

    #[test]
    fn forced_wide_inside_the_scope_only() {
        assert_eq!(
            with_wide_addressing(|| address_type(&[1])),
            AddressType::U64
        );
        let caught = std::panic::catch_unwind(|| with_wide_addressing(|| panic!("inside")));
        assert!(caught.is_err());
        assert_eq!(address_type(&[1]), AddressType::U32);
    }

    #[test]
    fn index_capacity_names_the_dtype_to_use() {
        assert!(check_index_capacity("io.index_dtype", Dtype::I32, i32::MAX as usize).is_ok());
        let err = check_index_capacity("io.index_dtype", Dtype::I32, 5_000_000_000).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("io.index_dtype") && text.contains("i64") && text.contains("i32"));
        assert!(check_index_capacity("io.index_dtype", Dtype::U32, u32::MAX as usize).is_ok());
        assert!(check_index_capacity("io.index_dtype", Dtype::U32, 1 << 32).is_err());
        assert!(check_index_capacity("io.index_dtype", Dtype::I64, 1 << 40).is_ok());
    }
}
