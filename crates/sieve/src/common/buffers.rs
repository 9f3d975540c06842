//! The raw entry points are safe functions that launch on caller handles, so each checks,
//! after its other arguments and before anything launches, that every handle can be bound
//! and holds the bytes the problem reads or writes through it. A bigger buffer is fine; a
//! smaller one is a [`SieveError::BufferTooSmall`] naming the argument.

use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::{Dtype, SieveError};

/// What every caller buffer of one call is checked against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BufferRules {
    /// The device's binding alignment in bytes: a view must start at a multiple of it (wgpu
    /// refuses the binding otherwise and poisons the device; Burn makes views only there).
    alignment: u64,
}

impl BufferRules {
    pub(crate) fn of(client: &Client) -> Self {
        BufferRules {
            alignment: client.properties().memory.alignment.max(1),
        }
    }

    /// Refuses `handle` (argument `name`) unless it starts on the binding alignment and
    /// holds `elements` elements of `elem_bytes` bytes each (`elem` names their type).
    pub(crate) fn check(
        &self,
        name: &'static str,
        handle: &Handle,
        elements: usize,
        elem: &'static str,
        elem_bytes: usize,
    ) -> Result<(), SieveError> {
        let offset = handle.offset_start.unwrap_or(0);
        if !offset.is_multiple_of(self.alignment) {
            return Err(SieveError::invalid(
                name,
                format!("a view starting at byte {offset}"),
                format!(
                    "a buffer starting at a multiple of {} bytes (the device's binding alignment)",
                    self.alignment
                ),
            ));
        }
        // u128: `elements` is a product of caller sizes whose bytes may not fit u64.
        let needed = elements as u128 * elem_bytes as u128;
        let given = handle_bytes(handle);
        if needed <= given as u128 {
            return Ok(());
        }
        Err(SieveError::BufferTooSmall {
            name,
            elements,
            elem,
            needed,
            given,
        })
    }

    /// [`BufferRules::check`] for a buffer of `dtype` elements.
    pub(crate) fn check_dtype(
        &self,
        name: &'static str,
        handle: &Handle,
        elements: usize,
        dtype: Dtype,
    ) -> Result<(), SieveError> {
        self.check(name, handle, elements, dtype.name(), dtype.size_bytes())
    }

    /// [`BufferRules::check_dtype`] for an optional buffer (an output the caller may not ask
    /// for).
    pub(crate) fn check_optional(
        &self,
        name: &'static str,
        handle: Option<&Handle>,
        elements: usize,
        dtype: Dtype,
    ) -> Result<(), SieveError> {
        match handle {
            Some(handle) => self.check_dtype(name, handle, elements, dtype),
            None => Ok(()),
        }
    }
}

/// `handle` as a kernel argument of `len` elements (one at least: a binding is never empty).
/// The launch that takes it keeps every access within `len` (the `SAFETY` note at each
/// `launch_unchecked` says why).
pub(crate) fn bind(handle: &Handle, len: usize) -> BufferArg {
    // SAFETY: the length is the caller's bound on the launch's accesses (see above).
    unsafe { BufferArg::from_raw_parts(handle.clone(), len.max(1)) }
}

/// A placeholder argument for a buffer the kernel never touches (its comptime flag is off).
pub(crate) fn placeholder(client: &Client) -> BufferArg {
    // SAFETY: never accessed.
    unsafe { BufferArg::from_raw_parts(client.empty(64), 8) }
}

/// `handle` bound as [`bind`] does, or a [`placeholder`] where the caller asked for no such
/// output.
pub(crate) fn bind_optional(client: &Client, handle: Option<&Handle>, len: usize) -> BufferArg {
    match handle {
        Some(handle) => bind(handle, len),
        None => placeholder(client),
    }
}

/// The bytes `handle` addresses: its size less its start and end offsets (a Burn view's
/// handle starts inside a larger buffer).
pub(crate) fn handle_bytes(handle: &Handle) -> u64 {
    handle
        .size()
        .saturating_sub(handle.offset_start.unwrap_or(0))
        .saturating_sub(handle.offset_end.unwrap_or(0))
}
