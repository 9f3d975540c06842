//! Stable radix sort of every row of a contiguous `[rows, len]` buffer, ascending or
//! descending, returning the sorted keys and/or the permutation (each output element's
//! position in its input row).
//!
//! # Semantics
//! - Order: integers by value; floats in PyTorch's order, `-inf < ... < -0.0 == +0.0 < ... <
//!   +inf < NaN`, every NaN equal to every other. Descending reverses the order, not the
//!   stability: **equal keys keep their input order in both directions** (NaN first when
//!   descending, as in `torch.sort(descending=True)`).
//! - The sorted keys are the input keys moved, bit for bit (a -0.0 stays -0.0, NaN payloads
//!   stay): the kernels sort order-preserving 32-bit *radix keys* carrying each element's
//!   position, and the output keys are gathered from the input by that position.
//! - Deterministic: every pass is a stable counting sort with integer counts.
//! - Key dtypes: f32, i32, u32 (others are refused with a message naming these).
//!
//! # Strategies
//! - [`SortStrategy::InCube`]: one cube per row, the whole row in shared memory, sorted by a
//!   sequence of one-bit stable splits over all 32 radix bits (each split ranks with a
//!   cube-wide scan). One launch, no device-wide pass: rows up to
//!   [`SortTuning::in_cube_capacity`] keys.
//! - [`SortStrategy::Lsd`]: least-significant-digit radix sort, `radix_bits` per pass. Each
//!   pass: every tile counts its digits (shared-memory counters), the counts of a row, laid out
//!   digit-major (`[digit][tile]`), are scanned by `scan::scan` into each (digit, tile)'s first
//!   output slot, then every tile sorts itself by the digit in shared memory (one-bit splits)
//!   and writes each key to its slot: consecutive keys of a digit land on consecutive slots.
//! - [`SortStrategy::Auto`]: `InCube` when a row fits one cube, else `Lsd`.

mod kernels;
pub(crate) mod keys;
mod launch;
pub mod reference;
mod tile;

pub use launch::sort;

use cubecl::server::Handle;

use crate::Dtype;

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortOrder {
    #[default]
    Ascending,
    Descending,
}

/// Which algorithm sorts (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortStrategy {
    #[default]
    Auto,
    InCube,
    Lsd,
}

impl SortStrategy {
    pub fn name(self) -> &'static str {
        match self {
            SortStrategy::Auto => "auto",
            SortStrategy::InCube => "in_cube",
            SortStrategy::Lsd => "lsd",
        }
    }
}

/// The shape of a sort: `rows` independent rows of `len` contiguous keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortProblem {
    pub rows: usize,
    pub len: usize,
}

/// The buffers of one sort; every one `[rows, len]` elements.
#[derive(Debug, Clone, Copy)]
pub struct SortIo<'a> {
    pub keys: &'a Handle,
    /// f32, i32 or u32.
    pub key_dtype: Dtype,
    /// The sorted keys (the input's dtype).
    pub keys_out: Option<&'a Handle>,
    /// Each output element's position in its input row.
    pub indices_out: Option<&'a Handle>,
    /// i32, u32 or i64.
    pub index_dtype: Dtype,
}

/// Tile shapes and digit width: plain data, chosen from the device, overridable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SortTuning {
    /// Units per cube of the LSD passes (a power of two, at least the plane width).
    pub units_per_cube: u32,
    /// Keys per unit per LSD tile.
    pub elements_per_unit: u32,
    /// Bits per LSD pass (1..=8).
    pub radix_bits: u32,
    /// Use plane operations (the device must have them).
    pub use_planes: bool,
    /// Most units a cube may have (the in-cube sort's limit).
    pub max_units: u32,
    /// Shared memory per cube, bytes.
    pub max_shared_bytes: usize,
}

impl SortTuning {
    /// 256 units x 8 keys (16 KiB of keys and positions per tile), 8-bit digits (4 passes for
    /// 32-bit keys).
    pub fn for_device(caps: &crate::DeviceCaps, shared_bytes: usize) -> Self {
        SortTuning {
            units_per_cube: 256u32.max(caps.plane_size_max),
            elements_per_unit: 8,
            radix_bits: 8,
            use_planes: caps.plane_ops,
            max_units: caps.max_units_per_cube.min(1024),
            max_shared_bytes: shared_bytes,
        }
    }

    /// Keys per LSD tile.
    pub fn tile(&self) -> usize {
        self.units_per_cube as usize * self.elements_per_unit as usize
    }

    /// The longest row [`SortStrategy::InCube`] sorts: the largest power of two of keys
    /// (8 bytes each with their positions) that fits in shared memory beside 4 KiB for the
    /// scan spine, at most 16 per unit.
    pub fn in_cube_capacity(&self) -> usize {
        let fit = self.max_shared_bytes.saturating_sub(4096) / 8;
        if fit == 0 {
            return 0;
        }
        let power = 1usize << (usize::BITS - 1 - fit.leading_zeros());
        power.min(self.max_units as usize * 16)
    }
}

/// Options of one sort call.
#[derive(Debug, Clone, Copy, Default)]
pub struct SortOptions {
    pub strategy: SortStrategy,
    /// `None`: [`SortTuning::for_device`].
    pub tuning: Option<SortTuning>,
}
