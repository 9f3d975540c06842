//! Tuning of the scan: plain data, chosen from device properties, overridable by callers
//! (tests force small tiles to cross many tile boundaries cheaply; the bench sweeps them).

use super::tile::TileBlueprint;
use crate::DeviceCaps;
use crate::common::fold::Fold;

/// How the scan cuts a row into tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScanTuning {
    /// Units per cube: a power of two, a multiple of the largest plane width.
    pub units_per_cube: u32,
    /// Elements each unit handles per tile (rounded to whole vectors).
    pub elements_per_unit: u32,
    /// Widest vector to load (1, 2 or 4); narrowed to what the row length and buffer allow.
    pub max_vector_size: usize,
    /// Use plane operations (the device must have them).
    pub use_planes: bool,
    /// Reduce-then-scan rows of at most this many tiles under an exact fold (integers,
    /// minima, maxima: the compaction's and top-k's counts among them) scan in one launch, one
    /// cube a row walking its tiles, instead of three (tile sums, their scan, the tiles).
    /// 0: always three. 4 by default (`bench/results/h100/42-ab`): at two tiles, through
    /// Vulkan, the sort's counts at 2^18 keys and the compaction's at 2^26 were faster in one
    /// launch; at four, through CUDA (the sort's counts at 2^20), the same (0.1377 -> 0.1389
    /// ms). Rows of more tiles keep three launches, unmeasured looped.
    pub looped_max_tiles: u32,
}

impl ScanTuning {
    /// Defaults for this device: 512 units where a cube may have them (else as many as it
    /// may: [`DeviceCaps::cube_units`]), 16 elements per unit for reduce-then-scan, 64 for the
    /// look-back, whose tiles each pay a walk the next tiles wait on (so it wants fewer, larger
    /// tiles). Chosen from sweeps on an H200 through CUDA, 2^28 f32: reduce-then-scan
    /// 512 x 16: 0.92 ms (256 x 16: 0.95 ms; `bench/results/h200/sweep-cuda.json`);
    /// look-back (`bench/results/h200/issue14/session5/`) 512 x 64 against 512 x 32: cumsum
    /// 0.69 against 0.72 ms (`3-final`), cummin 0.80 against 0.92 ms (`2-sweep`): the
    /// look-back costs per tile, not per element (16 elements per unit took twice 32's time). A tile needs one spine word per
    /// unit of shared memory, which any device has.
    pub fn for_device(caps: &DeviceCaps, lookback: bool) -> Self {
        ScanTuning {
            units_per_cube: caps.cube_units(512),
            elements_per_unit: if lookback { 64 } else { 16 },
            max_vector_size: caps.max_vector_size.clamp(1, 4),
            use_planes: caps.plane_ops,
            looped_max_tiles: 4,
        }
    }

    /// The tile shape for vectors of `vector_size`, folding integer sums (the compaction's
    /// counts; the scan sets its own operator).
    pub(crate) fn blueprint(&self, vector_size: usize) -> TileBlueprint {
        TileBlueprint {
            units: self.units_per_cube,
            vectors_per_unit: (self.elements_per_unit / vector_size as u32).max(1),
            use_planes: self.use_planes,
            fold: Fold::COUNT,
        }
    }
}
