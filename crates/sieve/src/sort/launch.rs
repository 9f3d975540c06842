//! Host side of the sort: validation, strategy choice, workspaces and the pass sequence.

use cubecl::prelude::*;
use cubecl::server::Handle;

use super::kernels::{
    PassConfig, Positions, TileOffsets, digit_counts_kernel, encode_kernel, encode_wide_kernel,
    histogram_kernel, onesweep_kernel, scatter_kernel, sort_in_cube_kernel,
};
use super::tile::SortBlueprint;
use super::{SortIo, SortOptions, SortOrder, SortProblem, SortStrategy, SortTuning};
use crate::common::address::{
    AddressType, address_type, check_extent, check_index_capacity, check_index_dtype,
};
use crate::common::buffers::{BufferRules, bind, bind_optional};
use crate::common::fill::fill_zero;
use crate::common::gather::{RowGather, gather_rows};
use crate::common::grid::cube_count_1d;
use crate::common::lookback::COUNT_LIMIT;
use crate::radix::keys::KeyKind;
use crate::scan::launch::scan_with;
use crate::scan::{ScanKind, ScanOptions, ScanProblem};
use crate::{DeviceCaps, Dtype, SieveError};

/// Units of the elementwise kernels (fewer where a cube may not have them).
const ELEMENTWISE_UNITS: u32 = 256;

/// Sorts every row of a `[rows, len]` problem (see the module docs). Returns the strategy
/// that ran.
///
/// Errors before anything launches: an unsupported key or index dtype, a row too long for
/// 32-bit positions or the index dtype, a forced `InCube` on rows that do not fit one cube,
/// a tuning that does not fit the device, or (checked last) a buffer smaller than the problem
/// or a view off the device's binding alignment.
pub fn sort(
    client: &Client,
    io: SortIo<'_>,
    problem: SortProblem,
    order: SortOrder,
    options: SortOptions,
) -> Result<SortStrategy, SieveError> {
    sort_with(client, &DeviceCaps::of(client), io, problem, order, options)
}

/// [`sort`] with the device's capabilities already read (by the entry point that nests this
/// sort), so one call reads them once.
pub(crate) fn sort_with(
    client: &Client,
    caps: &DeviceCaps,
    io: SortIo<'_>,
    problem: SortProblem,
    order: SortOrder,
    options: SortOptions,
) -> Result<SortStrategy, SieveError> {
    sort_keyed(
        client,
        caps,
        io,
        problem,
        order,
        options,
        KeyKind::of(io.key_dtype),
    )
}

/// [`sort_with`] ranking the keys as `kind` (one `io.key_dtype` can be keyed more than one
/// way: f32 as [`KeyKind::F32Logits`] for sampling).
pub(crate) fn sort_keyed(
    client: &Client,
    caps: &DeviceCaps,
    io: SortIo<'_>,
    problem: SortProblem,
    order: SortOrder,
    options: SortOptions,
    kind: KeyKind,
) -> Result<SortStrategy, SieveError> {
    debug_assert!(kind == KeyKind::of(io.key_dtype) || io.key_dtype == Dtype::F32);
    if super::key_needs_device_dtype(io.key_dtype) {
        caps.check_dtype(io.key_dtype)?;
    }
    check_index_dtype("io.index_dtype", io.index_dtype)?;
    check_index_capacity("io.index_dtype", io.index_dtype, problem.len)?;
    // Past what the index dtype holds (refused above), rows are bounded by 32-bit positions.
    if problem.len > u32::MAX as usize {
        return Err(SieveError::invalid(
            "problem.len",
            problem.len,
            format!(
                "at most {} (positions are 32-bit; {} indices)",
                u32::MAX,
                io.index_dtype
            ),
        ));
    }
    caps.check_dtype(io.index_dtype)?;
    let tuning = options
        .tuning
        .unwrap_or_else(|| SortTuning::for_device(caps));
    check_tuning(caps, &tuning)?;
    let capacity = tuning.in_cube_capacity(caps);
    let onesweep_blocker = onesweep_blocker(caps, problem.len);
    let strategy = match options.strategy {
        SortStrategy::Auto if problem.len <= capacity && !kind.wide() => SortStrategy::InCube,
        SortStrategy::Auto
            if onesweep_blocker.is_none()
                && onesweep_wins(problem, kind, io.indices_out.is_none()) =>
        {
            SortStrategy::Onesweep
        }
        SortStrategy::Auto => SortStrategy::Lsd,
        SortStrategy::Onesweep if onesweep_blocker.is_some() => {
            return Err(SieveError::invalid(
                "options.strategy",
                "Onesweep",
                format!("Lsd or Auto: {}", onesweep_blocker.unwrap_or_default()),
            ));
        }
        SortStrategy::InCube if kind.wide() => {
            return Err(SieveError::invalid(
                "options.strategy",
                format!("InCube with {} keys", io.key_dtype),
                "Lsd or Auto for 64-bit keys (the in-cube sort holds 32-bit radix keys)",
            ));
        }
        SortStrategy::InCube if problem.len > capacity => {
            return Err(SieveError::invalid(
                "problem.len",
                problem.len,
                format!(
                    "at most {capacity} for the in-cube sort on this device ({})",
                    caps.describe_limits()
                ),
            ));
        }
        other => other,
    };
    if problem.rows == 0 || problem.len == 0 {
        return Ok(strategy);
    }
    let run = Run {
        client,
        io,
        problem,
        kind,
        descending: order == SortOrder::Descending,
        tuning,
        caps,
        elementwise_units: caps.cube_units(ELEMENTWISE_UNITS),
        onesweep: strategy == SortStrategy::Onesweep,
    };
    check_extent(client, caps, "problem.rows * problem.len", run.extent())?;
    check_buffers(client, &io, problem)?;
    match strategy {
        SortStrategy::InCube => run.in_cube(),
        SortStrategy::Lsd | SortStrategy::Onesweep => run.lsd()?,
        SortStrategy::Auto => unreachable!("resolved above"),
    }
    Ok(strategy)
}

/// Every caller buffer holds the problem's `[rows, len]` elements (checked last, before
/// anything launches).
fn check_buffers(client: &Client, io: &SortIo<'_>, problem: SortProblem) -> Result<(), SieveError> {
    let rules = BufferRules::of(client);
    let elements = problem.rows.saturating_mul(problem.len);
    rules.check_dtype("io.keys", io.keys, elements, io.key_dtype)?;
    rules.check_optional("io.keys_out", io.keys_out, elements, io.key_dtype)?;
    rules.check_optional("io.indices_out", io.indices_out, elements, io.index_dtype)
}

fn check_tuning(caps: &DeviceCaps, tuning: &SortTuning) -> Result<(), SieveError> {
    caps.check_units_per_cube(tuning.units_per_cube)?;
    for (name, bits) in [
        ("tuning.radix_bits", tuning.radix_bits),
        ("tuning.in_cube_radix_bits", tuning.in_cube_radix_bits),
        ("tuning.short_row_radix_bits", tuning.short_row_radix_bits),
    ] {
        if !(1..=8).contains(&bits) {
            return Err(SieveError::invalid(name, bits, "1..=8"));
        }
    }
    let keys_per_unit = tuning.in_cube_keys_per_unit;
    if !(1..=16).contains(&keys_per_unit) || !keys_per_unit.is_power_of_two() {
        return Err(SieveError::invalid(
            "tuning.in_cube_keys_per_unit",
            keys_per_unit,
            "a power of two in 1..=16",
        ));
    }
    let tile_bytes = tuning.device_tile_bytes(caps);
    for (name, epu) in [
        (
            "tuning.keys_only_elements_per_unit",
            tuning.keys_only_elements_per_unit,
        ),
        (
            "tuning.onesweep_keys_only_elements_per_unit",
            tuning.onesweep_keys_only_elements_per_unit,
        ),
        (
            "tuning.onesweep_elements_per_unit",
            tuning.onesweep_elements_per_unit,
        ),
    ] {
        if epu == 0 {
            return Err(SieveError::invalid(name, 0, "at least 1"));
        }
    }
    for (name, parts) in [
        ("tuning.count_parts", tuning.count_parts),
        ("tuning.lsd_count_parts", tuning.lsd_count_parts),
        ("tuning.count_loads", tuning.count_loads),
    ] {
        if !(1..=32).contains(&parts) {
            return Err(SieveError::invalid(name, parts, "1..=32"));
        }
    }
    if tuning.elements_per_unit == 0 || tile_bytes > caps.max_shared_bytes {
        return Err(SieveError::invalid(
            "tuning.elements_per_unit",
            tuning.elements_per_unit,
            format!(
                "at least 1, with the largest device-wide tile (Lsd's or onesweep's with \
                 positions, or keys alone: {tile_bytes} bytes with the ranker's state, \
                 radix_bits {}) within the device's {} bytes of shared memory",
                tuning.radix_bits, caps.max_shared_bytes
            ),
        ));
    }
    caps.check_planes(tuning.use_planes)
}

/// Where `Auto` takes `Onesweep` over `Lsd` (when the device runs it): 32-bit keys, at least
/// [`ONESWEEP_MIN_KEYS`] in all, and keys alone, many rows or rows that long. Measured on the H200
/// (`bench/results/h200/13-d`, `14-b`, ms, onesweep against Lsd): keys alone 11.65 / 12.70 at
/// 2^28 but 0.977 / 0.896 at 2^24; with positions 6.75 / 7.54 at [4096, 32768], but 14.90 /
/// 14.39 on one 2^28-key row and 0.68 / 0.56 at [64, 128256] (one long row: its tiles wait on
/// each other's look-back, where the LSD pass's tiles read the scanned counts). With the
/// twenty-first session's ranker and onesweep's own tiles with positions (`21-d`): one row of
/// 2^26 keys 2.81-2.83 against Lsd's 3.09-3.12, of 2^28 10.12 against 11.86.
fn onesweep_wins(problem: SortProblem, kind: KeyKind, keys_only: bool) -> bool {
    kind.carried_raw()
        && problem.rows.saturating_mul(problem.len) >= ONESWEEP_MIN_KEYS
        && (keys_only
            || problem.rows >= ONESWEEP_MIN_ROWS_WITH_POSITIONS
            || problem.len >= ONESWEEP_MIN_KEYS)
}

/// Fewest keys in all for which `Auto` takes `Onesweep` (between 2^24, where `Lsd` won, and
/// 2^27-2^28, where `Onesweep` did).
const ONESWEEP_MIN_KEYS: usize = 1 << 26;

/// Fewest rows for which `Auto` takes `Onesweep` with positions riding (it won at 4096 rows,
/// lost at 64 and 1).
const ONESWEEP_MIN_ROWS_WITH_POSITIONS: usize = 1024;

/// Why the onesweep passes cannot run here, if they cannot.
fn onesweep_blocker(caps: &DeviceCaps, len: usize) -> Option<String> {
    if !caps.forward_progress {
        Some(format!(
            "the onesweep look-back needs forward progress between cubes, which the {} \
             runtime does not promise",
            caps.runtime
        ))
    } else if len >= COUNT_LIMIT {
        Some(format!(
            "rows of {len} keys: the onesweep look-back counts below 2^30 ({COUNT_LIMIT}) keys a row"
        ))
    } else {
        None
    }
}

/// Where the last LSD pass writes.
#[derive(Clone, Copy)]
enum Sink<'a> {
    /// The caller's outputs (the carried words are the keys themselves).
    Outputs,
    /// The final positions, as `u32`, into this workspace (for a decode or a second sort).
    Positions(&'a Handle),
}

struct Run<'a> {
    client: &'a Client,
    io: SortIo<'a>,
    problem: SortProblem,
    kind: KeyKind,
    descending: bool,
    tuning: SortTuning,
    /// Read once by [`sort`], handed to the nested scans.
    caps: &'a DeviceCaps,
    /// Units of the elementwise kernels on this device.
    elementwise_units: u32,
    /// The digit passes run as [`SortStrategy::Onesweep`] (else as `Lsd`).
    onesweep: bool,
}

impl Run<'_> {
    fn elements(&self) -> usize {
        self.problem.rows * self.problem.len
    }

    /// The most elements any buffer of this sort binds: the keys (64-bit keys as two words
    /// each), or the LSD passes' digit counts (more than the keys when tiles hold fewer keys
    /// than there are digits).
    fn extent(&self) -> usize {
        let words = if self.kind.wide() { 2 } else { 1 };
        let blueprint = [(true, false), (true, true), (false, false)]
            .map(|(with, onesweep)| self.tuning.device_blueprint(self.caps, with, onesweep))
            .into_iter()
            .min_by_key(|b| b.tile())
            .expect("three blueprints");
        let counts = self
            .problem
            .rows
            .saturating_mul(self.problem.len.div_ceil(blueprint.tile()))
            .saturating_mul(blueprint.digits());
        // The onesweep status words (one per tile and digit) and the tile counter past them.
        self.elements()
            .saturating_mul(words)
            .max(counts.saturating_add(1))
    }

    /// The address type of every launch of this sort, from [`Run::extent`].
    fn address(&self) -> AddressType {
        address_type(&[self.extent()])
    }

    /// The caller's buffers (and the workspaces) hold `rows * len` elements; every access is
    /// bounded by it.
    fn buffer(&self, handle: &Handle) -> BufferArg {
        bind(handle, self.elements())
    }

    /// An output the caller asked for, or a placeholder binding the kernel does not write.
    fn output(&self, handle: Option<&Handle>) -> BufferArg {
        bind_optional(self.client, handle, self.elements())
    }

    fn dtypes(&self) -> [ElemType; 2] {
        [
            self.io.key_dtype.elem_type(),
            self.io.index_dtype.elem_type(),
        ]
    }

    /// One cube per row; units and keys per unit sized to the row (powers of two).
    fn in_cube(&self) {
        let blueprint = self.tuning.in_cube_blueprint(self.caps, self.problem.len);
        // SAFETY: one cube per row, surplus cubes return; every access is within the row.
        unsafe {
            sort_in_cube_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, self.problem.rows),
                CubeDim::new_1d(blueprint.units),
                self.address(),
                self.buffer(self.io.keys),
                self.output(self.io.keys_out),
                self.output(self.io.indices_out),
                self.problem.len,
                self.problem.rows,
                self.kind,
                self.descending,
                self.io.keys_out.is_some(),
                self.io.indices_out.is_some(),
                blueprint,
                self.dtypes(),
            );
        }
    }

    fn elementwise_grid(&self) -> CubeCount {
        cube_count_1d(
            self.client,
            self.elements().div_ceil(self.elementwise_units as usize),
        )
    }

    /// The LSD sort for each kind of key: 32-bit keys ride through the passes as they are;
    /// 8- and 16-bit keys are encoded to radix words and 64-bit keys sorted word by word, then
    /// the outputs are gathered by the final positions.
    fn lsd(&self) -> Result<(), SieveError> {
        let n = self.elements();
        let want_keys = self.io.keys_out.is_some();
        let want_indices = self.io.indices_out.is_some();
        if !want_keys && !want_indices {
            return Ok(());
        }
        if self.kind.carried_raw() {
            self.passes(
                self.io.keys,
                self.kind,
                self.descending,
                None,
                want_indices,
                Sink::Outputs,
            )?;
            return Ok(());
        }
        let radix = self.client.empty(4 * n);
        let positions = self.client.empty(4 * n);
        if self.kind.wide() {
            self.encode_wide(&radix, None, false);
            let low_positions = self.client.empty(4 * n);
            self.passes(
                &radix,
                KeyKind::U32,
                false,
                None,
                true,
                Sink::Positions(&low_positions),
            )?;
            self.encode_wide(&radix, Some(&low_positions), true);
            self.passes(
                &radix,
                KeyKind::U32,
                false,
                Some(&low_positions),
                true,
                Sink::Positions(&positions),
            )?;
        } else {
            // SAFETY: one unit per element, bounds-checked.
            unsafe {
                encode_kernel::launch_unchecked(
                    self.client,
                    self.elementwise_grid(),
                    CubeDim::new_1d(self.elementwise_units),
                    self.address(),
                    self.buffer(self.io.keys),
                    self.buffer(&radix),
                    n,
                    self.kind,
                    self.descending,
                    self.io.key_dtype.elem_type(),
                );
            }
            self.passes(
                &radix,
                KeyKind::U32,
                false,
                None,
                true,
                Sink::Positions(&positions),
            )?;
        }
        self.decode(&positions);
        Ok(())
    }

    /// One radix word of 64-bit keys (read as `u32` pairs) into `radix`; the high word at the
    /// positions the low-word sort gave.
    fn encode_wide(&self, radix: &Handle, positions: Option<&Handle>, high_word: bool) {
        let n = self.elements();
        // SAFETY: the keys are `2 n` words; `positions` (when read) are within their row.
        unsafe {
            encode_wide_kernel::launch_unchecked(
                self.client,
                self.elementwise_grid(),
                CubeDim::new_1d(self.elementwise_units),
                self.address(),
                bind(self.io.keys, 2 * n),
                self.output(positions),
                self.buffer(radix),
                self.problem.len,
                n,
                self.kind,
                high_word,
                self.descending,
            );
        }
    }

    /// The outputs from the final positions: keys gathered from the input (64-bit keys as
    /// two 32-bit words), indices converted.
    fn decode(&self, positions: &Handle) {
        let len = self.problem.len;
        gather_rows(
            self.client,
            self.elementwise_units,
            self.address(),
            RowGather {
                values: self.io.keys,
                value_dtype: self.io.key_dtype,
                positions,
                order: None,
                values_out: self.io.keys_out,
                indices_out: self.io.indices_out,
                index_dtype: self.io.index_dtype,
            },
            self.problem.rows,
            len,
            len,
            len,
        );
    }

    /// The LSD passes over the radix words `keys` (mapped to radix keys by `kind` and
    /// `descending`), least significant digit first, over the kind's key bits. The
    /// first pass makes the positions (or reads `first_positions`), the last writes `sink`.
    fn passes(
        &self,
        keys: &Handle,
        kind: KeyKind,
        descending: bool,
        first_positions: Option<&Handle>,
        with_positions: bool,
        sink: Sink<'_>,
    ) -> Result<(), SieveError> {
        let n = self.elements();
        let blueprint = self
            .tuning
            .device_blueprint(self.caps, with_positions, self.onesweep);
        let passes = self.kind.key_bits().div_ceil(blueprint.radix_bits);
        let key_space = [self.client.empty(4 * n), self.client.empty(4 * n)];
        let position_space = if with_positions {
            [self.client.empty(4 * n), self.client.empty(4 * n)]
        } else {
            [self.client.empty(64), self.client.empty(64)]
        };
        let u32_elem = Dtype::U32.elem_type();
        let counting = PassConfig {
            kind,
            descending,
            positions: Positions::None,
            write_keys: false,
            hold_keys: true,
            flags_specials: self.tuning.plain_float_keys && kind == KeyKind::F32,
            plain: false,
        };
        // The first read of the keys learns whether any f32 key is -0.0 or NaN (`keys_plain`).
        let specials = self.client.empty(4);
        if counting.plain_twin().is_some() {
            fill_zero(self.client, &specials, 1, u32_elem);
        }
        let space = if self.onesweep {
            PassSpace::Onesweep(self.onesweep_counts(keys, &specials, counting, passes, blueprint))
        } else {
            let (tiles_per_row, total_tiles) = self.tiles(blueprint);
            let words = total_tiles * blueprint.digits();
            // Rows of few tiles: each scatter cube sums its row's counts itself (no scan).
            let scanned = tiles_per_row > self.tuning.lsd_summed_max_tiles as usize;
            PassSpace::Lsd {
                counts: self.client.empty(4 * words),
                offsets: scanned.then(|| self.client.empty(4 * words)),
            }
        };
        for pass in 0..passes {
            let shift = pass * blueprint.radix_bits;
            let last = pass + 1 == passes;
            let keys_in = if pass == 0 {
                keys
            } else {
                &key_space[(pass as usize - 1) % 2]
            };
            let positions_in = if pass == 0 {
                first_positions
            } else {
                Some(&position_space[(pass as usize - 1) % 2])
            };
            let config = PassConfig {
                kind,
                descending,
                positions: match (with_positions, positions_in) {
                    (false, _) => Positions::None,
                    (true, None) => Positions::FromIndex,
                    (true, Some(_)) => Positions::Carried,
                },
                write_keys: !last || (matches!(sink, Sink::Outputs) && self.io.keys_out.is_some()),
                hold_keys: self.tuning.holds_keys(with_positions, self.onesweep),
                flags_specials: counting.flags_specials,
                plain: false,
            };
            let (keys_out, positions_out, index_elem) = match (last, sink) {
                (true, Sink::Outputs) => (
                    self.io.keys_out,
                    self.io.indices_out.filter(|_| with_positions),
                    self.io.index_dtype.elem_type(),
                ),
                (true, Sink::Positions(h)) => (None, Some(h), u32_elem),
                (false, _) => (
                    Some(&key_space[pass as usize % 2]),
                    Some(&position_space[pass as usize % 2]).filter(|_| with_positions),
                    u32_elem,
                ),
            };
            let pass_io = PassIo {
                keys_in,
                positions_in,
                keys_out,
                positions_out,
                index_elem,
                shift,
                config,
                specials: &specials,
            };
            match &space {
                PassSpace::Onesweep(space) => {
                    self.onesweep_pass(space, pass, passes, &pass_io, blueprint)
                }
                PassSpace::Lsd { counts, offsets } => {
                    self.lsd_pass(counts, offsets.as_ref(), &pass_io, blueprint)?
                }
            }
        }
        Ok(())
    }

    /// One `Lsd` pass: count each tile's digits into `counts`, scan them into `offsets` (where
    /// given; else each scatter cube sums its row's counts), scatter.
    fn lsd_pass(
        &self,
        counts: &Handle,
        offsets: Option<&Handle>,
        p: &PassIo<'_>,
        blueprint: SortBlueprint,
    ) -> Result<(), SieveError> {
        let len = self.problem.len;
        let (tiles_per_row, total_tiles) = self.tiles(blueprint);
        let digits = blueprint.digits();
        let grid = cube_count_1d(self.client, total_tiles);
        let cube_dim = CubeDim::new_1d(blueprint.units);
        // SAFETY: one cube per tile, surplus cubes return; counts hold `digits` values per
        // tile, written once each.
        unsafe {
            histogram_kernel::launch_unchecked(
                self.client,
                grid.clone(),
                cube_dim,
                self.address(),
                self.buffer(p.keys_in),
                bind(counts, total_tiles * digits),
                bind(p.specials, 1),
                len,
                tiles_per_row,
                total_tiles,
                p.shift,
                self.bin_copies(self.tuning.lsd_count_parts, digits),
                // The first pass's counting is the sort's first read of the keys.
                p.shift == 0 && p.config.plain_twin().is_some(),
                self.tuning.count_loads > 1,
                p.config,
                blueprint,
            );
        }
        let (source, offsets) = if let Some(offsets) = offsets {
            scan_with(
                self.client,
                self.caps,
                counts,
                offsets,
                ScanProblem {
                    rows: self.problem.rows,
                    len: digits * tiles_per_row,
                },
                Dtype::U32,
                ScanKind::Exclusive,
                ScanOptions::default(),
            )?;
            (TileOffsets::Scanned, offsets)
        } else {
            (TileOffsets::Summed, counts)
        };
        // SAFETY: as above; each key lands on a distinct slot of its own row (the slots of a
        // row are a permutation of 0..len).
        unsafe {
            scatter_kernel::launch_unchecked(
                self.client,
                grid,
                cube_dim,
                self.address(),
                self.buffer(p.keys_in),
                self.output(p.positions_in),
                self.output(p.keys_out),
                self.output(p.positions_out),
                bind(offsets, total_tiles * digits),
                bind(p.specials, 1),
                len,
                tiles_per_row,
                total_tiles,
                p.shift,
                source,
                p.config,
                blueprint,
                p.index_elem,
            );
        }
        Ok(())
    }

    /// Copies of `bins` shared bins a kernel may keep ([`count_into_copy`]): `asked`, halved
    /// until they fit the device's shared memory beside the counting kernels' one shared word
    /// (the specials flag, `keys_plain`).
    ///
    /// [`count_into_copy`]: crate::radix::digits::count_into_copy
    fn bin_copies(&self, asked: u32, bins: usize) -> u32 {
        let mut parts = asked;
        while parts > 1 && 4 * bins * parts as usize + 4 > self.caps.max_shared_bytes {
            parts /= 2;
        }
        parts
    }

    /// Tiles of `blueprint` a row holds, and in all.
    fn tiles(&self, blueprint: SortBlueprint) -> (usize, usize) {
        let per_row = self.problem.len.div_ceil(blueprint.tile());
        (per_row, self.problem.rows * per_row)
    }

    /// Onesweep's first step, once per sort: every pass's digit counts of every row, from one
    /// read of `keys` (the first pass's input), into a zeroed `[rows, passes, digits]`.
    fn onesweep_counts(
        &self,
        keys: &Handle,
        specials: &Handle,
        config: PassConfig,
        passes: u32,
        blueprint: SortBlueprint,
    ) -> OnesweepSpace {
        let len = self.problem.len;
        let digits = blueprint.digits();
        let counts_len = self.problem.rows * passes as usize * digits;
        let counts = self.client.empty(4 * counts_len);
        fill_zero(self.client, &counts, counts_len, Dtype::U32.elem_type());
        let parts = self.bin_copies(self.tuning.count_parts, passes as usize * digits);
        let chunk_keys = ONESWEEP_COUNT_TILES as usize * blueprint.tile();
        let chunks_per_row = len.div_ceil(chunk_keys);
        let total_chunks = self.problem.rows * chunks_per_row;
        // SAFETY: one cube per chunk of a row, surplus cubes return; every key read is within
        // its row, every count within the row's `passes * digits`.
        unsafe {
            digit_counts_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, total_chunks),
                CubeDim::new_1d(blueprint.units),
                self.address(),
                self.buffer(keys),
                bind(&counts, counts_len),
                bind(specials, 1),
                len,
                chunks_per_row,
                total_chunks,
                passes,
                ONESWEEP_COUNT_TILES,
                parts,
                self.tuning.count_loads,
                config,
                blueprint,
            );
        }
        let status_len = self.tiles(blueprint).1 * digits + 1;
        OnesweepSpace {
            counts,
            counts_len,
            status: self.client.empty(4 * status_len),
            status_len,
        }
    }

    /// One onesweep pass: zero the status words and tile counter, then rank, chain and
    /// scatter in one launch.
    fn onesweep_pass(
        &self,
        space: &OnesweepSpace,
        pass: u32,
        passes: u32,
        p: &PassIo<'_>,
        blueprint: SortBlueprint,
    ) {
        let (tiles_per_row, total_tiles) = self.tiles(blueprint);
        fill_zero(
            self.client,
            &space.status,
            space.status_len,
            Dtype::U32.elem_type(),
        );
        // SAFETY: one cube per tile (numbered by the counter past the status words; surplus
        // cubes return); each key lands on a distinct slot of its own row; status words are
        // `tiles * digits` plus the counter.
        unsafe {
            onesweep_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, total_tiles),
                CubeDim::new_1d(blueprint.units),
                self.address(),
                self.buffer(p.keys_in),
                self.output(p.positions_in),
                self.output(p.keys_out),
                self.output(p.positions_out),
                bind(&space.counts, space.counts_len),
                bind(&space.status, space.status_len),
                bind(p.specials, 1),
                self.problem.len,
                tiles_per_row,
                total_tiles,
                p.shift,
                pass,
                passes,
                p.config,
                blueprint,
                self.tuning.walk_window.max(1),
                p.index_elem,
            );
        }
    }
}

/// Tiles of keys one cube of onesweep's counting step reads (its global adds are per chunk:
/// fewer, larger chunks add less).
const ONESWEEP_COUNT_TILES: u32 = 32;

/// What one digit pass reads and writes.
struct PassIo<'a> {
    keys_in: &'a Handle,
    positions_in: Option<&'a Handle>,
    /// `None`: not written (a placeholder is bound).
    keys_out: Option<&'a Handle>,
    positions_out: Option<&'a Handle>,
    index_elem: ElemType,
    shift: u32,
    config: PassConfig,
    /// The sort's specials word (`keys_plain`): zeroed, then set by its first read of the keys.
    specials: &'a Handle,
}

/// The workspace of a sort's digit passes, made once for all of them.
enum PassSpace {
    /// The `Lsd` passes' per-tile digit counts and their scan (none where the scatter sums
    /// the counts: [`TileOffsets::Summed`]).
    Lsd {
        counts: Handle,
        offsets: Option<Handle>,
    },
    Onesweep(OnesweepSpace),
}

/// The onesweep passes' digit counts (every pass's, made once) and status words (zeroed
/// before each pass).
struct OnesweepSpace {
    counts: Handle,
    counts_len: usize,
    status: Handle,
    status_len: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Auto`'s choice between the device-wide strategies follows the H200's measurements
    /// (`onesweep_wins`).
    #[test]
    fn auto_takes_onesweep_where_it_measured_faster() {
        let f32_keys = KeyKind::of(Dtype::F32);
        let wins =
            |rows, len, keys_only| onesweep_wins(SortProblem { rows, len }, f32_keys, keys_only);
        assert!(wins(1, 1 << 28, true));
        assert!(!wins(1, 1 << 24, true));
        // With positions: a row of 2^26 keys or more, or many rows (`21-d`, `14-b`); not a few
        // shorter rows.
        assert!(wins(1, 1 << 28, false));
        assert!(wins(1, 1 << 26, false));
        assert!(!wins(1, 1 << 24, false));
        assert!(wins(4096, 32768, false));
        assert!(!wins(64, 128256, false));
        assert!(!wins(64, 1 << 20, false));
        assert!(!onesweep_wins(
            SortProblem {
                rows: 1,
                len: 1 << 28
            },
            KeyKind::of(Dtype::F64),
            true
        ));
    }
}
