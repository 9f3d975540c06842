//! Host side of the sort: validation, strategy choice, workspaces and the pass sequence.

use cubecl::prelude::*;
use cubecl::server::Handle;

use super::kernels::{
    decode_kernel, encode_kernel, histogram_kernel, scatter_kernel, sort_in_cube_kernel,
};
use super::keys::KeyKind;
use super::tile::SortBlueprint;
use super::{SortIo, SortOptions, SortOrder, SortProblem, SortStrategy, SortTuning};
use crate::common::grid::cube_count_1d;
use crate::scan::{self, ScanKind, ScanOptions, ScanProblem};
use crate::{DeviceCaps, Dtype, SieveError};

/// Radix bits of a key.
const KEY_BITS: u32 = 32;
/// Units of the elementwise kernels.
const ELEMENTWISE_UNITS: u32 = 256;

/// Sorts every row of a `[rows, len]` problem (see the module docs). Returns the strategy
/// that ran.
///
/// Errors before anything launches: an unsupported key or index dtype, a row too long for
/// 32-bit positions or the index dtype, a forced `InCube` on rows that do not fit one cube,
/// or a tuning that does not fit the device.
pub fn sort(
    client: &Client,
    io: SortIo<'_>,
    problem: SortProblem,
    order: SortOrder,
    options: SortOptions,
) -> Result<SortStrategy, SieveError> {
    let caps = DeviceCaps::of(client);
    let kind = match io.key_dtype {
        Dtype::F32 => KeyKind::F32,
        Dtype::I32 => KeyKind::I32,
        Dtype::U32 => KeyKind::U32,
        other => {
            return Err(SieveError::invalid(
                "io.key_dtype",
                other,
                "f32, i32 or u32 (other key dtypes are not sorted yet)",
            ));
        }
    };
    let index_max = match io.index_dtype {
        Dtype::I32 => i32::MAX as usize,
        Dtype::U32 => u32::MAX as usize,
        Dtype::I64 => u32::MAX as usize,
        other => {
            return Err(SieveError::invalid(
                "io.index_dtype",
                other,
                "i32, u32 or i64",
            ));
        }
    };
    if problem.len > index_max {
        return Err(SieveError::invalid(
            "problem.len",
            problem.len,
            format!(
                "at most {index_max} (positions are 32-bit; {} indices)",
                io.index_dtype
            ),
        ));
    }
    caps.check_dtype(io.index_dtype)?;
    let shared = client.properties().hardware.max_shared_memory_size;
    let tuning = options
        .tuning
        .unwrap_or_else(|| SortTuning::for_device(&caps, shared));
    check_tuning(&caps, &tuning)?;
    let capacity = tuning.in_cube_capacity();
    let strategy = match options.strategy {
        SortStrategy::Auto if problem.len <= capacity => SortStrategy::InCube,
        SortStrategy::Auto => SortStrategy::Lsd,
        SortStrategy::InCube if problem.len > capacity => {
            return Err(SieveError::invalid(
                "problem.len",
                problem.len,
                format!("at most {capacity} for the in-cube sort on this device"),
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
    };
    match strategy {
        SortStrategy::InCube => run.in_cube(),
        SortStrategy::Lsd => run.lsd(),
        SortStrategy::Auto => unreachable!("resolved above"),
    }
    Ok(strategy)
}

fn check_tuning(caps: &DeviceCaps, tuning: &SortTuning) -> Result<(), SieveError> {
    caps.check_units_per_cube(tuning.units_per_cube)?;
    if !(1..=8).contains(&tuning.radix_bits) {
        return Err(SieveError::invalid(
            "tuning.radix_bits",
            tuning.radix_bits,
            "1..=8",
        ));
    }
    let tile_bytes =
        tuning.tile() * 8 + (4 << tuning.radix_bits) + 4 * tuning.units_per_cube as usize;
    if tuning.elements_per_unit == 0 || tile_bytes > tuning.max_shared_bytes {
        return Err(SieveError::invalid(
            "tuning.elements_per_unit",
            tuning.elements_per_unit,
            format!(
                "at least 1, with a tile of keys and positions ({tile_bytes} bytes) within the \
                 device's {} bytes of shared memory",
                tuning.max_shared_bytes
            ),
        ));
    }
    caps.check_planes(tuning.use_planes)
}

struct Run<'a> {
    client: &'a Client,
    io: SortIo<'a>,
    problem: SortProblem,
    kind: KeyKind,
    descending: bool,
    tuning: SortTuning,
}

impl Run<'_> {
    fn elements(&self) -> usize {
        self.problem.rows * self.problem.len
    }

    fn buffer(&self, handle: &Handle) -> BufferArg {
        // SAFETY: the caller's buffers (and the workspaces) hold `rows * len` elements; every
        // access is bounded by it.
        unsafe { BufferArg::from_raw_parts(handle.clone(), self.elements()) }
    }

    /// An output the caller asked for, or a placeholder binding the kernel does not write.
    fn output(&self, handle: Option<&Handle>) -> BufferArg {
        match handle {
            Some(h) => self.buffer(h),
            // SAFETY: never written (the kernel's comptime flag is off).
            None => unsafe { BufferArg::from_raw_parts(self.client.empty(64), 8) },
        }
    }

    fn dtypes(&self) -> [ElemType; 2] {
        [
            self.io.key_dtype.elem_type(),
            self.io.index_dtype.elem_type(),
        ]
    }

    /// One cube per row; units and keys per unit sized to the row (powers of two).
    fn in_cube(&self) {
        let len = self.problem.len;
        let min_units = DeviceCaps::of(self.client).plane_size_max.max(1);
        let units =
            (len.div_ceil(8).next_power_of_two() as u32).clamp(min_units, self.tuning.max_units);
        let elements_per_unit = (len.div_ceil(units as usize).next_power_of_two() as u32).max(1);
        let blueprint = SortBlueprint {
            units,
            elements_per_unit,
            use_planes: self.tuning.use_planes,
            radix_bits: self.tuning.radix_bits,
        };
        // SAFETY: one cube per row, surplus cubes return; every access is within the row.
        unsafe {
            sort_in_cube_kernel::launch_unchecked(
                self.client,
                cube_count_1d(self.client, self.problem.rows),
                CubeDim::new_1d(units),
                self.buffer(self.io.keys),
                self.output(self.io.keys_out),
                self.output(self.io.indices_out),
                len,
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
            self.elements().div_ceil(ELEMENTWISE_UNITS as usize),
        )
    }

    /// Encode, one counting pass per digit (histogram, scan, scatter), decode.
    fn lsd(&self) {
        let n = self.elements();
        let len = self.problem.len;
        let blueprint = SortBlueprint {
            units: self.tuning.units_per_cube,
            elements_per_unit: self.tuning.elements_per_unit,
            use_planes: self.tuning.use_planes,
            radix_bits: self.tuning.radix_bits,
        };
        let tiles_per_row = len.div_ceil(blueprint.tile());
        let total_tiles = self.problem.rows * tiles_per_row;
        let digits = blueprint.digits();
        let mut radix = [self.client.empty(4 * n), self.client.empty(4 * n)];
        let mut positions = [self.client.empty(4 * n), self.client.empty(4 * n)];
        let counts = self.client.empty(4 * total_tiles * digits);
        let offsets = self.client.empty(4 * total_tiles * digits);
        // SAFETY: one unit per element, bounds-checked.
        unsafe {
            encode_kernel::launch_unchecked(
                self.client,
                self.elementwise_grid(),
                CubeDim::new_1d(ELEMENTWISE_UNITS),
                self.buffer(self.io.keys),
                self.buffer(&radix[0]),
                self.buffer(&positions[0]),
                len,
                n,
                self.kind,
                self.descending,
                self.io.key_dtype.elem_type(),
            );
        }
        let grid = cube_count_1d(self.client, total_tiles);
        let cube_dim = CubeDim::new_1d(blueprint.units);
        let passes = KEY_BITS.div_ceil(blueprint.radix_bits);
        for pass in 0..passes {
            let shift = pass * blueprint.radix_bits;
            // SAFETY: one cube per tile, surplus cubes return; counts hold `digits` values per
            // tile, written once each.
            unsafe {
                histogram_kernel::launch_unchecked(
                    self.client,
                    grid.clone(),
                    cube_dim,
                    self.buffer(&radix[0]),
                    BufferArg::from_raw_parts(counts.clone(), total_tiles * digits),
                    len,
                    tiles_per_row,
                    total_tiles,
                    shift,
                    blueprint,
                );
            }
            scan::scan(
                self.client,
                &counts,
                &offsets,
                ScanProblem {
                    rows: self.problem.rows,
                    len: digits * tiles_per_row,
                },
                Dtype::U32,
                ScanKind::Exclusive,
                ScanOptions::default(),
            )
            .expect("scan of digit counts: u32 rows are always supported");
            // SAFETY: as above; each key lands on a distinct slot of its own row (the slots of
            // a row are a permutation of 0..len).
            unsafe {
                scatter_kernel::launch_unchecked(
                    self.client,
                    grid.clone(),
                    cube_dim,
                    self.buffer(&radix[0]),
                    self.buffer(&positions[0]),
                    self.buffer(&radix[1]),
                    self.buffer(&positions[1]),
                    BufferArg::from_raw_parts(offsets.clone(), total_tiles * digits),
                    len,
                    tiles_per_row,
                    total_tiles,
                    shift,
                    blueprint,
                );
            }
            radix.swap(0, 1);
            positions.swap(0, 1);
        }
        // SAFETY: one unit per element, bounds-checked; positions are within the row.
        unsafe {
            decode_kernel::launch_unchecked(
                self.client,
                self.elementwise_grid(),
                CubeDim::new_1d(ELEMENTWISE_UNITS),
                self.buffer(self.io.keys),
                self.buffer(&positions[0]),
                self.output(self.io.keys_out),
                self.output(self.io.indices_out),
                len,
                n,
                self.io.keys_out.is_some(),
                self.io.indices_out.is_some(),
                self.dtypes(),
            );
        }
    }
}
