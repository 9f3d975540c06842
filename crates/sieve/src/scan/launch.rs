//! Host side of the scan: validation, strategy choice, workspaces and the pass sequence.

use cubecl::ir::ElemType;
use cubecl::prelude::*;
use cubecl::server::Handle;

use super::kernels::{
    reduce_tiles_kernel, scan_columns_kernel, scan_lookback_kernel, scan_row_tiles_kernel,
    scan_tiles_kernel,
};
use super::{
    ColumnProblem, ScanKind, ScanOp, ScanOptions, ScanProblem, ScanStrategy, ScanTuning,
    TileBlueprint,
};
use crate::common::address::{AddressType, address_type, check_extent};
use crate::common::buffers::{BufferRules, bind, bind_optional};
use crate::common::fold::Fold;
use crate::common::grid::cube_count_1d;
use crate::common::lookback::Workspace;
use crate::{DeviceCaps, Dtype, SieveError};

/// Scans `input` (`problem.rows * problem.len` elements of `dtype`, row-major) into `output`
/// (same size, a different buffer): prefix sums. Returns the strategy that ran.
///
/// Errors before anything launches: unsupported dtype, a forced strategy the device cannot
/// run, a tuning that does not fit the device, or (checked last) a buffer smaller than the
/// problem or a view off the device's binding alignment.
pub fn scan(
    client: &Client,
    input: &Handle,
    output: &Handle,
    problem: ScanProblem,
    dtype: Dtype,
    kind: ScanKind,
    options: ScanOptions,
) -> Result<ScanStrategy, SieveError> {
    scan_op(
        client,
        input,
        output,
        problem,
        dtype,
        ScanOp::Sum,
        kind,
        options,
    )
}

/// [`scan`] with the associative operator `op`: running sums, products, minima or maxima
/// (`cumsum`, `cumprod`, `cummin`, `cummax`; semantics on [`ScanOp`]). Exclusive scans put
/// the operator's identity first (0, 1, +inf or the largest integer, -inf or the smallest).
/// Same dtypes, strategies, tunings and errors as [`scan`].
#[allow(clippy::too_many_arguments)]
pub fn scan_op(
    client: &Client,
    input: &Handle,
    output: &Handle,
    problem: ScanProblem,
    dtype: Dtype,
    op: ScanOp,
    kind: ScanKind,
    options: ScanOptions,
) -> Result<ScanStrategy, SieveError> {
    scan_op_with(
        client,
        &DeviceCaps::of(client),
        input,
        output,
        problem,
        dtype,
        op,
        kind,
        options,
    )
}

/// [`scan`] with the device's capabilities already read (by the entry point that nests this
/// scan), so one call reads them once.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_with(
    client: &Client,
    caps: &DeviceCaps,
    input: &Handle,
    output: &Handle,
    problem: ScanProblem,
    dtype: Dtype,
    kind: ScanKind,
    options: ScanOptions,
) -> Result<ScanStrategy, SieveError> {
    scan_op_with(
        client,
        caps,
        input,
        output,
        problem,
        dtype,
        ScanOp::Sum,
        kind,
        options,
    )
}

/// [`scan_op`] with the device's capabilities already read.
#[allow(clippy::too_many_arguments)]
fn scan_op_with(
    client: &Client,
    caps: &DeviceCaps,
    input: &Handle,
    output: &Handle,
    problem: ScanProblem,
    dtype: Dtype,
    op: ScanOp,
    kind: ScanKind,
    options: ScanOptions,
) -> Result<ScanStrategy, SieveError> {
    caps.check_dtype(dtype)?;
    let strategy = resolve_strategy(caps, dtype, options.strategy)?;
    let lookback = strategy == ScanStrategy::DecoupledLookback;
    let tuning = options
        .tuning
        .unwrap_or_else(|| ScanTuning::for_device(caps, lookback));
    check_tuning(caps, &tuning)?;
    check_extent(
        client,
        caps,
        "problem.rows * problem.len",
        problem.rows.saturating_mul(problem.len),
    )?;
    check_buffers(client, input, output, problem, dtype)?;
    if problem.rows == 0 || problem.len == 0 {
        return Ok(strategy);
    }
    let pass = Pass::new(client, caps, tuning, dtype, op);
    let exclusive = kind == ScanKind::Exclusive;
    if lookback {
        pass.lookback(input, output, problem, exclusive);
    } else {
        pass.reduce_then_scan(input, output, problem, exclusive, None);
    }
    Ok(strategy)
}

/// The exclusive reduce-then-scan of `rows` rows of `len` counts (`dtype`, an integer) from
/// `input` into `output` at default tiles, with `totals` each row's total also written there
/// (`rows` elements of `dtype`): the compaction's tile offsets (and, for the counted
/// compaction, its count). The caller's workspaces, so no buffer checks.
pub(crate) fn scan_counts_with(
    client: &Client,
    caps: &DeviceCaps,
    input: &Handle,
    output: &Handle,
    totals: Option<&Handle>,
    problem: ScanProblem,
    dtype: Dtype,
) -> Result<(), SieveError> {
    caps.check_dtype(dtype)?;
    let tuning = ScanTuning::for_device(caps, false);
    check_tuning(caps, &tuning)?;
    if problem.rows == 0 || problem.len == 0 {
        return Ok(());
    }
    let pass = Pass::new(client, caps, tuning, dtype, ScanOp::Sum);
    pass.reduce_then_scan(input, output, problem, true, totals);
    Ok(())
}

/// Units of a [`scan_columns`] cube.
const COLUMN_UNITS: u32 = 256;

/// Scans every column of a contiguous `[outer, len, inner]` buffer along its `len` elements
/// (the middle axis; see [`ColumnProblem`]) from `input` into `output` (same layout, a
/// different buffer), with [`scan_op`]'s operators, dtypes and exclusive identity. One pass,
/// one unit per column (or per vector of neighbouring columns): each element is read and
/// written once. Meant for many columns: a unit walks its whole column, so a problem of few
/// columns and long ones keeps few units busy (transposing to rows and [`scan_op`] is the
/// faster way there).
///
/// Errors before anything launches: an unsupported dtype, or (checked last) a buffer smaller
/// than the problem or a view off the device's binding alignment.
#[allow(clippy::too_many_arguments)]
pub fn scan_columns(
    client: &Client,
    input: &Handle,
    output: &Handle,
    problem: ColumnProblem,
    dtype: Dtype,
    op: ScanOp,
    kind: ScanKind,
) -> Result<(), SieveError> {
    let caps = DeviceCaps::of(client);
    caps.check_dtype(dtype)?;
    let elements = problem.elements();
    check_extent(
        client,
        &caps,
        "problem.outer * problem.len * problem.inner",
        elements,
    )?;
    let rules = BufferRules::of(client);
    rules.check_dtype("input", input, elements, dtype)?;
    rules.check_dtype("output", output, elements, dtype)?;
    if elements == 0 {
        return Ok(());
    }
    let elem_bytes = dtype.size_bytes();
    // Vectors of neighbouring columns where a slab's columns split into them evenly and the
    // buffers align; never so wide that fewer units than columns would leave the device idle
    // where columns are few.
    let widest = vector_size_for(
        problem.inner,
        4,
        &[(input, elem_bytes), (output, elem_bytes)],
    );
    let vector_size = [4, 2, 1]
        .into_iter()
        .find(|&v| v <= widest && problem.columns() / v >= COLUMN_MIN_UNITS)
        .unwrap_or(1);
    let inner_vectors = problem.inner / vector_size;
    let column_vectors = problem.outer * inner_vectors;
    let units = caps.cube_units(COLUMN_UNITS);
    let fold = Fold {
        op,
        elem: dtype,
        ieee_nan_compare: caps.ieee_nan_compare,
    };
    // SAFETY: both buffers hold `elements` elements (checked above); unit `u < column_vectors`
    // reads and writes only its column, `base + row * inner_vectors` for `row < len`, below
    // `outer * len * inner_vectors` vectors; surplus units return before any access.
    unsafe {
        scan_columns_kernel::launch_unchecked(
            client,
            cube_count_1d(client, column_vectors.div_ceil(units as usize)),
            CubeDim::new_1d(units),
            address_type(&[elements]),
            vector_size,
            BufferArg::from_raw_parts(input.clone(), elements),
            BufferArg::from_raw_parts(output.clone(), elements),
            problem.len,
            inner_vectors,
            column_vectors,
            kind == ScanKind::Exclusive,
            fold,
            [dtype.elem_type(), dtype.accumulator().elem_type()],
        );
    }
    Ok(())
}

/// [`scan_columns`] widens its vectors only while this many units remain.
const COLUMN_MIN_UNITS: usize = 1 << 16;

fn resolve_strategy(
    caps: &DeviceCaps,
    dtype: Dtype,
    asked: ScanStrategy,
) -> Result<ScanStrategy, SieveError> {
    let lookback_blocker = if !caps.atomic_u64 {
        Some("it needs atomic load/store of 64-bit words")
    } else if dtype.accumulator().size_bytes() != 4 {
        // A status word is one 64-bit atomic: 32 bits of flag and 32 of value. Widening it
        // would take 128-bit atomics or a flag and a value published apart (a fence between
        // them on every runtime), so 64-bit accumulators take the reduce-then-scan, which
        // `Auto` picks for them everywhere.
        Some(
            "its status words hold 32-bit accumulators only (use ReduceThenScan for i64, u64 \
             and f64)",
        )
    } else {
        None
    };
    match asked {
        ScanStrategy::ReduceThenScan => Ok(asked),
        ScanStrategy::DecoupledLookback => match lookback_blocker {
            None => Ok(asked),
            Some(reason) => Err(SieveError::UnsupportedStrategy {
                strategy: asked.name(),
                device: caps.describe(),
                reason,
            }),
        },
        ScanStrategy::Auto if caps.forward_progress && lookback_blocker.is_none() => {
            Ok(ScanStrategy::DecoupledLookback)
        }
        ScanStrategy::Auto => Ok(ScanStrategy::ReduceThenScan),
    }
}

/// Both caller buffers hold the problem's `rows * len` elements (checked last, before
/// anything launches).
fn check_buffers(
    client: &Client,
    input: &Handle,
    output: &Handle,
    problem: ScanProblem,
    dtype: Dtype,
) -> Result<(), SieveError> {
    let rules = BufferRules::of(client);
    let elements = problem.rows.saturating_mul(problem.len);
    rules.check_dtype("input", input, elements, dtype)?;
    rules.check_dtype("output", output, elements, dtype)
}

pub(crate) fn check_tuning(caps: &DeviceCaps, tuning: &ScanTuning) -> Result<(), SieveError> {
    caps.check_units_per_cube(tuning.units_per_cube)?;
    if tuning.elements_per_unit == 0 || tuning.elements_per_unit > 64 {
        return Err(SieveError::invalid(
            "tuning.elements_per_unit",
            tuning.elements_per_unit,
            "1..=64",
        ));
    }
    if !matches!(tuning.max_vector_size, 1 | 2 | 4) {
        return Err(SieveError::invalid(
            "tuning.max_vector_size",
            tuning.max_vector_size,
            "1, 2 or 4",
        ));
    }
    caps.check_planes(tuning.use_planes)
}

/// One scan call's fixed context.
struct Pass<'a> {
    client: &'a Client,
    tuning: ScanTuning,
    dtype: Dtype,
    /// The operator, for the accumulator type (the tile sums' pass keeps it).
    fold: Fold,
}

/// How one scan's rows are cut into vectors and tiles.
struct Layout {
    vector_size: usize,
    row_vectors: usize,
    tiles_per_row: usize,
    total_tiles: usize,
    blueprint: TileBlueprint,
    /// Every pass of the scan binds the `rows * len` input or output and per-tile words.
    address: AddressType,
}

impl<'a> Pass<'a> {
    fn new(
        client: &'a Client,
        caps: &DeviceCaps,
        tuning: ScanTuning,
        dtype: Dtype,
        op: ScanOp,
    ) -> Self {
        Pass {
            client,
            tuning,
            dtype,
            fold: Fold {
                op,
                elem: dtype,
                ieee_nan_compare: caps.ieee_nan_compare,
            },
        }
    }

    fn layout(&self, problem: ScanProblem, input: &Handle, output: &Handle) -> Layout {
        let elem_bytes = self.dtype.size_bytes();
        let vector_size = vector_size_for(
            problem.len,
            self.tuning.max_vector_size,
            &[(input, elem_bytes), (output, elem_bytes)],
        );
        let row_vectors = problem.len / vector_size;
        let blueprint = TileBlueprint {
            fold: self.fold,
            ..self.tuning.blueprint(vector_size)
        };
        let tiles_per_row = row_vectors.div_ceil(blueprint.tile_vectors());
        let total_tiles = problem.rows * tiles_per_row;
        Layout {
            vector_size,
            row_vectors,
            tiles_per_row,
            total_tiles,
            blueprint,
            address: address_type(&[problem.rows * problem.len, total_tiles]),
        }
    }

    fn dtypes(&self) -> [ElemType; 2] {
        [self.dtype.elem_type(), self.dtype.accumulator().elem_type()]
    }

    /// The caller's buffers hold `rows * len` elements (the kernels bound every access by
    /// `row_vectors` per row).
    fn buffer(&self, handle: &Handle, problem: ScanProblem) -> BufferArg {
        bind(handle, problem.rows * problem.len)
    }

    /// Reduce-then-scan; with `totals`, each row's total written there (`rows` elements of
    /// the accumulator).
    fn reduce_then_scan(
        &self,
        input: &Handle,
        output: &Handle,
        problem: ScanProblem,
        exclusive: bool,
        totals: Option<&Handle>,
    ) {
        let layout = self.layout(problem, input, output);
        let accumulator = self.dtype.accumulator();
        let with_offsets = layout.tiles_per_row > 1;
        if with_offsets
            && self.fold.exact()
            && layout.tiles_per_row <= self.tuning.looped_max_tiles as usize
        {
            // SAFETY: one cube per row, surplus cubes return; every access is bounded by
            // `row_vectors`; totals hold one value per row when written.
            unsafe {
                scan_row_tiles_kernel::launch_unchecked(
                    self.client,
                    cube_count_1d(self.client, problem.rows),
                    CubeDim::new_1d(layout.blueprint.units),
                    layout.address,
                    layout.vector_size,
                    self.buffer(input, problem),
                    self.buffer(output, problem),
                    bind_optional(self.client, totals, problem.rows),
                    layout.row_vectors,
                    layout.tiles_per_row,
                    problem.rows,
                    exclusive,
                    totals.is_some(),
                    layout.blueprint,
                    self.dtypes(),
                );
            }
            return;
        }
        let offsets = if with_offsets {
            let sums = self
                .client
                .empty(layout.total_tiles * accumulator.size_bytes());
            // SAFETY: one sum per tile; the grid has at least `total_tiles` cubes and the
            // surplus ones return before touching memory.
            unsafe {
                reduce_tiles_kernel::launch_unchecked(
                    self.client,
                    cube_count_1d(self.client, layout.total_tiles),
                    CubeDim::new_1d(layout.blueprint.units),
                    layout.address,
                    layout.vector_size,
                    self.buffer(input, problem),
                    BufferArg::from_raw_parts(sums.clone(), layout.total_tiles),
                    layout.row_vectors,
                    layout.tiles_per_row,
                    layout.total_tiles,
                    layout.blueprint,
                    self.dtypes(),
                );
            }
            let offsets = self
                .client
                .empty(layout.total_tiles * accumulator.size_bytes());
            let spine = Pass {
                client: self.client,
                tuning: self.tuning,
                dtype: accumulator,
                fold: self.fold,
            };
            spine.reduce_then_scan(
                &sums,
                &offsets,
                ScanProblem {
                    rows: problem.rows,
                    len: layout.tiles_per_row,
                },
                true,
                None,
            );
            offsets
        } else {
            // Not read (`with_offsets` is false); a binding is still needed.
            self.client.empty(accumulator.size_bytes())
        };
        // SAFETY: as above; tile offsets hold one value per tile when read, totals one per row
        // when written.
        unsafe {
            scan_tiles_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, layout.total_tiles),
                CubeDim::new_1d(layout.blueprint.units),
                layout.address,
                layout.vector_size,
                self.buffer(input, problem),
                self.buffer(output, problem),
                BufferArg::from_raw_parts(offsets, layout.total_tiles.max(1)),
                bind_optional(self.client, totals, problem.rows),
                layout.row_vectors,
                layout.tiles_per_row,
                layout.total_tiles,
                exclusive,
                with_offsets,
                totals.is_some(),
                layout.blueprint,
                self.dtypes(),
            );
        }
    }

    fn lookback(&self, input: &Handle, output: &Handle, problem: ScanProblem, exclusive: bool) {
        let layout = self.layout(problem, input, output);
        let Workspace { status, counter } = Workspace::zeroed(self.client, layout.total_tiles);
        // SAFETY: one status word per tile; tiles are numbered by the counter, so every cube
        // past `total_tiles` returns before touching memory.
        unsafe {
            scan_lookback_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, layout.total_tiles),
                CubeDim::new_1d(layout.blueprint.units),
                layout.address,
                layout.vector_size,
                self.buffer(input, problem),
                self.buffer(output, problem),
                BufferArg::from_raw_parts(status, layout.total_tiles),
                BufferArg::from_raw_parts(counter, 1),
                layout.row_vectors,
                layout.tiles_per_row,
                layout.total_tiles,
                exclusive,
                layout.blueprint,
                self.dtypes(),
            );
        }
    }
}

/// The widest vector (elements) that divides the row length, does not exceed `max`, and
/// keeps every buffer's start aligned to it. `buffers` pairs each handle with its element
/// size in bytes.
pub(crate) fn vector_size_for(len: usize, max: usize, buffers: &[(&Handle, usize)]) -> usize {
    [4usize, 2, 1]
        .into_iter()
        .find(|&size| {
            size <= max
                && len.is_multiple_of(size)
                && buffers.iter().all(|(h, elem_bytes)| {
                    h.offset_start.unwrap_or(0) % (size * elem_bytes) as u64 == 0
                })
        })
        .unwrap_or(1)
}
