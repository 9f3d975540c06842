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
//!   and signs stay). The passes rank order-preserving *radix keys* of the key's own width
//!   in a `u32` (`radix::keys::radix_key`): 8 bits for i8/u8 (one 8-bit pass), 16 for i16/u16/
//!   f16/bf16 (two; f16 and bf16 keyed as their 16-bit patterns), 32 for f32/i32/u32 (four),
//!   two 32-bit words for i64/u64/f64 (eight). f32, i32 and u32 keys ride through the LSD
//!   passes as their own bits (the radix key is recomputed from them, so no encode or decode
//!   pass); the others are encoded to radix words and the outputs are gathered from the
//!   input by the final permutation.
//! - Deterministic: every pass is a stable counting sort with integer counts.
//! - Key dtypes: every [`Dtype`]: f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64.
//!   The 8-, 16- and 32-bit ones are read as their own dtype, which the device must have
//!   (else [`SieveError::UnsupportedDtype`](crate::SieveError::UnsupportedDtype) names it:
//!   WGSL has no 8- or 16-bit integers); 64-bit keys are read as pairs of 32-bit words and
//!   need no 64-bit support. Index dtypes: i32, u32 and i64 (i64 indices need the device's
//!   64-bit integers).
//!
//! # Strategies
//! Both rank a tile of keys by one digit with `tile::rank_tile`: plane votes where the device
//! has plane operations (`plane_ballot` on each digit bit gives every key its peers in the
//! plane; per-plane digit counters carry counts across the plane's keys), else one-bit splits
//! ranked by cube-wide scans.
//! - [`SortStrategy::InCube`]: one cube per row, the row held in registers, one ranking per
//!   `in_cube_radix_bits` digit from the least significant, reordered through shared memory
//!   after each. One launch, no device-wide pass: rows up to
//!   [`SortTuning::in_cube_capacity`] keys (not 64-bit keys).
//! - [`SortStrategy::Lsd`]: least-significant-digit radix sort, `radix_bits` per pass. Each
//!   pass: every tile counts its digits (shared-memory counters), the counts of a row, laid out
//!   digit-major (`[digit][tile]`), are scanned by `scan::scan` into each (digit, tile)'s first
//!   output slot, then every tile ranks its keys by the digit, puts them in digit order in
//!   shared memory and writes each to its slot: consecutive keys of a digit land on
//!   consecutive slots. The first pass makes the positions, the last writes the outputs.
//!   64-bit keys: the low radix words are sorted, then the high words (read at the positions
//!   the first sort gave) - LSD order makes that a sort by the whole key.
//! - [`SortStrategy::Onesweep`]: the same digit passes in one launch each (after Adinets and
//!   Merrill's onesweep): one kernel first counts every pass's digits of every row in a
//!   single read of the keys; then in each pass every tile takes its number in start order,
//!   ranks its keys and finds each digit's first slot through a per-digit decoupled
//!   look-back over the row's earlier tiles (`common::lookback::digit_prefix`), the row's
//!   first tile seeding it with the digit's start in the row. A pass reads its keys once
//!   (the `Lsd` pass reads them twice, and scans a count per tile and digit between).
//!   Needs forward progress between cubes ([`DeviceCaps::forward_progress`](crate::DeviceCaps):
//!   CUDA, HIP) and rows shorter than 2^30 keys (a status word holds a 30-bit count); a forced `Onesweep`
//!   elsewhere is refused.
//! - [`SortStrategy::Auto`]: `InCube` when a row fits one cube (and keys are not 64-bit);
//!   else `Onesweep` where it runs, for 32-bit keys, at least 2^26 in all, alone or in at
//!   least 1024 rows (on the H200, ms against `Lsd`: keys alone 11.65 / 12.70 at 2^28, 0.977 /
//!   0.896 at 2^24; with positions 6.75 / 7.54 at [4096, 32768], 14.90 / 14.39 on one 2^28
//!   row); else `Lsd`. The sort returns which ran.

mod kernels;
pub(crate) mod launch;
pub mod reference;
mod tile;

pub use launch::sort;

/// Whether sorting keys of `dtype` (or selecting the top k of them) needs the device to have
/// `dtype`: every key is read as its own dtype, except 64-bit keys, which are read as pairs
/// of 32-bit words and so sort on every device.
pub fn key_needs_device_dtype(dtype: Dtype) -> bool {
    !crate::radix::keys::KeyKind::of(dtype).wide()
}

use cubecl::server::Handle;

use crate::Dtype;

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortOrder {
    /// Smallest first (NaN last).
    #[default]
    Ascending,
    /// Largest first (NaN first); equal keys still keep their input order.
    Descending,
}

/// Which algorithm sorts (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortStrategy {
    /// `InCube` when a row fits one cube and the keys are not 64-bit, else `Onesweep` for
    /// 2^26 or more 32-bit keys, alone or in 1024 or more rows, where the device runs it,
    /// else `Lsd`.
    #[default]
    Auto,
    /// One cube per row, rows up to [`SortTuning::in_cube_capacity`] keys; not 64-bit keys.
    InCube,
    /// Device-wide least-significant-digit passes: any row length, every key dtype.
    Lsd,
    /// `Lsd`'s passes, one launch each, chained by a per-digit look-back: where cubes have
    /// forward progress, rows below 2^30 keys.
    Onesweep,
}

impl SortStrategy {
    /// The strategy's snake_case name, for messages and bench rows.
    pub fn name(self) -> &'static str {
        match self {
            SortStrategy::Auto => "auto",
            SortStrategy::InCube => "in_cube",
            SortStrategy::Lsd => "lsd",
            SortStrategy::Onesweep => "onesweep",
        }
    }
}

/// The shape of a sort: `rows` independent rows of `len` contiguous keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortProblem {
    /// Independent rows of the problem, each sorted on its own.
    pub rows: usize,
    /// Keys per row: at most `u32::MAX` (positions are 32-bit), `i32::MAX` with i32 indices.
    pub len: usize,
}

/// The buffers of one sort; every one `[rows, len]` elements.
#[derive(Debug, Clone, Copy)]
pub struct SortIo<'a> {
    /// The keys to sort (only read).
    pub keys: &'a Handle,
    /// The dtype of `keys` and `keys_out`: any [`Dtype`] (the 8-, 16- and 32-bit ones where
    /// the device has them; 64-bit keys on every device).
    pub key_dtype: Dtype,
    /// The sorted keys (the input's dtype).
    pub keys_out: Option<&'a Handle>,
    /// Each output element's position in its input row.
    pub indices_out: Option<&'a Handle>,
    /// The dtype of `indices_out`: i32, u32 or i64 (i64 where the device has 64-bit
    /// integers).
    pub index_dtype: Dtype,
}

/// Tile shapes and digit widths: plain data, chosen from the device, overridable. The device's
/// limits (units per cube, shared memory) are not fields: they come from
/// [`DeviceCaps`](crate::DeviceCaps) at each call, and a tuning that does not fit them is
/// refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SortTuning {
    /// Units per cube of the LSD passes (a power of two, at least the plane width).
    pub units_per_cube: u32,
    /// Keys per unit per `Lsd` tile where positions ride with the keys (`sort_with_indices`,
    /// argsort, every key that is not 32-bit).
    pub elements_per_unit: u32,
    /// Keys per unit per `Onesweep` tile where positions ride with the keys.
    pub onesweep_elements_per_unit: u32,
    /// Keys per unit per `Lsd` tile of a keys-only sort of 32-bit keys (no positions: half the
    /// registers and shared memory a key).
    pub keys_only_elements_per_unit: u32,
    /// The same for `Onesweep` tiles.
    pub onesweep_keys_only_elements_per_unit: u32,
    /// Bits per LSD pass (1..=8).
    pub radix_bits: u32,
    /// Bits per ranking of the in-cube sort (1..=8), for rows longer than
    /// [`SHORT_ROW`](Self::SHORT_ROW) keys.
    pub in_cube_radix_bits: u32,
    /// Bits per ranking of the in-cube sort for rows of at most `SHORT_ROW` keys: fewer
    /// digits to prefix per ranking pays for the extra rankings there.
    pub short_row_radix_bits: u32,
    /// About how many keys each unit of the in-cube sort holds (a power of two): fewer keys
    /// per unit give short rows more units per cube, so an SM holds more threads.
    pub in_cube_keys_per_unit: u32,
    /// Rank with plane votes (the device must have plane operations); else one-bit splits.
    pub use_planes: bool,
    /// Predecessors a onesweep tile's per-digit look-back reads at once (at least 1).
    pub walk_window: u32,
    /// Copies of each digit's bin in the onesweep counting pass (1..=32; as many as fit the
    /// device's shared memory): units spread their atomics over them, so keys sharing a digit
    /// do not serialise a plane on one word.
    pub count_parts: u32,
    /// Keys each unit of the onesweep counting pass loads before it counts them (1..=32):
    /// loads in flight, where one at a time leaves that pass waiting on memory. Above 1, each
    /// `Lsd` pass's per-tile counting also loads a unit's keys of the tile before counting them.
    /// 8 by default (`bench/results/h100/44-cl`, H100, ms, 1 against 8 loads: onesweep i32
    /// keys 2^28 6.194 / 5.848 (16: 5.845), f32 pairs 2^28 10.844 / 10.580; Lsd f32 pairs 2^24
    /// 0.812 / 0.758 through CUDA, 1.241 / 1.112 through Vulkan, 2^28 18.73 / 17.12).
    pub count_loads: u32,
    /// The same for the `Lsd` passes' per-tile digit counts (`bench/results/h200/25-b`, 2^24
    /// keys: i32 keys alone 0.607 ms at 1 copy, 0.583 at 8; f32 keys with positions, spread
    /// over every digit, 0.737 and 0.746).
    pub lsd_count_parts: u32,
    /// `Lsd` passes carrying positions hold only each key's digit through the ranking and read
    /// the key and its position again to stage them (fewer registers through the ranking, a
    /// second read that the tile's first one left cached); off, they hold both from the load.
    pub lsd_rereads: bool,
    /// The same for `Onesweep` passes carrying positions.
    pub onesweep_rereads: bool,
    /// The same for keys-only passes of either strategy.
    pub keys_only_rereads: bool,
    /// Device-wide passes over f32 keys map each to its radix key by the sign flip alone where
    /// the sort's first read of the keys met no -0.0 and no NaN (it sets a word; each later
    /// cube reads it and takes that map or the full one): the same order in fewer
    /// instructions a key. On through CUDA, where it was timed and its tests ran on the H200
    /// (`bench/results/h200/38-vf`, `38-pt`: random f32 keys alone at 2^28, onesweep 6.43-6.45
    /// ms against 6.89-6.90 with the full map, Lsd 7.76-7.77 against 8.38-8.39). Off through
    /// Vulkan, where it was slower at 2^24 (`bench/results/h100/39-pr`, H100, Lsd: 1.078 ms
    /// against 1.029 keys alone, 1.343 against 1.250 with indices; 1.3% faster at 2^28), and
    /// through the runtimes never timed (the map is integer-only; the tests run both maps on
    /// every runtime).
    pub plain_float_keys: bool,
    /// `Lsd` passes over rows of at most this many tiles take no scan launch: each scatter
    /// cube sums its row's per-tile digit counts itself (`TileOffsets::Summed`; every cube
    /// of a row reads the row's `digits x tiles` counts, so only short rows). 0: always scan.
    /// 32 by default (`bench/results/h100/42-ab`, sort_with_indices i32, ms, scanned against
    /// summed: 13 tiles (10^5, CUDA) 0.116 / 0.095, 25 (10^5, Vulkan) 0.101 / 0.077, 32
    /// (2^18, CUDA) 0.119 / 0.110; 64 (2^18, Vulkan) 0.098 / 0.105, 128 (2^20, CUDA) 0.139 /
    /// 0.172).
    pub lsd_summed_max_tiles: u32,
}

impl SortTuning {
    /// Rows up to this many keys rank with `short_row_radix_bits`.
    pub const SHORT_ROW: usize = 256;

    /// 256 units (or as many as a cube may have) x 32 keys (Lsd with positions: 8192-key
    /// tiles), 24 (keys alone, Lsd: 6144), 28 (keys alone, onesweep: 7168) or 20 (onesweep with
    /// positions: 5120), 8-bit digits (4 passes for 32-bit keys), the onesweep look-back reading 4
    /// predecessors at once; in one cube 8-bit digits, 6-bit for short rows. Measured on the
    /// H200 (`bench/results/h200/13-b`, `13-c`: two sweeps of units 128/256/512 x keys 8/12/16
    /// at 2^26, each strategy): with positions 256 x 12 was the fastest or within 5% of it for
    /// both strategies (onesweep 3.84-3.92 ms, 256 x 8 3.96-4.04); keys only, onesweep at 256 x
    /// 16 took 2.96-3.00 ms against 3.45-3.54 at 256 x 8. With the leaner ranker of the
    /// seventeenth session (`17-a`, `17-b`, 2^28 i32 keys alone, ms): onesweep 12.29 at 16 keys
    /// and window 1, 11.27 at window 4, 10.40 at 20 keys, 9.77 at 20 keys and window 4, 9.05 at
    /// 24 and window 4 (9.48 at window 1); Lsd 9.8-10.3 at 16-24 keys. Rows of 128 keys sort in
    /// 0.086 ms with 6-bit digits, 0.095 ms with 4-bit, 0.104 ms with 8-bit
    /// (`log-sort-tuning.txt`). With positions after the
    /// twenty-first session's ranker (`21-d`, sort_with_indices f32, ms): at 2^26 onesweep
    /// 3.206 holding keys and positions at 12 keys a unit, 2.833 reading them again, 2.806
    /// holding at 16; Lsd 3.119 holding at 12, 3.217 reading again, 3.088 holding at 16; at
    /// 2^28 reading again at 16, onesweep 10.117 and Lsd 11.855 (both strategies at the old
    /// defaults: 12.38, `21-c`). Keys alone at 2^26, onesweep: 2.020 holding at 24, 2.097
    /// reading again at 24, 2.002 at 32. So onesweep tiles with positions took 16 keys a unit
    /// (20 since the forty-fourth session, below) and read again; Lsd and keys-only tiles keep
    /// theirs. Keys-only passes read again since their ranker stores ranks (`22-b`, `22-c`; PERFORMANCE.md, twenty-second session). Lsd
    /// with positions at 2^24 (`23-c`, three rounds, ms): 0.856-0.885 holding at 12 keys,
    /// 0.854-0.866 holding at 16, reading again 0.836-0.838 at 16, 0.821-0.829 at 20 and
    /// 0.792-0.799 at 24; at 32 (`23-d`, `23-e`) 0.749-0.762 against 0.779-0.783 at 24 (2^25:
    /// 1.369 against 1.461; 28 slower than both); so Lsd's tiles with positions take 32 keys a
    /// unit (64 KiB with positions) and read again. Keys alone at 2^28 (`24-b`, onesweep, ms):
    /// 6.997 at 20 keys a unit, 6.821 at 24, 6.600 at 28, 7.007 at 32 (the look-back reading 4
    /// predecessors at once; 8 was slower at every width: 6.88-10.14); 512 units x 12 8.088, x 16
    /// 7.281. Lsd's keys-only tiles at 2^24 (`24-c`): 0.633 at 24 keys a unit, 0.687 at 28. So
    /// keys-only onesweep tiles take 28 keys a unit, Lsd's 24. Onesweep with positions after
    /// the counting pass's batched loads (`bench/results/h100/44-tw`, H100, sort_with_indices
    /// f32 2^28, ms): 256 units x 12 keys 11.538, x 16 10.629, **x 20 9.650**; 512 x 12 10.146,
    /// x 16 9.724, x 20 10.735: so 20 keys a unit (16 before). The onesweep counting pass
    /// keeps 8 copies of each bin (`24-d`: sort i32 2^28 6.612 ms at 1, 6.201 at 8), and so do
    /// Lsd's per-tile counts (`25-b`, 2^24: i32 keys alone 0.607 at 1, 0.583 at 8; f32 keys with
    /// positions 0.737 and 0.746).
    ///
    /// Where the LSD tile and its ranker's state do not fit the device's shared memory, the
    /// tile takes fewer keys per unit (the split ranker needs 8 bytes a key more), then the
    /// digits narrow (the plane ranker's counters grow with planes x digits: 64 KiB for 256
    /// units in 4-lane planes at 8 bits), then (one-bit digits) the cube takes fewer units. Not
    /// measured on such devices: this keeps them correct; the in-cube sort's capacity shrinks
    /// with the same limits.
    pub fn for_device(caps: &crate::DeviceCaps) -> Self {
        let mut tuning = SortTuning {
            units_per_cube: caps.cube_units(256),
            elements_per_unit: 32,
            onesweep_elements_per_unit: 20,
            keys_only_elements_per_unit: 24,
            onesweep_keys_only_elements_per_unit: 28,
            radix_bits: 8,
            in_cube_radix_bits: 8,
            short_row_radix_bits: 6,
            in_cube_keys_per_unit: 8,
            use_planes: caps.plane_ops,
            walk_window: 4,
            count_parts: 8,
            count_loads: 8,
            lsd_count_parts: 8,
            lsd_rereads: true,
            onesweep_rereads: true,
            keys_only_rereads: true,
            plain_float_keys: caps.runtime == "cuda",
            lsd_summed_max_tiles: 32,
        };
        // Onesweep's tile with positions takes 20 keys a unit where that fits, else the 16 it
        // took before the forty-fourth session (then halving, below, as every tile).
        if tuning.tile_bytes(caps, (true, true)) > caps.max_shared_bytes {
            tuning.onesweep_elements_per_unit = 16;
        }
        // Each device-wide tile that does not fit takes half the keys a unit, on its own (a
        // device of 48 KiB keeps the keys-only and onesweep tiles whole when Lsd's with
        // positions, 48 KiB of keys and positions alone, does not fit); a tile of one key a unit
        // that still does not fit narrows the digits, which every tile shares.
        while tuning.device_tile_bytes(caps) > caps.max_shared_bytes {
            let mut narrower = false;
            for tile in Self::DEVICE_TILES {
                if tuning.tile_bytes(caps, tile) > caps.max_shared_bytes {
                    let epu = tuning.tile_elements_per_unit(tile);
                    if *epu > 1 {
                        *epu = epu.div_ceil(2);
                    } else {
                        narrower = true;
                    }
                }
            }
            if narrower {
                if tuning.radix_bits > 1 {
                    tuning.radix_bits -= 1;
                } else if tuning.units_per_cube > caps.plane_size_max.max(1) {
                    // One-bit digits and one key a unit still too large: fewer units (the
                    // ranker's scan spine and a tile's words shrink with them).
                    tuning.units_per_cube /= 2;
                } else {
                    break;
                }
            }
        }
        tuning
    }

    /// The device-wide tiles as (with positions, onesweep).
    const DEVICE_TILES: [(bool, bool); 4] =
        [(true, false), (true, true), (false, false), (false, true)];

    /// Shared memory of a device-wide pass's kernel over this tile: keys, positions where they
    /// ride (else a one-word placeholder), the ranker's state, each digit's slot base
    /// (`scatter_kernel`'s `slot_base`, `onesweep_kernel`'s `digit_slots`) and, for onesweep,
    /// its tile number's word and the spine of its row-start scan (for Lsd, the word of the
    /// summed slot bases' scan). Every array the kernel
    /// allocates: a tuning accepted by this account must launch (`widest_accepted_tiles_run`).
    fn tile_bytes(
        &self,
        caps: &crate::DeviceCaps,
        (with_positions, onesweep): (bool, bool),
    ) -> usize {
        let blueprint = self.device_blueprint(caps, with_positions, onesweep);
        let positions = if with_positions {
            4 * blueprint.tile()
        } else {
            4
        };
        // Onesweep: its tile number's word and row-start spine; Lsd: the summed slot bases'
        // scan total (`TileOffsets::Summed`).
        let pass_words = if onesweep {
            4 + 4 * blueprint.units as usize
        } else {
            4
        };
        4 * blueprint.tile()
            + positions
            + blueprint.ranking_bytes()
            + 4 * blueprint.digits()
            + pass_words
    }

    /// The keys-a-unit field of a device-wide tile.
    fn tile_elements_per_unit(&mut self, (with_positions, onesweep): (bool, bool)) -> &mut u32 {
        match (with_positions, onesweep) {
            (false, false) => &mut self.keys_only_elements_per_unit,
            (false, true) => &mut self.onesweep_keys_only_elements_per_unit,
            (true, false) => &mut self.elements_per_unit,
            (true, true) => &mut self.onesweep_elements_per_unit,
        }
    }

    /// Shared memory of the largest device-wide tile (`Lsd` or `Onesweep`, with positions or
    /// keys alone), plus the ranker's state.
    pub fn device_tile_bytes(&self, caps: &crate::DeviceCaps) -> usize {
        Self::DEVICE_TILES
            .into_iter()
            .map(|tile| self.tile_bytes(caps, tile))
            .max()
            .unwrap_or(0)
    }

    /// The device-wide tile's blueprint, with or without positions riding, for `Onesweep`
    /// (`onesweep`) or `Lsd`.
    pub(crate) fn device_blueprint(
        &self,
        caps: &crate::DeviceCaps,
        with_positions: bool,
        onesweep: bool,
    ) -> tile::SortBlueprint {
        // The accessor lends the field mutably (for `for_device`); read it through a copy.
        let mut tuning = *self;
        let elements_per_unit = *tuning.tile_elements_per_unit((with_positions, onesweep));
        tile::SortBlueprint::new(
            self.units_per_cube,
            elements_per_unit,
            self.radix_bits,
            self.use_planes,
            caps,
        )
        .storing_ranks(!with_positions)
    }

    /// Whether a device-wide pass holds its keys (and positions) from load to staging.
    pub(crate) fn holds_keys(&self, with_positions: bool, onesweep: bool) -> bool {
        let rereads = match (with_positions, onesweep) {
            (false, _) => self.keys_only_rereads,
            (true, true) => self.onesweep_rereads,
            (true, false) => self.lsd_rereads,
        };
        !rereads
    }

    /// Keys per device-wide tile with positions.
    pub fn tile(&self) -> usize {
        self.units_per_cube as usize * self.elements_per_unit as usize
    }

    /// The in-cube blueprint for rows of `len` keys: units from the plane width up to the
    /// most a cube may have, about `in_cube_keys_per_unit` keys each, both powers of two.
    pub(crate) fn in_cube_blueprint(
        &self,
        caps: &crate::DeviceCaps,
        len: usize,
    ) -> tile::SortBlueprint {
        let min_units = caps.plane_size_max.max(1);
        let units = (len
            .div_ceil(self.in_cube_keys_per_unit.max(1) as usize)
            .next_power_of_two() as u32)
            .clamp(min_units, caps.max_cube_units());
        let elements_per_unit = (len.div_ceil(units as usize).next_power_of_two() as u32).max(1);
        let radix_bits = if len <= Self::SHORT_ROW {
            self.short_row_radix_bits
        } else {
            self.in_cube_radix_bits
        };
        tile::SortBlueprint::new(units, elements_per_unit, radix_bits, self.use_planes, caps)
    }

    /// The longest row [`SortStrategy::InCube`] sorts on this device: the largest power of
    /// two of keys whose tile (8 bytes a key with its position, plus the ranker's state)
    /// fits in shared memory, at most 16 keys per unit.
    pub fn in_cube_capacity(&self, caps: &crate::DeviceCaps) -> usize {
        let mut len = caps.max_cube_units() as usize * 16;
        while len > 1 {
            let blueprint = self.in_cube_blueprint(caps, len);
            if blueprint.tile() * 8 + blueprint.ranking_bytes() <= caps.max_shared_bytes {
                return len;
            }
            len /= 2;
        }
        0
    }
}

/// Options of one sort call.
#[derive(Debug, Clone, Copy, Default)]
pub struct SortOptions {
    /// Which algorithm sorts; a forced `InCube` on rows that do not fit it is refused.
    pub strategy: SortStrategy,
    /// `None`: [`SortTuning::for_device`].
    pub tuning: Option<SortTuning>,
}

#[cfg(test)]
mod tests {
    use super::SortTuning;
    use crate::device::{DeviceCaps, DeviceLimits};

    fn caps(max_shared_bytes: usize) -> DeviceCaps {
        DeviceCaps {
            runtime: "test",
            device_name: "test".into(),
            plane_ops: true,
            plane_size_min: 32,
            plane_size_max: 32,
            max_units_per_cube: 1024,
            max_shared_bytes,
            multiprocessors: None,
            max_vector_size: 4,
            forward_progress: true,
            ieee_nan_compare: true,
            ordered_atomics: false,
            atomic_u64: true,
            u8: true,
            dtypes: Vec::new(),
            limits: DeviceLimits::default(),
        }
    }

    /// Only the tiles that do not fit shrink: at 48 KiB (NVIDIA's Vulkan limit) Lsd's tile with
    /// positions halves, onesweep's takes the 16 keys a unit it took before 20, and the
    /// keys-only tiles keep their keys.
    #[test]
    fn tiles_shrink_on_their_own() {
        let roomy = SortTuning::for_device(&caps(228 * 1024));
        let tight = SortTuning::for_device(&caps(48 * 1024));
        assert_eq!(roomy.elements_per_unit, 32);
        assert_eq!(tight.elements_per_unit, 16);
        assert_eq!(roomy.onesweep_elements_per_unit, 20);
        assert_eq!(tight.onesweep_elements_per_unit, 16);
        assert_eq!(
            tight.keys_only_elements_per_unit,
            roomy.keys_only_elements_per_unit
        );
        assert_eq!(
            tight.onesweep_keys_only_elements_per_unit,
            roomy.onesweep_keys_only_elements_per_unit
        );
        assert_eq!(tight.radix_bits, 8);
        for bytes in [48 * 1024, 16 * 1024, 4 * 1024] {
            let c = caps(bytes);
            let tuning = SortTuning::for_device(&c);
            assert!(tuning.device_tile_bytes(&c) <= bytes, "{bytes}: {tuning:?}");
        }
    }
}
