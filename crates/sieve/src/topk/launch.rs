//! Host side of the top-k: validation, strategy choice, workspaces and the pass sequences.

use cubecl::ir::{ElemType, UIntKind};
use cubecl::prelude::*;
use cubecl::server::Handle;

use super::kernels::{
    candidate_positions_kernel, gather_count_kernel, gather_scatter_kernel, init_state_kernel,
    merge_finish_kernel, radix_digit_kernel, radix_histogram_kernel, rank_kernel,
    row_select_kernel, sample_check_kernel, sample_kernel,
};
use super::tile::{ChunkGrid, ChunkGridLaunch, MAX_CHUNK_TILES, ROW_STATE_WORDS};
use super::{
    MAX_SAMPLE_TILES, RANK_AUTO_LEN, TopkIo, TopkOptions, TopkProblem, TopkReport, TopkStrategy,
    TopkTuning, row_shared_bytes, tile_shared_bytes,
};
use crate::common::address::{
    AddressType, address_type, check_extent, check_index_capacity, check_index_dtype,
};
use crate::common::buffers::BufferRules;
use crate::common::buffers::{bind, bind_optional};
use crate::common::fill::{fill, fill_zero_three};
use crate::common::gather::{RowGather, gather_rows, moved_as};
use crate::common::grid::cube_count_1d;
use crate::radix::digits::{SELECT_BITS, SELECT_DIGITS, select_bins, wide_select_digits};
use crate::radix::keys::KeyKind;
use crate::radix::tile::{KeyRead, RadixBlueprint};
use crate::scan::launch::{scan_with, vector_size_for};
use crate::scan::{ScanKind, ScanOptions, ScanProblem};
use crate::sort::launch::{sort_keyed, sort_with};
use crate::sort::{SortIo, SortOptions, SortOrder, SortProblem, SortTuning};
use crate::{DeviceCaps, Dtype, SieveError};

/// Units of the per-row and elementwise kernels (fewer where a cube may not have them).
const ELEMENTWISE_UNITS: u32 = 256;

/// The top-k (or bottom-k) of every row of a `[rows, len]` problem (see the module docs).
/// Returns the strategy that ran and how many counting passes its boundary search took.
///
/// Errors before anything launches: an unsupported value or index dtype, `k` outside
/// `0..=len`, a row too long for 32-bit positions or the index dtype, a forced
/// `RankByCounting` on rows that do not fit one cube, a tuning that does not fit the
/// device, or (checked last) a buffer smaller than the problem or a view off the device's
/// binding alignment.
pub fn topk(
    client: &Client,
    io: TopkIo<'_>,
    problem: TopkProblem,
    options: TopkOptions,
) -> Result<TopkReport, SieveError> {
    topk_keyed(client, io, problem, options, KeyKind::of(io.value_dtype))
}

/// [`topk`] ranking the values as `kind`: f32 values as [`KeyKind::F32Logits`] for sampling
/// (else `kind` is the values' own).
pub(crate) fn topk_keyed(
    client: &Client,
    io: TopkIo<'_>,
    problem: TopkProblem,
    options: TopkOptions,
    kind: KeyKind,
) -> Result<TopkReport, SieveError> {
    with_run(client, io, problem, options, kind, |run, strategy| {
        let mut report = TopkReport {
            strategy,
            counting_passes: 0,
            sampled_bound: false,
        };
        let Some(run) = run else {
            return Ok(report);
        };
        match strategy {
            TopkStrategy::RankByCounting => run.rank_by_counting(),
            // (`k == len` takes every key: the device-wide path, which then counts nothing.)
            TopkStrategy::RadixSelect if run.row_cube() => {
                report.counting_passes = run.row_select()?;
            }
            TopkStrategy::RadixSelect => {
                let state = run.init_state();
                let gather = run.gather_workspace();
                if let Some(plan) = gather.sample {
                    run.sampled_bound(&state, &gather, plan)?;
                    report.sampled_bound = true;
                }
                report.counting_passes = run.radix_select(&state);
                run.gather_and_finish(&state, &gather)?;
            }
            TopkStrategy::SortAndSlice => run.sort_and_slice()?,
            TopkStrategy::Auto => unreachable!("resolved above"),
        }
        Ok(report)
    })
}

/// Each row's top-k candidates, unordered, as the one-cube-per-row select leaves them before
/// its merge (or its second select): `chunks` chunks of `chunk_len` keys a row, each with its
/// `k` chosen radix keys (`keys`, `[rows, chunks * k]`) and their positions within the chunk
/// (`positions`), so candidate `c` of a row sits at `(c / k) * chunk_len + positions[c]`, and
/// the row's top-k are the `k` smallest (radix key, position in the row) among its candidates.
pub(crate) struct RowCandidates {
    pub keys: Handle,
    pub positions: Handle,
    pub chunks: usize,
    pub chunk_len: usize,
}

/// [`topk_keyed`]'s candidates for a caller that merges them itself (the sampling draw): run
/// where `Auto` picks the one-cube-per-row select and a row's candidates number at most
/// `max_per_row`; `None` (nothing launched) otherwise. `rows` and `k` must not be 0.
pub(crate) fn row_candidates(
    client: &Client,
    values: &Handle,
    value_dtype: Dtype,
    problem: TopkProblem,
    kind: KeyKind,
    max_per_row: usize,
) -> Result<Option<RowCandidates>, SieveError> {
    let io = TopkIo {
        values,
        value_dtype,
        values_out: None,
        indices_out: None,
        index_dtype: Dtype::U32,
    };
    with_run(
        client,
        io,
        problem,
        TopkOptions::default(),
        kind,
        |run, strategy| {
            let Some(run) =
                run.filter(|run| strategy == TopkStrategy::RadixSelect && run.row_cube())
            else {
                return Ok(None);
            };
            let (chunks, chunk_len) = run.row_chunks();
            if chunks * problem.k > max_per_row {
                return Ok(None);
            }
            Ok(Some(run.launch_row_select(chunks, chunk_len)))
        },
    )
}

/// Validates a top-k, resolves its strategy and hands `body` the run (`None` where nothing
/// is to be done: no rows or `k = 0`), after every check and before anything launches.
fn with_run<R>(
    client: &Client,
    io: TopkIo<'_>,
    problem: TopkProblem,
    options: TopkOptions,
    kind: KeyKind,
    body: impl FnOnce(Option<&Run<'_>>, TopkStrategy) -> Result<R, SieveError>,
) -> Result<R, SieveError> {
    debug_assert!(kind == KeyKind::of(io.value_dtype) || io.value_dtype == Dtype::F32);
    let caps = DeviceCaps::of(client);
    validate(&caps, &io, problem)?;
    let tuning = options
        .tuning
        .unwrap_or_else(|| TopkTuning::for_device(&caps));
    check_tuning(&caps, &tuning)?;
    let strategy = resolve_strategy(&caps, &tuning, problem, kind, options.strategy)?;
    if problem.rows == 0 || problem.k == 0 {
        return body(None, strategy);
    }
    let run = Run {
        client,
        io,
        problem,
        read: KeyRead {
            kind,
            largest: options.largest,
        },
        sorted: options.sorted,
        tuning,
        elementwise_units: caps.cube_units(ELEMENTWISE_UNITS),
        caps: &caps,
    };
    check_extent(client, &caps, "problem.rows * problem.len", run.extent())?;
    check_buffers(client, &io, problem)?;
    body(Some(&run), strategy)
}

fn validate(caps: &DeviceCaps, io: &TopkIo<'_>, problem: TopkProblem) -> Result<(), SieveError> {
    // 64-bit values are read and moved as pairs of 32-bit words (by the sort and `finish`).
    if crate::sort::key_needs_device_dtype(io.value_dtype) {
        caps.check_dtype(io.value_dtype)?;
    }
    check_index_dtype("io.index_dtype", io.index_dtype)?;
    if problem.k > problem.len {
        return Err(SieveError::invalid(
            "problem.k",
            problem.k,
            format!("0..={} (at most the row length, problem.len)", problem.len),
        ));
    }
    // Positions and the row state's source length are 32-bit words.
    check_index_capacity("io.index_dtype", io.index_dtype, problem.len)?;
    let len_max = u32::MAX as usize - 1;
    if problem.len > len_max {
        return Err(SieveError::invalid(
            "problem.len",
            problem.len,
            format!(
                "at most {len_max} (positions are 32-bit; {} indices)",
                io.index_dtype
            ),
        ));
    }
    if problem.rows.checked_mul(problem.len).is_none() {
        return Err(SieveError::invalid(
            "problem.rows * problem.len",
            format!("{} * {}", problem.rows, problem.len),
            "a product that fits in usize",
        ));
    }
    caps.check_dtype(io.index_dtype)?;
    Ok(())
}

/// Every caller buffer holds what the call touches: the `[rows, len]` input, `[rows, k]`
/// outputs (checked last, before anything launches; `rows * len` is validated).
fn check_buffers(client: &Client, io: &TopkIo<'_>, problem: TopkProblem) -> Result<(), SieveError> {
    let rules = BufferRules::of(client);
    let (inputs, outputs) = (problem.rows * problem.len, problem.rows * problem.k);
    rules.check_dtype("io.values", io.values, inputs, io.value_dtype)?;
    rules.check_optional("io.values_out", io.values_out, outputs, io.value_dtype)?;
    rules.check_optional("io.indices_out", io.indices_out, outputs, io.index_dtype)
}

fn check_tuning(caps: &DeviceCaps, tuning: &TopkTuning) -> Result<(), SieveError> {
    caps.check_units_per_cube(tuning.units_per_cube)?;
    // Tiles hold their radix keys in shared memory, beside the digit bins and the scan spine;
    // per-tile counts are packed in 16 bits.
    let tile_bytes = tile_shared_bytes(tuning.units_per_cube, tuning.elements_per_unit);
    if !(1..=32).contains(&tuning.elements_per_unit)
        || tuning.tile() >= 1 << 16
        || tile_bytes > caps.max_shared_bytes
    {
        return Err(SieveError::invalid(
            "tuning.elements_per_unit",
            tuning.elements_per_unit,
            format!(
                "1..=32 (one bit each in a 32-bit mask), with a tile below 65,536 keys whose \
                 keys ({tile_bytes} bytes with the bins and the spine) fit the device's {} \
                 bytes of shared memory",
                caps.max_shared_bytes
            ),
        ));
    }
    caps.check_units("tuning.row_units_per_cube", tuning.row_units_per_cube)?;
    if !(1..=32).contains(&tuning.row_elements_per_unit) {
        return Err(SieveError::invalid(
            "tuning.row_elements_per_unit",
            tuning.row_elements_per_unit,
            "1..=32 (one bit each in a 32-bit mask)",
        ));
    }
    let row_tile = tuning.row_units_per_cube as usize * tuning.row_elements_per_unit as usize;
    let row_bytes = row_shared_bytes(tuning.row_units_per_cube, tuning.row_elements_per_unit);
    if row_tile >= 1 << 16 || row_bytes > caps.max_shared_bytes {
        return Err(SieveError::invalid(
            "tuning.row_units_per_cube",
            tuning.row_units_per_cube,
            format!(
                "a row-select tile ({} keys per unit) below 65,536 keys whose keys ({row_bytes} \
                 bytes with the bins, the spines and the bound's candidates) fit the device's {} \
                 bytes of shared memory",
                tuning.row_elements_per_unit, caps.max_shared_bytes
            ),
        ));
    }
    if tuning.sample_tiles > MAX_SAMPLE_TILES {
        return Err(SieveError::invalid(
            "tuning.sample_tiles",
            tuning.sample_tiles,
            format!("0..={MAX_SAMPLE_TILES} (0: no sampled bound)"),
        ));
    }
    if !(1..=MAX_CHUNK_TILES).contains(&(tuning.min_tiles_per_cube as usize)) {
        return Err(SieveError::invalid(
            "tuning.min_tiles_per_cube",
            tuning.min_tiles_per_cube,
            format!("1..={MAX_CHUNK_TILES} (a cube counts at most that many tiles of a chunk)"),
        ));
    }
    if tuning.target_cubes == 0 {
        return Err(SieveError::invalid(
            "tuning.target_cubes",
            tuning.target_cubes,
            "at least 1",
        ));
    }
    caps.check_planes(tuning.use_planes)
}

/// `Auto`'s choice, or the strategy asked for if it serves the problem.
///
/// 64-bit values go to `SortAndSlice`: the other strategies rank and select 32-bit radix
/// keys (shared-memory keys, per-row state, candidate buffers, 8-bit digits of one word),
/// and the sort already ranks 64-bit keys as two radix words. A 64-bit radix select would
/// double every one of those buffers for the one dtype family; the sort reads the row 8
/// times against the select's 2 to 4 reads plus gather, so it is the slower path for
/// long rows with small `k`, and the only one that serves these dtypes.
fn resolve_strategy(
    caps: &DeviceCaps,
    tuning: &TopkTuning,
    problem: TopkProblem,
    kind: KeyKind,
    asked: TopkStrategy,
) -> Result<TopkStrategy, SieveError> {
    let rank_capacity = tuning.rank_capacity(caps);
    Ok(match asked {
        TopkStrategy::Auto if kind.wide() => TopkStrategy::SortAndSlice,
        TopkStrategy::RankByCounting | TopkStrategy::RadixSelect if kind.wide() => {
            return Err(SieveError::invalid(
                "options.strategy",
                format!("{} with 64-bit values", asked.name()),
                "sort_and_slice or auto for 64-bit values (the other strategies select 32-bit \
                 radix keys)",
            ));
        }
        TopkStrategy::Auto => {
            let sort_capacity = SortTuning::for_device(caps).in_cube_capacity(caps);
            if problem.len <= RANK_AUTO_LEN.min(rank_capacity) {
                TopkStrategy::RankByCounting
            } else if problem.len <= sort_capacity || 2 * problem.k > problem.len {
                TopkStrategy::SortAndSlice
            } else {
                TopkStrategy::RadixSelect
            }
        }
        TopkStrategy::RankByCounting if problem.len > rank_capacity => {
            return Err(SieveError::invalid(
                "problem.len",
                problem.len,
                format!(
                    "at most {rank_capacity} for rank_by_counting on this device ({})",
                    caps.describe_limits()
                ),
            ));
        }
        other => other,
    })
}

impl ChunkGrid {
    fn cube_count(&self, client: &Client) -> CubeCount {
        cube_count_1d(client, self.total_cubes)
    }

    fn arg(&self) -> ChunkGridLaunch {
        ChunkGridLaunch::new(
            self.len,
            self.tiles_per_row,
            self.cubes_per_row,
            self.tiles_per_cube,
            self.total_cubes,
        )
    }
}

/// [`Run::chunk_bounds`]: whether the row cube's chunks try the minima bound, else each
/// chunk's sample rank for the sampled bound (full chunks, the last chunk).
struct ChunkBounds {
    minima: bool,
    sample_ranks: Option<(u32, u32)>,
}

impl ChunkBounds {
    fn bounded(&self) -> bool {
        self.minima || self.sample_ranks.is_some()
    }
}

/// The sampled bound of a device-wide select ([`Run::sample_plan`]): `tiles` tiles of the
/// passes' shape sampled from each row, every `stride`-th, the sample's `rank`-th smallest key
/// the bound, and the gather's capacity per row under it.
#[derive(Clone, Copy, Debug)]
struct SamplePlan {
    tiles: usize,
    stride: usize,
    rank: usize,
    cap: usize,
}

/// The sampled bound's odds, for the `k` smallest of `len` keys in random order and a sample
/// of `sample` of them: the sample's rank `mu + 4 sqrt(mu) + 8` (`mu = k * sample / len`, its
/// expected share of the `k` smallest), whose key at least `k` keys reach, and the capacity
/// (`(rank + 4 sqrt(rank) + 8) * len / sample`, at least `k`) that bounds the keys under it,
/// both but for odds below 1e-9.
fn sample_odds(k: usize, sample: usize, len: usize) -> (usize, usize) {
    let scale = len as f64 / sample as f64;
    let mu = k as f64 / scale;
    let rank = (mu + 4.0 * mu.sqrt() + 8.0).ceil();
    let cap = (((rank + 4.0 * rank.sqrt() + 8.0) * scale).ceil() as usize).max(k);
    (rank as usize, cap)
}

/// Rows of at most this many gathered candidates (under a sampled bound) take their first `k`
/// by one cube's select; more are sorted whole.
const SELECT_CANDIDATES_MAX: usize = 1 << 15;

/// The sampled bound samples at most one tile in this many: its select (digit passes over the
/// sample) then costs at most a sixteenth of the passes it saves.
const MIN_SAMPLE_STRIDE: usize = 16;

/// The device-wide gather's workspaces: per-tile counts and their offsets (`[rows, 2 *
/// tiles_per_row]`), and the chosen radix keys and positions, `per_row` slots a row (`k`, or
/// the sampled bound's capacity, padded with the largest radix key).
struct Gather {
    sample: Option<SamplePlan>,
    per_row: usize,
    /// Tiles of a row (the passes' chunking); the counts hold two words a tile.
    tiles_per_row: usize,
    tile_counts: Handle,
    tile_offsets: Handle,
    cand_keys: Handle,
    cand_positions: Handle,
}

struct Run<'a> {
    client: &'a Client,
    io: TopkIo<'a>,
    problem: TopkProblem,
    read: KeyRead,
    sorted: bool,
    tuning: TopkTuning,
    /// Units of the per-row and elementwise kernels on this device.
    elementwise_units: u32,
    /// Read once by [`topk`], handed to the rank cube and the nested sorts and scans.
    caps: &'a DeviceCaps,
}

impl Run<'_> {
    fn elements(&self) -> usize {
        self.problem.rows * self.problem.len
    }

    /// The most elements any buffer of this top-k binds: the input (64-bit values as two
    /// words each), or a per-row workspace (digit histograms, search state, per-chunk
    /// counts) when rows are short.
    fn extent(&self) -> usize {
        let words = if self.read.kind.wide() { 2 } else { 1 };
        let per_row = select_bins(&self.select_digits())
            .max(ROW_STATE_WORDS)
            .max(2 * self.chunks().tiles_per_row);
        (self.problem.rows.saturating_mul(self.problem.len))
            .saturating_mul(words)
            .max(self.problem.rows.saturating_mul(per_row))
    }

    /// The address type of every launch of this top-k, from [`Run::extent`].
    fn address(&self) -> AddressType {
        address_type(&[self.extent()])
    }

    fn outputs(&self) -> usize {
        self.problem.rows * self.problem.k
    }

    /// A `u32` workspace of `len` elements (never empty).
    fn workspace(&self, len: usize) -> Handle {
        self.client.empty(4 * len.max(1))
    }

    /// Every buffer handed to a kernel holds at least `len` elements (the caller's `[rows,
    /// len]` input and `[rows, k]` outputs, workspaces sized here), and every access is
    /// bounded by the problem's shape.
    fn buffer(&self, handle: &Handle, len: usize) -> BufferArg {
        bind(handle, len)
    }

    /// An output the caller asked for, or a placeholder binding the kernel does not write.
    fn output(&self, handle: Option<&Handle>) -> BufferArg {
        bind_optional(self.client, handle, self.outputs())
    }

    /// A run of this top-k's tuning over `keys`, `[rows, len]` radix keys (a sample, or
    /// gathered candidates), taking `k` of each row.
    fn over_radix_keys<'b>(&'b self, keys: &'b Handle, len: usize, k: usize) -> Run<'b> {
        Run {
            client: self.client,
            io: TopkIo {
                values: keys,
                value_dtype: Dtype::U32,
                values_out: None,
                indices_out: None,
                index_dtype: Dtype::U32,
            },
            problem: TopkProblem {
                rows: self.problem.rows,
                len,
                k,
            },
            read: KeyRead::RADIX,
            sorted: self.sorted,
            tuning: self.tuning,
            elementwise_units: self.elementwise_units,
            caps: self.caps,
        }
    }

    fn input(&self) -> BufferArg {
        self.buffer(self.io.values, self.elements())
    }

    fn dtypes(&self) -> [ElemType; 2] {
        [
            self.io.value_dtype.elem_type(),
            self.io.index_dtype.elem_type(),
        ]
    }

    fn blueprint(&self) -> RadixBlueprint {
        RadixBlueprint {
            units: self.tuning.units_per_cube,
            elements_per_unit: self.tuning.elements_per_unit,
            use_planes: self.tuning.use_planes,
        }
    }

    /// How a pass over the input splits into cubes: every row's tiles in chunks of
    /// consecutive tiles, about `tuning.target_cubes` cubes in all (at least one per row),
    /// each of at least `tuning.min_tiles_per_cube` tiles where the row has them and at most
    /// [`MAX_CHUNK_TILES`].
    fn chunks(&self) -> ChunkGrid {
        let rows = self.problem.rows;
        let tiles_per_row = self.problem.len.div_ceil(self.blueprint().tile()).max(1);
        let wanted = (self.tuning.target_cubes as usize).div_ceil(rows).max(1);
        let tiles_per_cube = tiles_per_row
            .div_ceil(wanted.min(tiles_per_row))
            .clamp(self.tuning.min_tiles_per_cube as usize, MAX_CHUNK_TILES)
            .min(tiles_per_row);
        let cubes_per_row = tiles_per_row.div_ceil(tiles_per_cube);
        ChunkGrid {
            len: self.problem.len,
            tiles_per_row,
            cubes_per_row,
            tiles_per_cube,
            total_cubes: rows * cubes_per_row,
        }
    }

    /// The grid of an elementwise kernel over `n` elements (one unit each).
    fn elementwise_grid(&self, n: usize) -> CubeCount {
        cube_count_1d(self.client, n.div_ceil(self.elementwise_units as usize))
    }

    fn per_row_grid(&self) -> CubeCount {
        self.elementwise_grid(self.problem.rows)
    }

    /// One cube per row, units and keys per unit sized to the row (powers of two).
    fn rank_by_counting(&self) {
        let len = self.problem.len;
        let min_units = self.caps.plane_size_max.max(1);
        let units = (len.div_ceil(8).next_power_of_two() as u32)
            .clamp(min_units, self.caps.max_cube_units());
        let elements_per_unit = (len.div_ceil(units as usize).next_power_of_two() as u32).max(1);
        let blueprint = RadixBlueprint {
            units,
            elements_per_unit,
            ..self.blueprint()
        };
        // SAFETY: one cube per row, surplus cubes return; reads stay within the row, each
        // output slot below `k` is written by the one element of that rank.
        unsafe {
            rank_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, self.problem.rows),
                CubeDim::new_1d(units),
                self.address(),
                self.input(),
                self.output(self.io.values_out),
                self.output(self.io.indices_out),
                len,
                self.problem.k,
                self.problem.rows,
                self.problem.k <= self.tuning.bound_max_k(units) as usize,
                self.read,
                self.io.values_out.is_some(),
                self.io.indices_out.is_some(),
                blueprint,
                self.dtypes(),
            );
        }
    }

    /// Every row's [`RowState`](super::tile::RowState), initialised.
    fn init_state(&self) -> Handle {
        let rows = self.problem.rows;
        let state = self.workspace(rows * ROW_STATE_WORDS);
        // SAFETY: one unit per row, bounds-checked.
        unsafe {
            init_state_kernel::launch_unchecked(
                self.client,
                self.per_row_grid(),
                CubeDim::new_1d(self.elementwise_units),
                self.address(),
                self.buffer(&state, rows * ROW_STATE_WORDS),
                rows,
                self.problem.len as u32,
                self.problem.k as u32,
            );
        }
        state
    }

    /// The device-wide select's digits ([`wide_select_digits`]).
    fn select_digits(&self) -> Vec<(u32, u32)> {
        wide_select_digits(self.read.kind.key_bits(), self.problem.len)
    }

    /// The boundary of every row by MSB-first digit passes over the key's bits
    /// ([`wide_select_digits`]: 11, 11 and 10 bits for 32-bit keys in rows of 2^16 keys or
    /// more, else 8-bit digits; the bits above are zero in every radix key): a histogram of
    /// the matching keys, then the digit choice; candidates compacted between passes. Returns
    /// the number of digit passes.
    fn radix_select(&self, state: &Handle) -> u32 {
        let rows = self.problem.rows;
        if self.problem.k == self.problem.len {
            // Every key is taken: `init_state` set the boundary to the largest radix key.
            return 0;
        }
        let n = self.elements();
        let blueprint = self.blueprint();
        let chunks = self.chunks();
        let digits = self.select_digits();
        let passes = digits.len() as u32;
        let row_bins = select_bins(&digits);
        let histograms = self.workspace(rows * row_bins);
        let appended = self.workspace(rows);
        // Each row's key range as `[!min, max]` (see `radix_histogram_kernel`).
        let ranges = self.workspace(rows * 2);
        fill_zero_three(
            self.client,
            [
                (&histograms, rows * row_bins),
                (&appended, rows),
                (&ranges, rows * 2),
            ],
        );
        // Candidate buffers: written only by passes 1 and 2, and only for rows whose
        // candidates shrink; buffer B only where a pass 2 appends (four or more passes: with
        // three, pass 2 is the last and appends nothing).
        let cand_a = self.workspace(n);
        let cand_b_len = if passes > 3 { n } else { 1 };
        let cand_b = self.workspace(cand_b_len);
        // A run of bins per unit (one per unit for 8-bit digits where a cube has 256 units).
        let digit_units = self.caps.cube_units(SELECT_DIGITS as u32);
        for (pass, &(shift, digit_bits)) in (0u32..).zip(&digits) {
            // SAFETY: `cubes_per_row` cubes per row take the tiles of the row's source in
            // turn, surplus cubes return, keys past a row's source are not read; appends stay
            // within the row's `len` slots (a source never holds more than its row).
            unsafe {
                radix_histogram_kernel::launch_unchecked(
                    self.client,
                    chunks.cube_count(self.client),
                    CubeDim::new_1d(blueprint.units),
                    self.address(),
                    self.input(),
                    self.buffer(&cand_a, n),
                    self.buffer(&cand_b, cand_b_len),
                    self.buffer(state, rows * ROW_STATE_WORDS),
                    self.buffer(&histograms, rows * row_bins),
                    self.buffer(&appended, rows),
                    self.buffer(&ranges, rows * 2),
                    chunks.arg(),
                    row_bins,
                    shift,
                    digit_bits,
                    pass == 0,
                    self.read,
                    blueprint,
                    self.io.value_dtype.elem_type(),
                );
            }
            // SAFETY: one cube per row, each unit a run of bins.
            unsafe {
                radix_digit_kernel::launch_unchecked(
                    self.client,
                    cube_count_1d(self.client, rows),
                    CubeDim::new_1d(digit_units),
                    self.address(),
                    self.buffer(state, rows * ROW_STATE_WORDS),
                    self.buffer(&histograms, rows * row_bins),
                    self.buffer(&appended, rows),
                    self.buffer(&ranges, rows * 2),
                    rows,
                    row_bins,
                    shift,
                    digit_bits,
                    // The next pass appends only when a pass follows it to read them.
                    pass + 1 < passes - 1,
                    digit_units,
                    self.tuning.use_planes,
                );
            }
        }
        passes
    }

    /// How many chunks the one-cube-per-row select cuts each row into, and their length (the
    /// last may be shorter): as many as keep `rows * chunks` within
    /// [`TopkTuning::row_split_cubes`] (for rows past [`TopkTuning::row_cube_max_len`], as
    /// many as bring them within it where [`TopkTuning::row_long_split_cubes`] allows and
    /// their candidates fill at most half of it) and chunks of at least
    /// [`TopkTuning::row_chunk_min_len`], with every chunk longer than `k` and at most
    /// `chunks * k` candidates a row within one cube of the in-cube sort (so each chunk's
    /// candidates sort in one cube, and the merge's searches stay few), or for rows past
    /// [`TopkTuning::row_cube_max_len`] within a row of the row cube (which selects again
    /// over them).
    fn row_chunks(&self) -> (usize, usize) {
        let TopkProblem { rows, len, k } = self.problem;
        let candidates = if len > self.tuning.row_cube_max_len {
            self.tuning.row_cube_max_len
        } else {
            SortTuning::for_device(self.caps).in_cube_capacity(self.caps)
        };
        let mut wanted = (self.tuning.row_split_cubes as usize / rows.max(1))
            .min(len / self.tuning.row_chunk_min_len.max(1))
            .min(candidates / k.max(1))
            .max(1);
        let max_len = self.tuning.row_cube_max_len;
        if len > max_len && max_len > 0 {
            // As many chunks as bring the row within the row cube, where the long-row budget
            // has the cubes and their candidates fill at most half a row cube (the second
            // select over a full one lost through Vulkan: [2^26] k = 256, `h100/35-fin`).
            let fitting = len.div_ceil(max_len);
            if fitting > wanted
                && rows.saturating_mul(fitting) <= self.tuning.row_long_split_cubes as usize
                && fitting.saturating_mul(k) <= max_len / 2
            {
                wanted = fitting;
            }
        }
        loop {
            // Chunks of `chunk_len` keys, the last one shorter but not empty.
            let chunk_len = len.div_ceil(wanted);
            let chunks = len.div_ceil(chunk_len);
            if chunks == 1 || len - (chunks - 1) * chunk_len > k {
                return (chunks, chunk_len);
            }
            wanted -= 1;
        }
    }

    /// Radix select with one cube per row ([`row_select_kernel`]: every digit pass and the
    /// gather in one launch), then the outputs as [`Run::gather_and_finish`] writes them.
    /// A few rows are cut into chunks ([`Run::row_chunks`]), each chunk's top-k selected by
    /// its own cube: a row's top-k is then the merge of its chunks' candidates sorted by (key,
    /// index) ([`Run::merge_and_finish`]), or for rows past the row cube's limit cut into
    /// more than [`TopkTuning::row_merge_max_chunks`] chunks the row cube again over them
    /// ([`Run::select_candidates_and_finish`]). Returns the number of digit passes.
    fn row_select(&self) -> Result<u32, SieveError> {
        let (chunks, chunk_len) = self.row_chunks();
        let candidates = self.launch_row_select(chunks, chunk_len);
        if self.problem.len > self.tuning.row_cube_max_len
            && chunks > self.tuning.row_merge_max_chunks
        {
            self.select_candidates_and_finish(&candidates)?;
        } else if chunks > 1 {
            self.merge_and_finish(&candidates)?;
        } else {
            self.order_and_finish(
                &candidates.keys,
                &candidates.positions,
                self.problem.k,
                false,
            )?;
        }
        Ok(self.read.kind.key_bits() / SELECT_BITS)
    }

    /// The outputs of rows cut into `chunks` chunks of `chunk_len` keys from their `k`
    /// candidates a chunk ([`Run::launch_row_select`]'s): every chunk's candidates sorted by
    /// (key, column) as a row of their own (their equal keys come in index order, so this is
    /// (key, index)), then [`merge_finish_kernel`] merges a row's chunks, ties in chunk order,
    /// which is row order. Sorting `k` keys a cube, not `chunks * k`, keeps every
    /// multiprocessor busy where few rows are cut.
    fn merge_and_finish(&self, cands: &RowCandidates) -> Result<(), SieveError> {
        let TopkProblem { rows, k, .. } = self.problem;
        let RowCandidates {
            chunks, chunk_len, ..
        } = *cands;
        let candidates = rows * chunks * k;
        let sorted_keys = self.workspace(candidates);
        let order = self.sort_radix_rows(&cands.keys, Some(&sorted_keys), rows * chunks, k)?;
        let (words, value_elem) = moved_as(self.io.value_dtype);
        // SAFETY: one unit per candidate, bounds-checked; columns are below `k` and positions
        // within the chunk; each output below `k` a row has one writer (the merge's ranks of
        // a row's candidates are distinct), the others write nothing.
        unsafe {
            merge_finish_kernel::launch_unchecked(
                self.client,
                self.elementwise_grid(candidates),
                CubeDim::new_1d(self.elementwise_units),
                self.address(),
                self.buffer(self.io.values, words as usize * self.elements()),
                self.buffer(&cands.positions, candidates),
                self.buffer(&sorted_keys, candidates),
                self.buffer(&order, candidates),
                bind_optional(
                    self.client,
                    self.io.values_out,
                    words as usize * self.outputs(),
                ),
                self.output(self.io.indices_out),
                self.problem.len,
                k,
                chunks,
                chunk_len,
                candidates,
                words,
                self.io.values_out.is_some(),
                self.io.indices_out.is_some(),
                [value_elem, self.io.index_dtype.elem_type()],
            );
        }
        Ok(())
    }

    /// The outputs of a row past the row cube's limit, cut into many chunks: its top-k among the
    /// chunks' candidates by the one-cube-per-row select over them (a row of at most
    /// `row_cube_max_len` radix keys, cut and merged in turn), equal keys by slot, which is
    /// index order (a chunk's candidates equal to a key come in index order, and the chunks
    /// follow the row); then each chosen slot's position in the row, and the outputs. Faster
    /// than the merge where rows have many chunks (the merge's searches grow with `chunks^2 *
    /// k`), and than the device-wide passes at `k` up to 1000.
    fn select_candidates_and_finish(&self, cands: &RowCandidates) -> Result<(), SieveError> {
        let TopkProblem { rows, k, .. } = self.problem;
        let RowCandidates {
            chunks, chunk_len, ..
        } = *cands;
        let per_row = chunks * k;
        // `row_cube` and `row_chunks` promise this: a second row within the limit, so the
        // nested select below cannot come back here.
        debug_assert!(chunks > 1 && per_row <= self.tuning.row_cube_max_len);
        let slots = self.workspace(rows * k);
        let mut inner = self.over_radix_keys(&cands.keys, per_row, k);
        inner.io.indices_out = Some(&slots);
        inner.sorted = true;
        // A row within the row cube's limit: its own chunks, if any, merge.
        inner.row_select()?;
        let positions = self.workspace(rows * k);
        // SAFETY: one unit per output, bounds-checked; slots lie below `per_row` and positions
        // within their chunk.
        unsafe {
            candidate_positions_kernel::launch_unchecked(
                self.client,
                self.elementwise_grid(rows * k),
                CubeDim::new_1d(self.elementwise_units),
                self.address(),
                self.buffer(&slots, rows * k),
                self.buffer(&cands.positions, rows * per_row),
                self.buffer(&positions, rows * k),
                k,
                per_row,
                chunk_len,
                rows * k,
            );
        }
        self.finish(&positions, k, None);
        Ok(())
    }

    /// Radix select picks the one-cube-per-row path where `k < len` (`k == len` takes every
    /// key) for rows up to [`TopkTuning::row_cube_max_len`], and for longer rows that
    /// [`Run::row_chunks`] cuts into chunks no longer than that with at most as many
    /// candidates (a few long rows with a `k` up to ~1000 at 2^24 keys: two row-cube launches,
    /// a sort of the `k` chosen and the gathers, where the device-wide passes take ten or more
    /// and their own gather and sort), where each chunk has a bound to try
    /// ([`Run::chunk_bounds`]; unless [`TopkTuning::row_long_unbounded`]).
    fn row_cube(&self) -> bool {
        let TopkProblem { len, k, .. } = self.problem;
        let max_len = self.tuning.row_cube_max_len;
        if k >= len || len <= max_len {
            return k < len;
        }
        let (chunks, chunk_len) = self.row_chunks();
        chunk_len <= max_len
            && chunks * k <= max_len
            && (self.tuning.row_long_unbounded || self.chunk_bounds(chunks, chunk_len).bounded())
    }

    /// Which bound each chunk's cube of [`row_select_kernel`] tries first: the minima bound
    /// (`k` within [`TopkTuning::bound_max_k`]), else the sampled bound where its odds hold
    /// for full chunks and the last one alike (`sample_ranks`: each one's sample rank).
    fn chunk_bounds(&self, chunks: usize, chunk_len: usize) -> ChunkBounds {
        let units = self.tuning.row_units_per_cube;
        let minima = self.problem.k <= self.tuning.bound_max_k(units) as usize;
        let last_len = self.problem.len - (chunks - 1) * chunk_len;
        let sample_ranks = if self.tuning.row_sample && !minima {
            let rank = |len| self.row_sample_rank(units, len);
            rank(chunk_len).zip(rank(last_len))
        } else {
            None
        };
        ChunkBounds {
            minima,
            sample_ranks,
        }
    }

    /// [`row_select_kernel`] over `chunks` chunks of `chunk_len` keys a row: each chunk's `k`
    /// chosen radix keys and their positions in the chunk, `[rows, chunks * k]`.
    fn launch_row_select(&self, chunks: usize, chunk_len: usize) -> RowCandidates {
        let rows = self.problem.rows;
        let candidates = rows * chunks * self.problem.k;
        let blueprint = RadixBlueprint {
            units: self.tuning.row_units_per_cube,
            elements_per_unit: self.tuning.row_elements_per_unit,
            ..self.blueprint()
        };
        let cand_keys = self.workspace(candidates);
        let cand_positions = self.workspace(candidates);
        let ChunkBounds {
            minima: try_bound,
            sample_ranks,
        } = self.chunk_bounds(chunks, chunk_len);
        let (sample_rank, sample_rank_last) = sample_ranks.unwrap_or((0, 0));
        // SAFETY: one cube per chunk of a row, surplus cubes return; reads stay within the
        // chunk; slots are distinct within a chunk's `k` and below `k` (fewer than `k` keys
        // lie below the boundary, ties past `k` are not written); the staged keys stay within
        // a tile (counted against it before a write).
        unsafe {
            row_select_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, rows * chunks),
                CubeDim::new_1d(blueprint.units),
                self.address(),
                self.input(),
                self.buffer(&cand_keys, candidates),
                self.buffer(&cand_positions, candidates),
                self.problem.len,
                self.problem.k as u32,
                chunk_len,
                chunks,
                rows * chunks,
                sample_rank,
                sample_rank_last,
                try_bound,
                sample_ranks.is_some(),
                self.read,
                blueprint,
                self.io.value_dtype.elem_type(),
            );
        }
        RowCandidates {
            keys: cand_keys,
            positions: cand_positions,
            chunks,
            chunk_len,
        }
    }

    /// Whether the device-wide select tries the sampled bound first, and how: every
    /// `stride`-th tile of a row sampled (about `tuning.sample_tiles` whole tiles, at most one
    /// in [`MIN_SAMPLE_STRIDE`]), the bound the sample's key of rank `mu + 4 sqrt(mu) + 8`,
    /// where `mu = k * sample / len` is the sample's expected share of the row's `k` smallest,
    /// so at least `k` keys of a row in random order reach it but for odds below 1e-9; the
    /// capacity (`(rank + 4 sqrt(rank) + 8) * len / sample` keys, at least `k`) bounds the keys
    /// below it likewise. `None` (the digit passes alone) where it is off, the row is shorter
    /// than `tuning.sample_min_len` or has too few tiles, or the capacity would be half the
    /// row.
    fn sample_plan(&self) -> Option<SamplePlan> {
        let TopkProblem { len, k, .. } = self.problem;
        let wanted = self.tuning.sample_tiles as usize;
        let tile = self.blueprint().tile();
        let full_tiles = len / tile;
        if wanted == 0
            || k == len
            || len < self.tuning.sample_min_len
            || full_tiles < MIN_SAMPLE_STRIDE
        {
            return None;
        }
        let stride = (full_tiles / wanted).max(MIN_SAMPLE_STRIDE);
        let tiles = (full_tiles - 1) / stride + 1;
        let sample = tiles * tile;
        let (rank, cap) = sample_odds(k, sample, len);
        if rank >= sample || 2 * cap > len {
            return None;
        }
        Some(SamplePlan {
            tiles,
            stride,
            rank,
            cap,
        })
    }

    /// The row cube's sampled bound for rows (chunks) of `len` keys, one key sampled a unit:
    /// the sample's rank that bounds the row's `k` smallest, where that rank is within the
    /// sample and the keys under the bound fit a tile ([`sample_odds`]); else `None`.
    fn row_sample_rank(&self, units: u32, len: usize) -> Option<u32> {
        let k = self.problem.k;
        let (rank, cap) = sample_odds(k, units as usize, len);
        let tile = units as usize * self.tuning.row_elements_per_unit as usize;
        (rank <= units as usize && cap <= tile).then_some(rank as u32)
    }

    /// The gather's workspaces, sized for the sampled bound where it runs.
    fn gather_workspace(&self) -> Gather {
        let rows = self.problem.rows;
        let sample = self.sample_plan();
        let per_row = sample.map_or(self.problem.k, |plan| plan.cap);
        let tiles_per_row = self.chunks().tiles_per_row;
        let count_len = rows * 2 * tiles_per_row;
        Gather {
            sample,
            per_row,
            tiles_per_row,
            tile_counts: self.workspace(count_len),
            tile_offsets: self.workspace(count_len),
            cand_keys: self.workspace(rows * per_row),
            cand_positions: self.workspace(rows * per_row),
        }
    }

    /// The sampled bound of every row: the sample's radix keys copied out ([`sample_kernel`]),
    /// its `rank`-th smallest key found by the device-wide digit passes over it (a top-k of its
    /// own), the gather's count under that bound, and the check of which rows it answered
    /// ([`sample_check_kernel`]).
    fn sampled_bound(
        &self,
        state: &Handle,
        gather: &Gather,
        plan: SamplePlan,
    ) -> Result<(), SieveError> {
        let rows = self.problem.rows;
        let tile = self.blueprint().tile();
        let sample_len = plan.tiles * tile;
        let total = rows * sample_len;
        let sample = self.workspace(total);
        // SAFETY: one unit per sample key, bounds-checked; sampled tiles are whole tiles of the
        // row (`(tiles - 1) * stride` is below the row's whole tiles).
        unsafe {
            sample_kernel::launch_unchecked(
                self.client,
                self.elementwise_grid(total),
                CubeDim::new_1d(self.elementwise_units),
                self.address(),
                self.input(),
                self.buffer(&sample, total),
                self.problem.len,
                sample_len,
                tile,
                plan.stride,
                total,
                self.read,
                self.io.value_dtype.elem_type(),
            );
        }
        let select = self.over_radix_keys(&sample, sample_len, plan.rank);
        let bounds = select.init_state();
        select.radix_select(&bounds);
        self.count_tiles(&bounds, gather, false)?;
        let count_len = rows * 2 * gather.tiles_per_row;
        // SAFETY: one unit per row, bounds-checked; reads the row's counts and offsets.
        unsafe {
            sample_check_kernel::launch_unchecked(
                self.client,
                self.per_row_grid(),
                CubeDim::new_1d(self.elementwise_units),
                self.address(),
                self.buffer(state, rows * ROW_STATE_WORDS),
                self.buffer(&bounds, rows * ROW_STATE_WORDS),
                self.buffer(&gather.tile_counts, count_len),
                self.buffer(&gather.tile_offsets, count_len),
                rows,
                gather.tiles_per_row,
                self.problem.k as u32,
                plan.cap as u32,
            );
        }
        Ok(())
    }

    /// The gather's count of every tile's keys below and at its row's boundary, and their
    /// exclusive scan per row (`skip_sampled`: rows the sampled bound answered keep theirs).
    fn count_tiles(
        &self,
        state: &Handle,
        gather: &Gather,
        skip_sampled: bool,
    ) -> Result<(), SieveError> {
        let rows = self.problem.rows;
        let chunks = self.chunks();
        let count_len = rows * 2 * gather.tiles_per_row;
        // Vectors of up to 4 keys where the rows and the buffer allow, and a unit's keys of a
        // tile split into whole vectors (the count's order within a tile does not matter).
        let elem_bytes = self.io.value_dtype.size_bytes();
        let widest = vector_size_for(self.problem.len, 4, &[(self.io.values, elem_bytes)]);
        let vector = [4, 2, 1]
            .into_iter()
            .find(|&v| v <= widest && self.tuning.elements_per_unit.is_multiple_of(v as u32))
            .unwrap_or(1);
        // SAFETY: one cube per chunk of tiles, surplus cubes return; each cube writes its
        // tiles' two counts.
        unsafe {
            gather_count_kernel::launch_unchecked(
                self.client,
                chunks.cube_count(self.client),
                CubeDim::new_1d(self.tuning.units_per_cube),
                self.address(),
                vector,
                self.input(),
                self.buffer(state, rows * ROW_STATE_WORDS),
                self.buffer(&gather.tile_counts, count_len),
                chunks.arg(),
                skip_sampled,
                vector,
                self.read,
                self.blueprint(),
                self.io.value_dtype.elem_type(),
            );
        }
        scan_with(
            self.client,
            self.caps,
            &gather.tile_counts,
            &gather.tile_offsets,
            ScanProblem {
                rows,
                len: 2 * gather.tiles_per_row,
            },
            Dtype::U32,
            ScanKind::Exclusive,
            ScanOptions::default(),
        )?;
        Ok(())
    }

    /// Every row's chosen keys (below the boundary, then the ties up to the row's limit, each
    /// in index order) in the gather's `[rows, per_row]` workspaces, then the outputs.
    fn gather_and_finish(&self, state: &Handle, gather: &Gather) -> Result<(), SieveError> {
        let rows = self.problem.rows;
        let k = self.problem.k;
        let tiles_per_row = gather.tiles_per_row;
        let count_len = rows * 2 * tiles_per_row;
        let candidates = rows * gather.per_row;
        self.count_tiles(state, gather, gather.sample.is_some())?;
        if gather.sample.is_some() {
            // Slots past a row's chosen keys sort last: the largest radix key.
            fill(
                self.client,
                &gather.cand_keys,
                candidates,
                ElemType::UInt(UIntKind::U32),
                u32::MAX,
            );
        }
        let chunks = self.chunks();
        // SAFETY: one cube per chunk of tiles, surplus cubes return; slots are distinct within a
        // row and below its limit (fewer than `k` keys lie below an exact boundary, at most the
        // capacity below a sampled one; ties past the limit are not written).
        unsafe {
            gather_scatter_kernel::launch_unchecked(
                self.client,
                chunks.cube_count(self.client),
                CubeDim::new_1d(self.tuning.units_per_cube),
                self.address(),
                self.input(),
                self.buffer(state, rows * ROW_STATE_WORDS),
                self.buffer(&gather.tile_counts, count_len),
                self.buffer(&gather.tile_offsets, count_len),
                self.buffer(&gather.cand_keys, candidates),
                self.buffer(&gather.cand_positions, candidates),
                chunks.arg(),
                k as u32,
                gather.sample.map_or(k, |plan| plan.cap) as u32,
                gather.per_row,
                self.read,
                self.blueprint(),
                self.io.value_dtype.elem_type(),
            );
        }
        if gather.sample.is_none() {
            return self.order_and_finish(&gather.cand_keys, &gather.cand_positions, k, false);
        }
        if gather.per_row > SELECT_CANDIDATES_MAX {
            // Many candidates a row: sorting them all is cheaper than one cube selecting.
            return self.order_and_finish(
                &gather.cand_keys,
                &gather.cand_positions,
                gather.per_row,
                true,
            );
        }
        // The first `k` of each row's candidates by (key, slot), one cube a row: among equal
        // keys, slot order is index order (the keys below the sampled bound come in index
        // order, then its ties in index order), so these are the row's first `k` by (key,
        // index), and their slots map back to positions in the row.
        let select = self.over_radix_keys(&gather.cand_keys, gather.per_row, k);
        let RowCandidates {
            keys,
            positions: slots,
            ..
        } = select.launch_row_select(1, gather.per_row);
        // `positions[j] = cand_positions[(j / k) * per_row + slots[j]]`: the gather with the
        // candidates' positions as its values.
        let positions = self.workspace(self.outputs());
        gather_rows(
            self.client,
            self.elementwise_units,
            self.address(),
            RowGather {
                values: &gather.cand_positions,
                value_dtype: Dtype::U32,
                positions: &slots,
                order: None,
                values_out: Some(&positions),
                indices_out: None,
                index_dtype: Dtype::U32,
            },
            self.problem.rows,
            gather.per_row,
            k,
            k,
        );
        self.order_and_finish(&keys, &positions, k, false)
    }

    /// The outputs from the chosen radix keys and positions, `per_row` a row (keys below the
    /// boundary in index order, or in (key, index) order where the minima bound ranked them,
    /// then the ties in index order, then padding of the largest key), sorted by (key, index)
    /// first when asked or when `must_sort` (more than `k`).
    fn order_and_finish(
        &self,
        cand_keys: &Handle,
        cand_positions: &Handle,
        per_row: usize,
        must_sort: bool,
    ) -> Result<(), SieveError> {
        let rows = self.problem.rows;
        let order = if self.sorted || must_sort {
            // Keys below the boundary are in index order, then the ties in index order: a
            // stable sort by radix key orders them by (key, index).
            Some(self.sort_radix_rows(cand_keys, None, rows, per_row)?)
        } else {
            None
        };
        self.finish(cand_positions, per_row, order.as_ref());
        Ok(())
    }

    /// The stable ascending sort of `rows` rows of `len` radix keys (`keys`, `u32`): each row's
    /// order (columns, `u32`), and the sorted keys into `keys_out` when given.
    fn sort_radix_rows(
        &self,
        keys: &Handle,
        keys_out: Option<&Handle>,
        rows: usize,
        len: usize,
    ) -> Result<Handle, SieveError> {
        let order = self.workspace(rows * len);
        sort_with(
            self.client,
            self.caps,
            SortIo {
                keys,
                key_dtype: Dtype::U32,
                keys_out,
                indices_out: Some(&order),
                index_dtype: Dtype::U32,
            },
            SortProblem { rows, len },
            SortOrder::Ascending,
            SortOptions::default(),
        )?;
        Ok(order)
    }

    /// Writes the outputs from the chosen positions (`[rows, stride]`), reordered by `order`
    /// (`[rows, stride]`, columns; its first `k` of a row taken) when given.
    fn finish(&self, positions: &Handle, stride: usize, order: Option<&Handle>) {
        gather_rows(
            self.client,
            self.elementwise_units,
            self.address(),
            RowGather {
                values: self.io.values,
                value_dtype: self.io.value_dtype,
                positions,
                order,
                values_out: self.io.values_out,
                indices_out: self.io.indices_out,
                index_dtype: self.io.index_dtype,
            },
            self.problem.rows,
            self.problem.len,
            self.problem.k,
            stride,
        );
    }

    /// The stable sort of every row's radix keys with positions, then the first `k` of each.
    fn sort_and_slice(&self) -> Result<(), SieveError> {
        let positions = self.workspace(self.elements());
        sort_keyed(
            self.client,
            self.caps,
            SortIo {
                keys: self.io.values,
                key_dtype: self.io.value_dtype,
                keys_out: None,
                indices_out: Some(&positions),
                index_dtype: Dtype::U32,
            },
            SortProblem {
                rows: self.problem.rows,
                len: self.problem.len,
            },
            if self.read.largest {
                SortOrder::Descending
            } else {
                SortOrder::Ascending
            },
            SortOptions::default(),
            self.read.kind,
        )?;
        self.finish(&positions, self.problem.len, None);
        Ok(())
    }
}
