//! Host side of the compaction: validation, strategy choice, workspaces and the passes.

use cubecl::ir::{ElemType, UIntKind};
use cubecl::prelude::*;
use cubecl::server::Handle;

use super::kernels::{
    count_tiles_kernel, gather_kernel, scatter_lookback_kernel, scatter_tiles_kernel,
    write_flags_kernel, zero_tail_kernel,
};
use super::tile::CompactConfig;
use super::{
    CompactIo, CompactOptions, CompactProblem, CompactStrategy, CountedIo, FlagRule, FlagWords,
    Flags, MaskStorage, RUN_START_WORD_RANK_SPARSITY, RUN_START_WORDS_SPARSITY, Rejected,
    WORD_RANK_SPARSITY,
};
use crate::common::address::{
    AddressType, address_type, check_extent, check_index_capacity, check_index_dtype,
};
use crate::common::buffers::{BufferRules, bind, bind_optional, handle_bytes, placeholder};
use crate::common::fill::fill_zero;
use crate::common::grid::cube_count_1d;
use crate::common::lookback::Workspace;
use crate::radix::keys::KeyKind;
use crate::scan::launch::{check_tuning, scan_counts_with, scan_with, vector_size_for};
use crate::scan::tile::flag_field_bits;
use crate::scan::{ScanKind, ScanOptions, ScanProblem, ScanTuning};
use crate::{DeviceCaps, Dtype, SieveError};

/// Compacts (or splits) every row of a `[rows, len]` problem; see the module docs for the
/// exact semantics. Returns the strategy that ran.
///
/// Errors before anything launches: a missing or contradictory buffer, an index dtype that
/// cannot hold a row position, a dtype the device lacks, a forced strategy the device (or
/// the `rejected` mode) cannot run, a tuning that does not fit the device, or (checked
/// last) a buffer smaller than the problem or a view off the device's binding alignment.
pub fn compact(
    client: &Client,
    flags: Flags<'_>,
    io: CompactIo<'_>,
    problem: CompactProblem,
    rejected: Rejected,
    options: CompactOptions,
) -> Result<CompactStrategy, SieveError> {
    let caps = DeviceCaps::of(client);
    validate(&caps, &flags, &io, problem)?;
    check_options(&options)?;
    let strategy = resolve_strategy(&caps, rejected, options.strategy, problem)?;
    let lookback = strategy == CompactStrategy::ScatterLookback;
    let tuning = options
        .tuning
        .unwrap_or_else(|| compact_tuning(&caps, lookback, &flags, &io));
    check_tuning(&caps, &tuning)?;
    check_extent(
        client,
        &caps,
        "problem.rows * problem.len",
        problem.rows * problem.len,
    )?;
    check_buffers(client, &flags, &io, problem, problem.rows * problem.len)?;
    if problem.rows == 0 {
        return Ok(strategy);
    }
    if problem.len == 0 {
        // Nothing survives an empty row; its count is still written.
        fill_zero(client, io.counts, problem.rows, io.index_dtype.elem_type());
        return Ok(strategy);
    }
    let run = Run::new(client, &caps, flags, io, problem, tuning, options);
    match strategy {
        CompactStrategy::Scatter => run.scatter(rejected)?,
        CompactStrategy::ScatterLookback => {
            run.scatter_lookback();
            if rejected == Rejected::Zero {
                run.zero_tail();
            }
        }
        CompactStrategy::Gather => run.gather(rejected)?,
        CompactStrategy::Auto => unreachable!("resolve_strategy never returns Auto"),
    }
    Ok(strategy)
}

/// The workspace a counted compaction of a row of `len` elements takes on any device at its
/// default tiles ([`count_survivors`]), in elements of the index dtype: a tile offset per
/// tile. A bound that needs no device, so a caller that must declare the workspace before it
/// has one (Burn's Fusion) can size it; [`counted_tiles`] is the exact need of one call. The
/// count pass's flag words need [`counted_workspace_with_words`] (without that room the
/// scatter computes its flags again).
pub fn counted_workspace(len: usize) -> usize {
    // Default tiles hold at least 16 elements a unit and 16 units (any device has 64).
    len.div_ceil(COUNTED_MIN_TILE).max(1)
}

/// [`counted_workspace`] with room for the count pass's flag words after the tile offsets
/// ([`crate::compact::FlagWords`]): what a counted compaction of run starts takes, where
/// `FlagWords::Auto` may read them (or any compaction with `FlagWords::On`).
pub fn counted_workspace_with_words(len: usize) -> usize {
    // From the next binding alignment (at most `COUNTED_WORDS_ALIGNMENT` bytes on) after the
    // offsets, a flag word per unit of every tile.
    let words = len.div_ceil(COUNTED_MIN_UNIT_ELEMENTS) + COUNTED_MAX_UNITS;
    counted_workspace(len) + words + COUNTED_WORDS_ALIGNMENT / 4
}

/// The fewest elements a unit of a default tile takes ([`counted_workspace_with_words`]).
const COUNTED_MIN_UNIT_ELEMENTS: usize = 16;

/// The most units a cube of a default tile has ([`counted_workspace_with_words`]' partial
/// last tile).
const COUNTED_MAX_UNITS: usize = 1024;

/// The binding alignment [`counted_workspace_with_words`] leaves room for (bytes).
const COUNTED_WORDS_ALIGNMENT: usize = 1024;

/// The smallest tile (in elements) [`counted_workspace`] allows for.
const COUNTED_MIN_TILE: usize = 256;

/// The tiles a counted compaction of `io` over a row of `len` elements cuts it into: the
/// workspace elements [`count_survivors`] and [`write_survivors`] need.
///
/// Errors as [`count_survivors`] would on its arguments (the workspace is not checked).
pub fn counted_tiles(
    client: &Client,
    flags: Flags<'_>,
    io: CountedIo<'_>,
    len: usize,
    options: CompactOptions,
) -> Result<usize, SieveError> {
    let caps = DeviceCaps::of(client);
    let scratch = client.empty(64);
    let run = counted_run(client, &caps, flags, &io, len, options, &scratch)?;
    Ok(run.layout(run.tuning.max_vector_size).total_tiles)
}

/// Step one of a compaction of one row into outputs of exactly its survivors: the survivor
/// count of the row of `len` elements (written to `count`, one element of `io.index_dtype`)
/// and each tile's offset (to `io.workspace`, for [`write_survivors`]). The caller reads the
/// count, allocates outputs of that many elements and calls [`write_survivors`] with the same
/// `flags`, `io`, `len` and options. Launches two kernels (the count, and its scan, which also
/// writes the total; the count alone where the row is one tile) and never waits; nothing is
/// written past the workspace's [`counted_tiles`] elements.
///
/// The same flags and `Drop` semantics as [`compact`] (`rows = 1`), through the `Scatter`
/// strategy (`Auto` is it; a forced other one is refused).
///
/// Errors before anything launches: as [`compact`] does, or a workspace smaller than
/// [`counted_tiles`] elements of `io.index_dtype`.
pub fn count_survivors(
    client: &Client,
    flags: Flags<'_>,
    io: CountedIo<'_>,
    len: usize,
    count: &Handle,
    options: CompactOptions,
) -> Result<(), SieveError> {
    let caps = DeviceCaps::of(client);
    let run = counted_run(client, &caps, flags, &io, len, options, count)?;
    if len == 0 {
        fill_zero(client, count, 1, io.index_dtype.elem_type());
        return Ok(());
    }
    run.check_workspace(&io)?;
    run.count_survivors(io.workspace)
}

/// Step two of [`count_survivors`]: writes the row's `total` survivors (the count step one
/// wrote) to `values_out` and `indices_out` (as `io.write_values` and `io.write_indices` ask),
/// which hold at least `total` elements, reading the tile offsets step one left in
/// `io.workspace`. One kernel; nothing launches when `total` is 0. A `total` other than step
/// one's count writes no slot past `total` (the survivors it cannot place are dropped).
///
/// Errors before anything launches: as [`count_survivors`], an output missing (or given where
/// `io` asks for none), or one smaller than `total`.
#[allow(clippy::too_many_arguments)]
pub fn write_survivors(
    client: &Client,
    flags: Flags<'_>,
    io: CountedIo<'_>,
    len: usize,
    total: usize,
    values_out: Option<&Handle>,
    indices_out: Option<&Handle>,
    options: CompactOptions,
) -> Result<(), SieveError> {
    for (name, given, asked) in [
        ("values_out", values_out.is_some(), io.write_values),
        ("indices_out", indices_out.is_some(), io.write_indices),
    ] {
        if given != asked {
            return Err(SieveError::invalid(
                name,
                if given { "Some" } else { "None" },
                format!(
                    "{} (io.write_{} says so; the two steps must agree)",
                    if asked { "Some" } else { "None" },
                    &name[..name.len() - 4]
                ),
            ));
        }
    }
    if total > len {
        return Err(SieveError::invalid(
            "total",
            total,
            format!("0..={len} (survivors of a row of len elements)"),
        ));
    }
    let caps = DeviceCaps::of(client);
    let scratch = client.empty(64);
    let mut run = counted_run(client, &caps, flags, &io, len, options, &scratch)?;
    run.io.values_out = values_out;
    run.io.indices_out = indices_out;
    check_buffers(client, &flags, &run.io, problem_of(len), total)?;
    if len == 0 || total == 0 {
        return Ok(());
    }
    run.check_workspace(&io)?;
    run.out_len = total;
    run.write_survivors(io.workspace);
    Ok(())
}

fn problem_of(len: usize) -> CompactProblem {
    CompactProblem { rows: 1, len }
}

/// The checks both steps of a counted compaction make (as [`compact`]'s), and the run they
/// share (its [`CompactIo`], tuning and options): `count` stands in for the outputs too (only
/// their presence picks the tiles; step two puts its own in).
#[allow(clippy::too_many_arguments)]
fn counted_run<'a>(
    client: &'a Client,
    caps: &'a DeviceCaps,
    flags: Flags<'a>,
    io: &CountedIo<'a>,
    len: usize,
    options: CompactOptions,
    count: &'a Handle,
) -> Result<Run<'a>, SieveError> {
    let compact_io = CompactIo {
        values: io.values,
        value_dtype: io.value_dtype,
        values_out: io.write_values.then_some(count),
        indices_out: io.write_indices.then_some(count),
        counts: count,
        index_dtype: io.index_dtype,
    };
    let problem = problem_of(len);
    validate(caps, &flags, &compact_io, problem)?;
    check_options(&options)?;
    if !matches!(
        options.strategy,
        CompactStrategy::Auto | CompactStrategy::Scatter
    ) {
        return Err(SieveError::UnsupportedStrategy {
            strategy: options.strategy.name(),
            device: caps.describe(),
            reason: "a counted compaction runs the scatter (its tile offsets are the workspace)",
        });
    }
    let tuning = options
        .tuning
        .unwrap_or_else(|| compact_tuning(caps, false, &flags, &compact_io));
    check_tuning(caps, &tuning)?;
    check_extent(client, caps, "len", len)?;
    check_buffers(client, &flags, &compact_io, problem, 0)?;
    BufferRules::of(client).check_dtype("count", count, 1, io.index_dtype)?;
    Ok(Run::new(
        client, caps, flags, compact_io, problem, tuning, options,
    ))
}

/// The comparison the kernels run for `value <rule> threshold` on values of `dtype`, with the
/// threshold as a scalar of `dtype`. Floats take the threshold rounded to the dtype (as
/// documented on [`Flags::Compare`]). Integers compare exactly with the f64 threshold, NaN,
/// fractions and thresholds outside the dtype's range included: the rule is rewritten as
/// `value >= b` or `value <= b` with an integer `b` (`x > t` is `x >= floor(t) + 1`,
/// `x < t` is `x <= ceil(t) - 1`), and a comparison that holds for every value of the dtype
/// or for none becomes `value >= MIN` or `value < MIN`. (Converting the threshold to the
/// dtype instead would refuse 300 for u8 values and make `x < 2.5` false for 2.)
fn comparison(rule: FlagRule, threshold: f64, dtype: Dtype) -> (FlagRule, InputScalar) {
    let elem = dtype.elem_type();
    if dtype.is_float() {
        return (rule, InputScalar::new(threshold, elem));
    }
    let bits = 8 * dtype.size_bytes() as u32;
    let (min, max) = if dtype.is_signed_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    let always = (FlagRule::GreaterEqual, min);
    let never = (FlagRule::Less, min);
    // Integral f64 values below 2^127 are exact in i128 (`as` saturates beyond them, and
    // NaN becomes 0: handled first below).
    let integral = threshold.fract() == 0.0 && (min..=max).contains(&(threshold as i128));
    let (rule, bound) = if threshold.is_nan() {
        if rule == FlagRule::NotEqual {
            always
        } else {
            never
        }
    } else {
        match rule {
            FlagRule::Equal if integral => (FlagRule::Equal, threshold as i128),
            FlagRule::Equal => never,
            FlagRule::NotEqual if integral => (FlagRule::NotEqual, threshold as i128),
            FlagRule::NotEqual => always,
            FlagRule::Greater | FlagRule::GreaterEqual => {
                let at_least = if rule == FlagRule::Greater {
                    (threshold.floor() as i128).saturating_add(1)
                } else {
                    threshold.ceil() as i128
                };
                if at_least <= min {
                    always
                } else if at_least > max {
                    never
                } else {
                    (FlagRule::GreaterEqual, at_least)
                }
            }
            // Less and LessEqual (`validate` refuses Mask and BitClear as comparisons).
            _ => {
                let at_most = if rule == FlagRule::Less {
                    (threshold.ceil() as i128).saturating_sub(1)
                } else {
                    threshold.floor() as i128
                };
                if at_most >= max {
                    always
                } else if at_most < min {
                    never
                } else {
                    (FlagRule::LessEqual, at_most)
                }
            }
        }
    };
    (rule, InputScalar::new(bound, elem))
}

/// Units of the elementwise kernels (fewer where a cube may not have them).
const ELEMENTWISE_UNITS: u32 = 256;

/// Default tiles: the scan's, except for compactions that read only a mask and write only
/// positions, whose tiles carry few bytes per element: those take 256 units x 32 elements
/// (fewer units where a cube may not have them).
/// Measured on an H200 through CUDA (argwhere of 2^28 bytes at density 0.5, scatter):
/// 256 x 32: 0.545 ms, 512 x 32: 0.595, 512 x 16: 0.652, 256 x 64: 0.777, 512 x 64: 0.868;
/// with values (mask_select f32), 512 x 16 stays best (0.714 against 0.877 for 256 x 32).
fn compact_tuning(
    caps: &DeviceCaps,
    lookback: bool,
    flags: &Flags<'_>,
    io: &CompactIo<'_>,
) -> ScanTuning {
    let base = ScanTuning::for_device(caps, lookback);
    let mask_only = matches!(flags, Flags::Mask { .. }) && io.values_out.is_none();
    if mask_only && !lookback {
        ScanTuning {
            units_per_cube: caps.cube_units(256),
            elements_per_unit: 32,
            ..base
        }
    } else {
        base
    }
}

/// Options a caller set by hand are in range.
fn check_options(options: &CompactOptions) -> Result<(), SieveError> {
    if options.word_rank_sparsity == Some(0) {
        return Err(SieveError::invalid(
            "options.word_rank_sparsity",
            0,
            "None (the default) or at least 1 (one survivor in that many elements at most; \
             1: at every density)",
        ));
    }
    Ok(())
}

fn validate(
    caps: &DeviceCaps,
    flags: &Flags<'_>,
    io: &CompactIo<'_>,
    problem: CompactProblem,
) -> Result<(), SieveError> {
    if problem.rows.checked_mul(problem.len).is_none() {
        return Err(SieveError::invalid(
            "problem.rows * problem.len",
            format!("{} * {}", problem.rows, problem.len),
            "a product that fits in usize",
        ));
    }
    check_index_dtype("io.index_dtype", io.index_dtype)?;
    check_index_capacity("io.index_dtype", io.index_dtype, problem.len)?;
    if let Flags::BitClear { bit } = flags {
        let width = 8 * io.value_dtype.size_bytes() as u32;
        if io.value_dtype.is_float() {
            return Err(SieveError::invalid(
                "io.value_dtype",
                io.value_dtype,
                "an integer dtype (i8, i16, i32, i64, u8, u16, u32, u64): BitClear reads \
                 integer bits",
            ));
        }
        if *bit >= width {
            return Err(SieveError::invalid(
                "flags.bit",
                bit,
                format!("0..{width} for {} values", io.value_dtype),
            ));
        }
        if io.values.is_none() {
            return Err(SieveError::invalid(
                "io.values",
                "None",
                "the input values (the flags read their bits)",
            ));
        }
    }
    if matches!(flags, Flags::RunStarts) && io.values.is_none() {
        return Err(SieveError::invalid(
            "io.values",
            "None",
            "the input values (the flags compare each with the one before it)",
        ));
    }
    if let Flags::Compare { rule, .. } = flags {
        if matches!(
            *rule,
            FlagRule::Mask | FlagRule::BitClear | FlagRule::RunStart
        ) {
            return Err(SieveError::invalid(
                "flags.rule",
                format!("{rule:?}"),
                "a comparison (Greater, GreaterEqual, Less, LessEqual, Equal, NotEqual); pass \
                 Flags::Mask for a mask, Flags::BitClear for a bit, Flags::RunStarts for runs",
            ));
        }
        if io.values.is_none() {
            return Err(SieveError::invalid(
                "io.values",
                "None",
                "the input values (the flags compare them)",
            ));
        }
    }
    if io.values_out.is_some() && io.values.is_none() {
        return Err(SieveError::invalid(
            "io.values",
            "None",
            "the input values (io.values_out asks for them)",
        ));
    }
    if let Flags::Mask {
        storage: MaskStorage::U8,
        ..
    } = flags
        && !caps.u8
    {
        return Err(SieveError::invalid(
            "flags.storage",
            "U8",
            format!(
                "U32 on this device ({}), which has no 8-bit buffers",
                caps.describe()
            ),
        ));
    }
    caps.check_dtype(io.value_dtype)?;
    caps.check_dtype(io.index_dtype)?;
    Ok(())
}

/// Every caller buffer holds what the call reads or writes through it: `[rows, len]` inputs,
/// `outputs` elements of each output, `rows` counts (checked last, before anything launches;
/// `rows * len` is validated).
fn check_buffers(
    client: &Client,
    flags: &Flags<'_>,
    io: &CompactIo<'_>,
    problem: CompactProblem,
    outputs: usize,
) -> Result<(), SieveError> {
    let rules = BufferRules::of(client);
    let elements = problem.rows * problem.len;
    if let Flags::Mask { mask, storage } = flags {
        let (elem, bytes) = match storage {
            MaskStorage::U8 => ("u8", 1),
            MaskStorage::U32 => ("u32", 4),
        };
        rules.check("flags.mask", mask, elements, elem, bytes)?;
    }
    rules.check_optional("io.values", io.values, elements, io.value_dtype)?;
    rules.check_optional("io.values_out", io.values_out, outputs, io.value_dtype)?;
    rules.check_optional("io.indices_out", io.indices_out, outputs, io.index_dtype)?;
    rules.check_dtype("io.counts", io.counts, problem.rows, io.index_dtype)
}

/// Rows longer than this run only through `Scatter`, whose tile offsets go 64-bit: the
/// look-back packs 32-bit sums into its status words and the gather's running count is u32.
const U32_ROW: usize = u32::MAX as usize;

fn resolve_strategy(
    caps: &DeviceCaps,
    rejected: Rejected,
    asked: CompactStrategy,
    problem: CompactProblem,
) -> Result<CompactStrategy, SieveError> {
    let long_rows = "rows longer than u32::MAX elements need 64-bit running counts (Scatter has \
                     them)";
    let lookback_blocker = if !caps.atomic_u64 {
        Some("it needs atomic load/store of 64-bit words")
    } else if rejected == Rejected::Keep {
        Some("a split places rejected elements after the row total, unknown in one pass")
    } else if problem.len > U32_ROW {
        Some(long_rows)
    } else {
        None
    };
    let refuse = |reason| {
        Err(SieveError::UnsupportedStrategy {
            strategy: asked.name(),
            device: caps.describe(),
            reason,
        })
    };
    match asked {
        CompactStrategy::Scatter => Ok(asked),
        CompactStrategy::Gather if problem.len > U32_ROW => refuse(long_rows),
        CompactStrategy::Gather => Ok(asked),
        CompactStrategy::ScatterLookback => match lookback_blocker {
            None => Ok(asked),
            Some(reason) => refuse(reason),
        },
        // Measured on an H200 (docs/PERFORMANCE.md): the three-pass scatter beat the
        // single-pass look-back through CUDA (0.72 vs 1.08 ms, 2^28 f32 at density 0.5, every
        // tile shape swept) and through Vulkan, and the gather everywhere.
        CompactStrategy::Auto => Ok(CompactStrategy::Scatter),
    }
}

/// One compaction call's fixed context.
struct Run<'a> {
    client: &'a Client,
    io: CompactIo<'a>,
    problem: CompactProblem,
    mask: Option<&'a Handle>,
    mask_elem: ElemType,
    mask_bytes: usize,
    threshold: InputScalar,
    rule: FlagRule,
    tuning: ScanTuning,
    /// [`CompactOptions::reread_values`].
    reread_values: bool,
    /// [`CompactOptions::flag_words`].
    flag_words: FlagWords,
    /// [`CompactOptions::unpacked_ranks`].
    unpacked_ranks: bool,
    /// [`CompactOptions::word_rank_sparsity`], resolved.
    word_rank_sparsity: usize,
    /// Elements each output binds: `rows * len`, or a counted compaction's total.
    out_len: usize,
    /// Units of the elementwise kernels on this device.
    elementwise_units: u32,
    /// Read once by [`compact`], handed to the nested scans.
    caps: &'a DeviceCaps,
}

/// How the rows are cut into vectors and tiles.
struct Layout {
    vector_size: usize,
    row_vectors: usize,
    tiles_per_row: usize,
    total_tiles: usize,
}

impl<'a> Run<'a> {
    fn new(
        client: &'a Client,
        caps: &'a DeviceCaps,
        flags: Flags<'a>,
        io: CompactIo<'a>,
        problem: CompactProblem,
        tuning: ScanTuning,
        options: CompactOptions,
    ) -> Self {
        let (rule, threshold, mask, mask_storage) = match flags {
            Flags::Mask { mask, storage } => (
                FlagRule::Mask,
                InputScalar::new(0, io.value_dtype.elem_type()),
                Some(mask),
                storage,
            ),
            Flags::Compare { rule, threshold } => {
                let (rule, threshold) = comparison(rule, threshold, io.value_dtype);
                (rule, threshold, None, MaskStorage::U32)
            }
            Flags::BitClear { bit } => (
                FlagRule::BitClear,
                InputScalar::new(bit, io.value_dtype.elem_type()),
                None,
                MaskStorage::U32,
            ),
            Flags::RunStarts => (
                FlagRule::RunStart,
                InputScalar::new(0, io.value_dtype.elem_type()),
                None,
                MaskStorage::U32,
            ),
        };
        Run {
            client,
            io,
            problem,
            mask,
            mask_elem: match mask_storage {
                MaskStorage::U8 => ElemType::UInt(UIntKind::U8),
                MaskStorage::U32 => ElemType::UInt(UIntKind::U32),
            },
            mask_bytes: match mask_storage {
                MaskStorage::U8 => 1,
                MaskStorage::U32 => 4,
            },
            threshold,
            rule,
            tuning,
            reread_values: options.reread_values,
            flag_words: options.flag_words,
            unpacked_ranks: options.unpacked_ranks,
            word_rank_sparsity: options.word_rank_sparsity.unwrap_or(
                if rule == FlagRule::RunStart {
                    RUN_START_WORD_RANK_SPARSITY
                } else {
                    WORD_RANK_SPARSITY
                },
            ),
            elementwise_units: caps.cube_units(ELEMENTWISE_UNITS),
            out_len: problem.rows * problem.len,
            caps,
        }
    }

    fn elements(&self) -> usize {
        self.problem.rows * self.problem.len
    }

    /// The address type of every launch: each binds the `rows * len` inputs or outputs, the
    /// largest buffers of the call (tile workspaces hold fewer elements).
    fn address(&self) -> AddressType {
        address_type(&[self.elements()])
    }

    /// The dtype of the scatter's tile counts and offsets: u32, or i64 with 64-bit addresses
    /// (the only launches where a row, and so a running count, may pass u32; forcing wide
    /// addressing on small inputs runs this path too).
    fn tile_count_dtype(&self) -> Dtype {
        match self.address() {
            AddressType::U32 => Dtype::U32,
            _ => Dtype::I64,
        }
    }

    fn config(&self, rejected: Rejected, vector_size: usize) -> CompactConfig {
        self.config_with_words(rejected, vector_size, false)
    }

    /// [`Run::config`], with the flags passed from the count pass to the scatter as words
    /// where `flag_words`.
    fn config_with_words(
        &self,
        rejected: Rejected,
        vector_size: usize,
        flag_words: bool,
    ) -> CompactConfig {
        CompactConfig {
            flag_words,
            word_rank: false,
            rule: self.rule,
            wide: self.io.value_dtype.size_bytes() == 8,
            compare_in_f32: matches!(self.io.value_dtype, Dtype::F16 | Dtype::BF16),
            run_key: (self.rule == FlagRule::RunStart).then(|| KeyKind::of(self.io.value_dtype)),
            write_values: self.io.values_out.is_some(),
            write_indices: self.io.indices_out.is_some(),
            rejected,
            hold_values: !self.reread_values,
            rank_field_bits: if self.tuning.use_planes && !self.unpacked_ranks {
                flag_field_bits(self.caps.plane_size_max, vector_size)
            } else {
                0
            },
            blueprint: self.tuning.blueprint(vector_size),
        }
    }

    /// The widest vector every vectorised input allows.
    fn layout(&self, max_vector_size: usize) -> Layout {
        let mut inputs = Vec::new();
        if let Some(values) = self.io.values {
            inputs.push((values, self.io.value_dtype.size_bytes()));
        }
        if let Some(mask) = self.mask {
            inputs.push((mask, self.mask_bytes));
        }
        let vector_size = vector_size_for(self.problem.len, max_vector_size, &inputs);
        let row_vectors = self.problem.len / vector_size;
        let tile_vectors = self.tuning.blueprint(vector_size).tile_vectors();
        let tiles_per_row = row_vectors.div_ceil(tile_vectors);
        Layout {
            vector_size,
            row_vectors,
            tiles_per_row,
            total_tiles: self.problem.rows * tiles_per_row,
        }
    }

    /// The words of every unit's flags ([`CompactConfig::flag_words`]: one u32 a unit of
    /// every tile), where a unit's elements fit one word.
    fn flag_word_count(&self, layout: &Layout) -> Option<usize> {
        let blueprint = self.tuning.blueprint(layout.vector_size);
        (blueprint.vectors_per_unit as usize * layout.vector_size <= 32)
            .then(|| layout.total_tiles * blueprint.units as usize)
    }

    /// Whether a counted compaction's count pass writes flag words (`total` unknown) and
    /// its scatter reads them (`total`: the count step one wrote); the scatter reads them
    /// only where the count pass wrote them.
    fn counted_words(&self, total: Option<usize>) -> bool {
        match self.flag_words {
            FlagWords::On => true,
            FlagWords::Off => false,
            FlagWords::Auto => {
                self.rule == FlagRule::RunStart
                    && total.is_none_or(|total| {
                        total.saturating_mul(RUN_START_WORDS_SPARSITY) <= self.problem.len
                    })
            }
        }
    }

    /// A scatter of `total` survivors with flag words ranks from them alone
    /// ([`CompactOptions::word_rank_sparsity`]).
    fn word_rank(&self, total: usize) -> bool {
        total.saturating_mul(self.word_rank_sparsity) <= self.elements()
    }

    /// The flag words' part of a counted compaction's workspace: after its tile offsets, at
    /// the next multiple of the binding alignment, where the workspace has room for them
    /// (both steps decide alike: the same layout and workspace).
    fn workspace_words(&self, layout: &Layout, workspace: &Handle) -> Option<Handle> {
        let words = self.flag_word_count(layout)? as u64;
        let alignment = self.client.properties().memory.alignment.max(4);
        let offsets = (layout.total_tiles * self.io.index_dtype.size_bytes()) as u64;
        let start = offsets.next_multiple_of(alignment);
        (handle_bytes(workspace) >= start + 4 * words)
            .then(|| workspace.clone().offset_start(start))
    }

    /// A caller buffer of `rows * len` elements (kernels bound every access by the row
    /// length), or a placeholder where the config turns its loads or stores off.
    fn input_arg(&self, handle: Option<&Handle>) -> BufferArg {
        bind_optional(self.client, handle, self.elements())
    }

    fn values_arg(&self) -> BufferArg {
        self.input_arg(self.io.values)
    }

    fn mask_arg(&self) -> BufferArg {
        self.input_arg(self.mask)
    }

    /// Outputs bind `out_len` elements: every slot a kernel writes is below it (the scatters
    /// check survivors' slots against it: `tile::scatter_tile`).
    fn values_out_arg(&self) -> BufferArg {
        bind_optional(self.client, self.io.values_out, self.out_len)
    }

    fn indices_out_arg(&self) -> BufferArg {
        bind_optional(self.client, self.io.indices_out, self.out_len)
    }

    /// The caller's counts hold `rows` elements; one write per row.
    fn counts_arg(&self) -> BufferArg {
        bind(self.io.counts, self.problem.rows)
    }

    fn value_elem(&self) -> ElemType {
        self.io.value_dtype.elem_type()
    }

    fn index_elem(&self) -> ElemType {
        self.io.index_dtype.elem_type()
    }

    /// Portable: count tiles, scan the counts, rank and scatter.
    fn scatter(&self, rejected: Rejected) -> Result<(), SieveError> {
        let layout = self.layout(self.tuning.max_vector_size);
        let count_dtype = self.tile_count_dtype();
        if layout.tiles_per_row == 1 {
            // One tile a row: its offset is 0, and the scatter counts it.
            let (counts, offsets) = (placeholder(self.client), placeholder(self.client));
            self.launch_scatter(
                rejected,
                &layout,
                counts,
                offsets,
                false,
                count_dtype,
                None,
                false,
            );
            return Ok(());
        }
        let tile_offsets = self
            .client
            .empty(layout.total_tiles * count_dtype.size_bytes());
        // `Auto` takes no words here: only counted run starts are measured to gain.
        let words = (self.flag_words == FlagWords::On)
            .then(|| self.flag_word_count(&layout))
            .flatten()
            .map(|words| self.client.empty(4 * words));
        let tile_counts =
            self.count_tiles(&layout, &tile_offsets, count_dtype, None, words.as_ref())?;
        self.launch_scatter(
            rejected,
            &layout,
            bind(&tile_counts, layout.total_tiles),
            bind(&tile_offsets, layout.total_tiles),
            true,
            count_dtype,
            words.as_ref(),
            false,
        );
        Ok(())
    }

    /// Counts every tile's survivors and scans them per row into `tile_offsets` (exclusive,
    /// `C` = `count_dtype`), with `totals` each row's total there too, and the units' flags
    /// into `words` where given; returns the counts.
    fn count_tiles(
        &self,
        layout: &Layout,
        tile_offsets: &Handle,
        count_dtype: Dtype,
        totals: Option<&Handle>,
        words: Option<&Handle>,
    ) -> Result<Handle, SieveError> {
        let tile_counts = self
            .client
            .empty(layout.total_tiles * count_dtype.size_bytes());
        self.launch_count(
            layout,
            bind(&tile_counts, layout.total_tiles),
            count_dtype,
            words,
        );
        scan_counts_with(
            self.client,
            self.caps,
            &tile_counts,
            tile_offsets,
            totals,
            ScanProblem {
                rows: self.problem.rows,
                len: layout.tiles_per_row,
            },
            count_dtype,
        )?;
        Ok(tile_counts)
    }

    /// The scatter's count pass: every tile's survivors into `tile_counts` (of `count_dtype`),
    /// and each unit's flags into `words` where given ([`Run::flag_word_count`] of them).
    fn launch_count(
        &self,
        layout: &Layout,
        tile_counts: BufferArg,
        count_dtype: Dtype,
        words: Option<&Handle>,
    ) {
        let config = self.config_with_words(Rejected::Drop, layout.vector_size, words.is_some());
        let words = self.words_arg(layout, words);
        // SAFETY: one count per tile and one word per unit of a tile; surplus cubes return
        // before touching memory.
        unsafe {
            count_tiles_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, layout.total_tiles),
                CubeDim::new_1d(config.blueprint.units),
                self.address(),
                layout.vector_size,
                self.values_arg(),
                self.mask_arg(),
                self.threshold,
                tile_counts,
                words,
                layout.row_vectors,
                layout.tiles_per_row,
                layout.total_tiles,
                config,
                [self.value_elem(), self.mask_elem, count_dtype.elem_type()],
            );
        }
    }

    /// The scatter's last pass: ranks every tile again and writes its elements, offset by
    /// `tile_offsets` (`with_offsets`; else every row is one tile). Writes the counts.
    #[allow(clippy::too_many_arguments)]
    fn launch_scatter(
        &self,
        rejected: Rejected,
        layout: &Layout,
        tile_counts: BufferArg,
        tile_offsets: BufferArg,
        with_offsets: bool,
        count_dtype: Dtype,
        words: Option<&Handle>,
        word_rank: bool,
    ) {
        let config = CompactConfig {
            word_rank,
            ..self.config_with_words(rejected, layout.vector_size, words.is_some())
        };
        let words = self.words_arg(layout, words);
        // SAFETY: surplus cubes return before touching memory; outputs are written at slots
        // below `len` of each row (ranks are bounded by the row's element count) and below
        // `out_len`, counts once per row.
        unsafe {
            scatter_tiles_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, layout.total_tiles),
                CubeDim::new_1d(config.blueprint.units),
                self.address(),
                layout.vector_size,
                self.values_arg(),
                self.mask_arg(),
                self.threshold,
                self.values_out_arg(),
                self.indices_out_arg(),
                self.counts_arg(),
                tile_counts,
                tile_offsets,
                words,
                layout.row_vectors,
                layout.tiles_per_row,
                layout.total_tiles,
                self.out_len,
                with_offsets,
                config,
                [
                    self.value_elem(),
                    self.mask_elem,
                    self.index_elem(),
                    count_dtype.elem_type(),
                ],
            );
        }
    }

    /// The flag words as a kernel argument, or a placeholder where there are none.
    fn words_arg(&self, layout: &Layout, words: Option<&Handle>) -> BufferArg {
        match words {
            Some(words) => bind(words, self.flag_word_count(layout).unwrap_or(1)),
            None => placeholder(self.client),
        }
    }

    /// A counted compaction's workspace holds a tile offset for every tile.
    fn check_workspace(&self, io: &CountedIo<'_>) -> Result<(), SieveError> {
        let tiles = self.layout(self.tuning.max_vector_size).total_tiles;
        BufferRules::of(self.client).check_dtype(
            "io.workspace",
            io.workspace,
            tiles,
            io.index_dtype,
        )
    }

    /// [`count_survivors`]: the tiles' counts, their exclusive scan into `workspace` and the
    /// row's total into the counts (all of the index dtype).
    fn count_survivors(&self, workspace: &Handle) -> Result<(), SieveError> {
        let layout = self.layout(self.tuning.max_vector_size);
        let dtype = self.io.index_dtype;
        let words = self
            .counted_words(None)
            .then(|| self.workspace_words(&layout, workspace))
            .flatten();
        if layout.total_tiles == 1 {
            // One tile: its count is the total, and its offset 0 (no scan; step two knows).
            self.launch_count(&layout, self.counts_arg(), dtype, words.as_ref());
            return Ok(());
        }
        self.count_tiles(
            &layout,
            workspace,
            dtype,
            Some(self.io.counts),
            words.as_ref(),
        )?;
        Ok(())
    }

    /// [`write_survivors`]: the scatter's last pass from the offsets in `workspace`.
    fn write_survivors(&self, workspace: &Handle) {
        let layout = self.layout(self.tuning.max_vector_size);
        // The row's count was step one's; `Drop` reads no tile counts; one tile's offset is 0.
        let with_offsets = layout.total_tiles > 1;
        let offsets = if with_offsets {
            bind(workspace, layout.total_tiles)
        } else {
            placeholder(self.client)
        };
        let words = self
            .counted_words(Some(self.out_len))
            .then(|| self.workspace_words(&layout, workspace))
            .flatten();
        self.launch_scatter(
            Rejected::Drop,
            &layout,
            placeholder(self.client),
            offsets,
            with_offsets,
            self.io.index_dtype,
            words.as_ref(),
            // The count is known: sparse survivors rank from the words alone.
            self.word_rank(self.out_len),
        );
    }

    /// One pass with decoupled look-back (`Drop` placement).
    fn scatter_lookback(&self) {
        let layout = self.layout(self.tuning.max_vector_size);
        let config = self.config(Rejected::Drop, layout.vector_size);
        let Workspace { status, counter } = Workspace::zeroed(self.client, layout.total_tiles);
        // SAFETY: one status word per tile; tiles are numbered by the counter, so cubes past
        // `total_tiles` return before touching memory; writes as in `scatter`.
        unsafe {
            scatter_lookback_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, layout.total_tiles),
                CubeDim::new_1d(config.blueprint.units),
                self.address(),
                layout.vector_size,
                self.values_arg(),
                self.mask_arg(),
                self.threshold,
                self.values_out_arg(),
                self.indices_out_arg(),
                self.counts_arg(),
                BufferArg::from_raw_parts(status, layout.total_tiles),
                BufferArg::from_raw_parts(counter, 1),
                layout.row_vectors,
                layout.tiles_per_row,
                layout.total_tiles,
                self.out_len,
                config,
                [self.value_elem(), self.mask_elem, self.index_elem()],
            );
        }
    }

    /// Writes zeros after each row's survivors (after a `Drop` pass wrote the counts).
    fn zero_tail(&self) {
        let config = self.config(Rejected::Zero, 1);
        let units = self.elementwise_units;
        // SAFETY: one unit per slot, bounds-checked against `rows * len`.
        unsafe {
            zero_tail_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, self.elements().div_ceil(units as usize)),
                CubeDim::new_1d(units),
                self.address(),
                self.values_out_arg(),
                self.indices_out_arg(),
                self.counts_arg(),
                self.problem.len,
                self.elements(),
                config,
                [self.value_elem(), self.index_elem()],
            );
        }
    }

    /// "Turn the scatter around": flags, their inclusive running count, then one unit per
    /// output slot binary-searches for its source.
    fn gather(&self, rejected: Rejected) -> Result<(), SieveError> {
        let layout = self.layout(self.tuning.max_vector_size);
        let config = self.config(rejected, 1);
        let elements = self.elements();
        let flags = self.client.empty(elements * 4);
        let running = self.client.empty(elements * 4);
        let units = self.elementwise_units;
        let vectors = elements / layout.vector_size;
        // SAFETY: one unit per vector of flags, bounds-checked against `vectors`.
        unsafe {
            write_flags_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, vectors.div_ceil(units as usize)),
                CubeDim::new_1d(units),
                self.address(),
                layout.vector_size,
                self.values_arg(),
                self.mask_arg(),
                self.threshold,
                BufferArg::from_raw_parts(flags.clone(), elements),
                vectors,
                layout.row_vectors,
                self.config(rejected, layout.vector_size),
                [self.value_elem(), self.mask_elem],
            );
        }
        scan_with(
            self.client,
            self.caps,
            &flags,
            &running,
            ScanProblem {
                rows: self.problem.rows,
                len: self.problem.len,
            },
            Dtype::U32,
            ScanKind::Inclusive,
            ScanOptions::default(),
        )?;
        // SAFETY: one unit per output slot, bounds-checked against `rows * len`; sources are
        // positions within the slot's row.
        unsafe {
            gather_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, elements.div_ceil(units as usize)),
                CubeDim::new_1d(units),
                self.address(),
                self.values_arg(),
                BufferArg::from_raw_parts(running, elements),
                self.values_out_arg(),
                self.indices_out_arg(),
                self.counts_arg(),
                self.problem.len,
                elements,
                config,
                [self.value_elem(), self.index_elem()],
            );
        }
        Ok(())
    }
}
