//! Stream compaction and its twin, the stable split, over contiguous `[rows, len]` rows:
//! every element gets a 0/1 *flag* (from a bool mask, a comparison of its value with a
//! threshold, one of its bits, or whether it starts a run of equal values); the running count of flags is each survivor's slot in its row's output; the
//! row's total is its count.
//!
//! # Semantics
//! - Output row `r` holds the survivors of input row `r` in input order (stable), starting
//!   at `r * len`; `counts[r]` is how many there are. Indices are positions within the row.
//! - What follows the survivors is [`Rejected`]: nothing (`Drop`: those slots are left as
//!   they were), zeros (`Zero`: values and indices 0, so padded outputs are fully defined),
//!   or the rejected elements themselves in input order (`Keep`: the stable split, whose
//!   indices form a permutation of the row).
//! - Comparisons follow IEEE: a NaN value or threshold satisfies only `NotEqual`.
//!   `BitClear` flags integers whose given bit is 0 (the one-bit split keeps them first).
//!   A mask element is true when it is not zero. `RunStart` flags each row's first element
//!   and every element unequal to the one before it in sieve's order (NaNs equal to each
//!   other, -0.0 equal to +0.0): over sorted rows, one element per distinct value (`unique`).
//! - Deterministic: every strategy writes the same bits on every run.
//! - Rows longer than `u32::MAX` elements (one flattened tensor past 4 G elements) run
//!   through `Scatter` with 64-bit addresses and tile offsets; the other strategies refuse
//!   them (their running counts are 32-bit).
//! - `rows == 0` or `len == 0` launches nothing (counts of an empty row are written as 0 when `len == 0`).
//!
//! # Strategies (one engine)
//! Every strategy ranks a tile's flags with the same register scan as [`crate::scan`]
//! (`scan_registers`); they differ in how a tile learns its row offset and how survivors
//! reach their slots.
//! - [`CompactStrategy::Scatter`]: portable. Pass 1 counts each tile's survivors, the counts
//!   are scanned, pass 3 ranks each tile again and each survivor writes itself to its slot.
//!   Serves every [`Rejected`] mode (the split needs the row total before it writes).
//! - [`CompactStrategy::ScatterLookback`]: one pass over the input: tiles find their offset
//!   by decoupled look-back ([`crate::common::lookback`]). Needs forward progress between
//!   cubes (CUDA, HIP) and 64-bit atomics; `Drop` and `Zero` only (`Zero` adds a pass that
//!   writes the padding and reads nothing else).
//! - [`CompactStrategy::Gather`]: "turn the scatter around": the running count of flags is
//!   materialised (a device-wide scan), then each output slot finds its source by binary
//!   search for the first element whose running count exceeds the slot. Every output slot is
//!   written by exactly one unit, in slot order. Serves every [`Rejected`] mode.
//! - [`CompactStrategy::Auto`]: `Scatter` on every runtime: on an H200 it beat the look-back
//!   (whose tiles wait on each other while holding values, flags and ranks in registers) and
//!   the gather through both CUDA and Vulkan (`docs/PERFORMANCE.md`).

mod flags;
mod kernels;
mod launch;
pub mod reference;
mod tile;

pub use launch::{
    compact, count_survivors, counted_tiles, counted_workspace, counted_workspace_with_words,
    write_survivors,
};

use cubecl::server::Handle;

use crate::Dtype;
use crate::scan::ScanTuning;

/// How an element's flag is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlagRule {
    /// The mask element is not zero.
    Mask,
    /// `value > threshold`.
    Greater,
    /// `value >= threshold`.
    GreaterEqual,
    /// `value < threshold`.
    Less,
    /// `value <= threshold`.
    LessEqual,
    /// `value == threshold`.
    Equal,
    /// `value != threshold` (true for NaN).
    NotEqual,
    /// Bit `bit` of the (integer) value's two's-complement pattern is 0: the one-bit split's
    /// flag, zeros first. Set through [`Flags::BitClear`].
    BitClear,
    /// The element is its row's first or differs from the one before it (NaNs equal, -0.0
    /// equal to +0.0). Set through [`Flags::RunStarts`].
    RunStart,
}

/// Storage of a bool mask: one byte per element (Burn's `Bool(U8)` and native bools), or one
/// 32-bit word (Burn's `Bool(U32)`, used on wgpu devices without 8-bit buffers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaskStorage {
    /// One byte per element (the device needs 8-bit buffers).
    U8,
    /// One 32-bit word per element.
    U32,
}

/// Where the flags come from.
#[derive(Debug, Clone, Copy)]
pub enum Flags<'a> {
    /// A `[rows, len]` mask buffer.
    Mask {
        /// The mask: an element is true when it is not zero.
        mask: &'a Handle,
        /// How the mask's elements are stored.
        storage: MaskStorage,
    },
    /// A comparison of each input value with `threshold`: rounded to the value dtype for
    /// floats; exact for integers (any f64: `2.5`, `300.0` for u8 values and NaN compare as
    /// numbers would). `rule` must not be [`FlagRule::Mask`].
    Compare {
        /// The comparison: any rule but `Mask` and `BitClear`.
        rule: FlagRule,
        /// The right-hand side of the comparison.
        threshold: f64,
    },
    /// Bit `bit` of each input value is 0 (integer dtypes only; `bit` below their width).
    BitClear {
        /// The bit tested, 0 the least significant.
        bit: u32,
    },
    /// Each row's first element and every element that differs from the one before it
    /// (sieve's order: NaNs equal to each other, -0.0 equal to +0.0): the first of each run
    /// of equal values. Over a sorted row, its distinct values.
    RunStarts,
}

/// What is written after a row's survivors (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rejected {
    /// Nothing: the slots after the count keep what they held.
    Drop,
    /// Zeros: values and indices 0 up to the end of the row.
    Zero,
    /// The rejected elements themselves, in input order: the stable split.
    Keep,
}

/// Which algorithm runs the compaction (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CompactStrategy {
    /// `Scatter`, on every runtime.
    #[default]
    Auto,
    /// Count, scan the counts, rank again and scatter: every [`Rejected`] mode, any row length.
    Scatter,
    /// One pass with a decoupled look-back: `Drop` and `Zero` only, rows up to `u32::MAX`,
    /// 64-bit atomics needed, and forward progress between cubes (not checked: forced on a
    /// runtime without it, it may hang).
    ScatterLookback,
    /// Each output slot binary-searches the running count for its source: every
    /// [`Rejected`] mode, rows up to `u32::MAX`.
    Gather,
}

impl CompactStrategy {
    /// Every strategy, `Auto` first.
    pub const ALL: [CompactStrategy; 4] = [
        CompactStrategy::Auto,
        CompactStrategy::Scatter,
        CompactStrategy::ScatterLookback,
        CompactStrategy::Gather,
    ];

    /// The strategy's snake_case name, for messages and bench rows.
    pub fn name(self) -> &'static str {
        match self {
            CompactStrategy::Auto => "auto",
            CompactStrategy::Scatter => "scatter",
            CompactStrategy::ScatterLookback => "scatter_lookback",
            CompactStrategy::Gather => "gather",
        }
    }
}

/// The shape of a compaction: `rows` independent rows of `len` contiguous elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactProblem {
    /// Independent rows of the problem, each compacted on its own.
    pub rows: usize,
    /// Elements per row; past `u32::MAX` only through `Scatter`, with i64 indices.
    pub len: usize,
}

/// The buffers of one compaction. Every buffer is `[rows, len]` elements, except `counts`
/// (`rows` elements).
#[derive(Debug, Clone, Copy)]
pub struct CompactIo<'a> {
    /// Input values: needed when `values_out` is given or the flags read them (a comparison,
    /// `BitClear`).
    pub values: Option<&'a Handle>,
    /// The dtype of `values` and `values_out`: any [`Dtype`] the device has
    /// ([`crate::DeviceCaps::check_dtype`]; integers only for `BitClear`). Checked even when
    /// no values are read or written: pass one the device has (any) then.
    pub value_dtype: Dtype,
    /// Survivors' values.
    pub values_out: Option<&'a Handle>,
    /// Survivors' positions within their row.
    pub indices_out: Option<&'a Handle>,
    /// Each row's survivor count.
    pub counts: &'a Handle,
    /// The dtype of `indices_out` and `counts`: `I32`, `U32` or `I64`.
    pub index_dtype: Dtype,
}

/// The buffers of a counted compaction of one row, shared by its two steps
/// ([`count_survivors`], then [`write_survivors`] into outputs of exactly the count): both
/// steps must be given the same `io`, as the tiles are chosen from it.
#[derive(Debug, Clone, Copy)]
pub struct CountedIo<'a> {
    /// Input values, as [`CompactIo::values`].
    pub values: Option<&'a Handle>,
    /// The dtype of `values` and of the values written.
    pub value_dtype: Dtype,
    /// Step two writes the survivors' values.
    pub write_values: bool,
    /// Step two writes the survivors' positions.
    pub write_indices: bool,
    /// The dtype of the count, the positions and the workspace: `I32`, `U32` or `I64`.
    pub index_dtype: Dtype,
    /// Every tile's offset, written by step one and read by step two: [`counted_tiles`]
    /// elements of `index_dtype` at least ([`counted_workspace`] is enough at default tiles).
    pub workspace: &'a Handle,
}

/// Options of one compaction call.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompactOptions {
    /// Which algorithm runs; a forced one this device or `Rejected` mode cannot run is
    /// refused.
    pub strategy: CompactStrategy,
    /// Tile shape of the scatter strategies; `None`: [`ScanTuning::for_device`].
    pub tuning: Option<ScanTuning>,
    /// The scatter strategies load a tile's values vectors again after ranking the tile, and
    /// only those holding a survivor (every one where rejected elements are kept), instead of
    /// holding every vector in registers through the rank's barriers: fewer registers a unit
    /// there, for a second load of the vectors written. Off by default: on an H100 it made
    /// the raw scatter of mask_select 2^28 3% faster at density 0.01 and 11% slower at 0.5
    /// (bench key `reread=1`).
    pub reread_values: bool,
    /// Whether the count pass hands each unit's flags to the scatter as one word
    /// ([`FlagWords`]).
    pub flag_words: FlagWords,
    /// The scatter ranks a tile with one plane scan for each of a unit's vectors, instead of
    /// packing several vectors' flag counts into one word a plane scan (`scan_flag_registers`,
    /// the default wherever planes run: on an H100 argwhere 2^28's raw scatter 8-17% faster
    /// through CUDA and 13.5% through Vulkan, `unique`'s run starts 8%; PERFORMANCE.md's
    /// forty-ninth session). Bench key `prank=0`.
    pub unpacked_ranks: bool,
    /// A counted compaction's scatter that has flag words ranks from them alone where at most
    /// one element in this many survives; `None`: [`WORD_RANK_SPARSITY`] (run starts:
    /// [`RUN_START_WORD_RANK_SPARSITY`]). `Some(1)` takes the word rank at every density
    /// (where the words are there); 0 is refused. Bench key `wsparse=`.
    pub word_rank_sparsity: Option<usize>,
}

/// Whether a scatter's count pass leaves each unit's flags as the bits of one word, for the
/// scatter to read instead of loading the values (or the mask) and computing the flags
/// again; the scatter then loads only the values vectors it writes. Needs a unit's elements
/// to fit 32 bits (they do at the default tiles); elsewhere the flags are computed again.
/// The single look-back pass computes its flags either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FlagWords {
    /// A counted compaction of run starts ([`Flags::RunStarts`], `unique`'s) with at most one
    /// survivor in [`RUN_START_WORDS_SPARSITY`] elements, where they were measured to win
    /// (an H100, CUDA: `unique` 2^28's run starts at 1 in 256 1.12 -> 0.93 ms, `48-ab`; at
    /// 2^27, 1 in 64 8% faster, 1 in 8 2%, `48-fin`). The count pass writes the words for
    /// every counted run-start compaction, as the density is known only after it (10% on that
    /// pass, 202 -> 223 us at 2^27, `48-ab`'s Nsight). Where the scatter's survivors are sparse
    /// ([`RUN_START_WORD_RANK_SPARSITY`]) it ranks from the words alone. Masks take none:
    /// their full rank from the words lost 26-33% (`48-ab`), and with the word rank for sparse
    /// masks (raw counted 11-27% faster at 1 in 100 and sparser, `52-sw`) their Burn ops read
    /// 5-18% slower at 2^28 than main's in earlier calls (`52-sw`, not an A/B;
    /// `bench/counted_words/`).
    #[default]
    Auto,
    /// Wherever a unit's elements fit a word (a counted compaction's workspace must have
    /// room: [`counted_workspace_with_words`]).
    On,
    /// Never: the scatter computes its flags again.
    Off,
}

/// A counted compaction's scatter of a mask or a comparison that has flag words ranks from
/// them alone (a popcount a vector, vectors without survivors neither loaded nor walked) where
/// at most one element in this many survives. On an H100 (CUDA, `bench/results/h100/52-sw`,
/// the raw counted compaction of 2^28 elements against the full rank from the mask) the word
/// rank of mask_select wins down to about 1 in 10 (1 in 100: 0.675 -> 0.544 ms; 1 in 10: 0.710
/// -> 0.698), of argwhere (whose full rank loads no values) between 1 in 100 (0.445 -> 0.394)
/// and 1 in 50 (0.433 -> 0.450, lost): 64 takes both gains at 1 in 100, with room for a random
/// mask's spread about it.
pub const WORD_RANK_SPARSITY: usize = 64;

/// [`WORD_RANK_SPARSITY`] for run starts, whose other way is the full rank from the words: at
/// 1 in 256 the word rank took 0.667 ms against 0.863 (`unique` 2^28, `h100/50-w`); denser run
/// starts were not measured.
pub const RUN_START_WORD_RANK_SPARSITY: usize = 100;

/// [`FlagWords::Auto`] takes the words for run starts with at most one survivor in this many
/// elements (the densest measured, `48-fin`).
pub const RUN_START_WORDS_SPARSITY: usize = 8;
