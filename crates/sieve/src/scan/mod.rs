//! Row-wise prefix sums: `output[r, i] = sum(input[r, 0..=i])` (inclusive) or
//! `sum(input[r, 0..i])` (exclusive), over a contiguous `[rows, len]` buffer; and the same
//! engine with another associative operator ([`scan_op`], [`ScanOp`]): running products,
//! minima and maxima (`cumprod`, `cummin`, `cummax`).
//!
//! # Semantics
//! - Every [`crate::Dtype`] the device has ([`crate::DeviceCaps::check_dtype`]); values are
//!   carried in [`crate::Dtype::accumulator`] and stored back in their own dtype.
//! - Integers wrap on overflow (two's complement) in their own width, as PyTorch's cumsum
//!   and cumprod do (8- and 16-bit ones accumulate in 32 bits and are truncated at the store:
//!   the same bits); integer minima and maxima are exact.
//! - Products: f32 multiplies in f32, rounding every product (IEEE: `0 * inf` is NaN, a NaN
//!   stays NaN), f64 in f64; f16 and bf16 in f32, rounded once per output. The association
//!   order is the sum's, so a float product equals the sequential one wherever every partial
//!   product is exact.
//! - Minima and maxima, PyTorch's `cummin`/`cummax` rule: once a row meets a NaN, every
//!   later output is a NaN (the latest NaN met, bit for bit); of equal values the later is
//!   kept, so -0.0 and +0.0 come out as the latest of them (`cummin([+0.0, -0.0])` is
//!   `[+0.0, -0.0]`, `cummin([-0.0, +0.0])` is `[-0.0, +0.0]`). Outputs are input values,
//!   moved bit for bit (f16 and bf16 through the f32 accumulator and back, exact, but a
//!   runtime's conversion may canonicalise a NaN's payload).
//! - Exclusive scans of every operator put its identity first: 0, 1, +inf (the largest
//!   integer) for minima, -inf (the smallest integer) for maxima. PyTorch has only inclusive
//!   `cumprod`/`cummin`/`cummax`; the exclusive forms cost nothing extra here.
//! - Floats: f32 sums in f32, f64 in f64; f16 and bf16 sum in f32 and round once per output
//!   element.
//!   The association order is fixed by the strategy and the device's plane width, not by
//!   timing, so **the same input gives the same bits on every run** (both strategies,
//!   including the look-back: it folds predecessors' float sums in a fixed order, and
//!   integers, minima and maxima give the same bits in any grouping). The two
//!   strategies may differ from each other in the last bits of float results.
//! - Exclusive output `i + 1` equals inclusive output `i` bit for bit for integers, minima and
//!   maxima; for float sums and products within a plane's run of a tile (where a run or a
//!   tile starts, the two are separate roundings of the same terms).
//! - `rows == 0` or `len == 0` launches nothing.
//!
//! # Strategies
//! - [`ScanStrategy::ReduceThenScan`]: portable. Pass 1 sums each tile, the tile sums are
//!   scanned (the same routine, recursively), pass 3 scans each tile plus its offset. Reads
//!   the input twice (12 bytes moved per 4-byte element). No cube waits on another.
//! - [`ScanStrategy::DecoupledLookback`]: one pass (8 bytes per element), but a cube spins on
//!   its predecessors, so it needs forward progress between cubes: CUDA and HIP only, unless
//!   forced. Needs 64-bit atomic loads and stores; 32-bit accumulators (not i64, u64 or f64:
//!   a status word packs a 32-bit flag with the value).
//! - [`ScanStrategy::Auto`]: the look-back where it is safe and possible, else
//!   reduce-then-scan (always for 64-bit accumulators).

mod kernels;
pub(crate) mod launch;
pub mod reference;
pub(crate) mod tile;
mod tuning;

pub use crate::common::fold::ScanOp;
pub use launch::{scan, scan_columns, scan_op};
pub use tile::TileBlueprint;
pub use tuning::ScanTuning;

/// Inclusive or exclusive prefix sum (or product, minimum, maximum: [`ScanOp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// Element `i` folds elements `0..=i` of its row.
    Inclusive,
    /// Element `i` folds elements `0..i` of its row (the operator's identity first).
    Exclusive,
}

/// Which algorithm runs the scan (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ScanStrategy {
    /// `DecoupledLookback` where cubes are promised forward progress and it can run, else
    /// `ReduceThenScan`.
    #[default]
    Auto,
    /// Portable: tile sums, their scan, then each tile scanned with its offset.
    ReduceThenScan,
    /// One pass: each tile finds its offset by looking back at its predecessors' sums.
    DecoupledLookback,
}

impl ScanStrategy {
    /// The strategy's snake_case name, for messages and bench rows.
    pub fn name(self) -> &'static str {
        match self {
            ScanStrategy::Auto => "auto",
            ScanStrategy::ReduceThenScan => "reduce_then_scan",
            ScanStrategy::DecoupledLookback => "decoupled_lookback",
        }
    }
}

/// Options of one scan call.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScanOptions {
    /// Which algorithm runs; a forced one the device cannot run is refused.
    pub strategy: ScanStrategy,
    /// `None`: [`ScanTuning::for_device`].
    pub tuning: Option<ScanTuning>,
}

/// A scan along the middle axis of a contiguous `[outer, len, inner]` buffer (a tensor's
/// `dim` with `outer` the product of the dims before it and `inner` of those after): every
/// one of the `outer * inner` columns is scanned along its `len` elements, `inner` apart,
/// into the same layout (see [`scan_columns`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnProblem {
    /// Slabs: the product of the dims before the scanned one.
    pub outer: usize,
    /// Elements of each column: the scanned dim's size.
    pub len: usize,
    /// Columns of a slab: the product of the dims after the scanned one.
    pub inner: usize,
}

impl ColumnProblem {
    /// Every element of the buffer.
    pub fn elements(&self) -> usize {
        self.outer
            .saturating_mul(self.len)
            .saturating_mul(self.inner)
    }

    /// Columns scanned (one unit each, or one per vector of them).
    pub fn columns(&self) -> usize {
        self.outer.saturating_mul(self.inner)
    }

    /// Whether [`scan_columns`] is the way to scan this problem on `caps`' device: its columns
    /// give every multiprocessor at least four planes of units (one unit a column, each
    /// walking its column's `len` elements). With fewer, transposing the scanned dim last and
    /// scanning rows ([`scan_op`]) keeps more of the device busy.
    pub fn prefers_columns(&self, caps: &crate::DeviceCaps) -> bool {
        let planes = 4 * caps.multiprocessors.unwrap_or(64) as usize;
        self.inner > 1 && self.columns() >= planes * caps.plane_size_max.max(1) as usize
    }
}

/// The shape of a scan problem: `rows` independent rows of `len` contiguous elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanProblem {
    /// Independent rows of the problem.
    pub rows: usize,
    /// Elements per row.
    pub len: usize,
}
