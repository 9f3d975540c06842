//! What one cube does with one tile of a compaction: compute the tile's flags in registers,
//! rank them with the scan's register scan, and write each element to its slot.

use cubecl::prelude::*;

use super::flags::{run_start_flags, vector_flags};
use super::{FlagRule, Rejected};
use crate::radix::keys::KeyKind;
use crate::scan::TileBlueprint;
use crate::scan::tile::{
    cube_total, scan_flag_registers, scan_registers, scan_vector_counts, unit_vector_index,
};

/// Compile-time shape of a compaction kernel: only what changes control flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CompactConfig {
    pub rule: FlagRule,
    /// `BitClear` reads 64-bit patterns (the value dtype is 64 bits wide).
    pub wide: bool,
    /// Comparisons run in f32 (f16 and bf16 values: exact widening).
    pub compare_in_f32: bool,
    /// `RunStart` compares neighbours by their radix keys of this kind; `None` for the other
    /// rules.
    pub run_key: Option<KeyKind>,
    /// Survivors' values are written.
    pub write_values: bool,
    /// Survivors' positions are written.
    pub write_indices: bool,
    pub rejected: Rejected,
    /// The tile's values stay in registers from their load to their write; else
    /// [`rank_tile`] loads the vectors written again after the rank.
    pub hold_values: bool,
    /// The count pass leaves each unit's flags as the bits of one word (bit `k * N + j`:
    /// element `j` of its vector `k`), and the scatter reads them there instead of computing
    /// them again: it then loads only the values vectors it writes. Needs at most 32
    /// elements a unit.
    pub flag_words: bool,
    /// With `flag_words`, the scatter ranks from the words alone ([`scatter_words`]): set
    /// where its survivors are known to be sparse, where that was measured to win.
    pub word_rank: bool,
    /// The rank packs this many bits a vector's flag count into words, several vectors a
    /// plane scan ([`crate::scan::tile::scan_flag_registers`]); 0: one plane scan a vector
    /// ([`crate::scan::tile::scan_registers`]). Needs planes.
    pub rank_field_bits: u32,
    pub blueprint: TileBlueprint,
}

impl CompactConfig {
    /// Input values are read: to write them, or to compare them.
    pub fn load_values(&self) -> bool {
        self.write_values || self.rule != FlagRule::Mask
    }

    pub fn load_mask(&self) -> bool {
        self.rule == FlagRule::Mask
    }

    /// The scatter ranks from its flag words alone ([`scatter_words`]): it has them, is asked
    /// to, and writes survivors only.
    pub fn ranks_words(&self) -> bool {
        self.flag_words && self.word_rank && self.rejected == Rejected::Drop
    }
}

/// Vector `at` of the values, or zeros when the config reads no values.
#[cube]
pub fn load_values<E: Numeric, N: Size>(
    values: &[Vector<E, N>],
    at: usize,
    #[comptime] config: CompactConfig,
) -> Vector<E, N> {
    if comptime!(config.load_values()) {
        values[at]
    } else {
        Vector::new(E::from_int(0))
    }
}

/// The flags of vector `at`: from the mask, or from `values` (vector `at` of `all_values`,
/// already loaded) by the rule; `RunStart` also reads the element before the vector unless
/// the vector opens its row (`row_start`).
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn load_flags<E: Numeric, M: Numeric, N: Size>(
    all_values: &[Vector<E, N>],
    values: Vector<E, N>,
    mask: &[Vector<M, N>],
    threshold: E,
    at: usize,
    row_start: bool,
    #[comptime] config: CompactConfig,
) -> Vector<u32, N> {
    if comptime!(config.rule == FlagRule::RunStart) {
        let mut before = values;
        if !row_start {
            before = all_values[at - 1];
        }
        run_start_flags::<E, N>(values, before, row_start, config.run_key.unwrap())
    } else {
        let m = if comptime!(config.load_mask()) {
            mask[at]
        } else {
            Vector::new(M::from_int(0))
        };
        vector_flags::<E, M, N>(
            values,
            m,
            threshold,
            config.rule,
            config.wide,
            config.compare_in_f32,
        )
    }
}

/// Vector `index` of the row at `row_base` (zeros when the config reads no values) and its
/// flags.
#[cube]
fn load_vector<E: Numeric, M: Numeric, N: Size>(
    values: &[Vector<E, N>],
    mask: &[Vector<M, N>],
    threshold: E,
    row_base: usize,
    index: usize,
    #[comptime] config: CompactConfig,
) -> (Vector<E, N>, Vector<u32, N>) {
    let at = row_base + index;
    let v = load_values::<E, N>(values, at, config);
    let f = load_flags::<E, M, N>(values, v, mask, threshold, at, index == 0, config);
    (v, f)
}

/// Loads this unit's vectors of a tile: values into `held` (when the config reads and holds
/// them) and flags into `ranks` (which [`crate::scan::tile::scan_registers`] then ranks in
/// place; the scatter reads each flag back as a step of its vector's ranks, so no copy of the
/// flags holds registers through the scan). Elements past the row's end get flag 0.
#[cube]
#[allow(clippy::too_many_arguments)]
fn load_tile<E: Numeric, M: Numeric, N: Size>(
    values: &[Vector<E, N>],
    mask: &[Vector<M, N>],
    threshold: E,
    word: u32,
    held: &mut Array<Vector<E, N>>,
    ranks: &mut Array<Vector<u32, N>>,
    row_base: usize,
    tile_start: usize,
    row_vectors: usize,
    #[comptime] config: CompactConfig,
) {
    let blueprint = config.blueprint;
    #[unroll]
    for k in 0..blueprint.vectors_per_unit {
        let index = tile_start + unit_vector_index(k, blueprint);
        let mut f = Vector::<u32, N>::new(0u32);
        if index < row_vectors {
            if comptime!(config.flag_words) {
                f = word_flags::<N>(word, k);
                // The flags are known before any value: load only the vectors written.
                let keep = comptime!(config.rejected == Rejected::Keep);
                let written = keep || flags_sum::<N>(f) > 0u32;
                if comptime!(config.hold_values && config.write_values) && written {
                    held[k as usize] = values[row_base + index];
                }
            } else {
                let (v, vector_flags) =
                    load_vector::<E, M, N>(values, mask, threshold, row_base, index, config);
                if comptime!(config.hold_values) {
                    held[k as usize] = v;
                }
                f = vector_flags;
            }
        }
        ranks[k as usize] = f;
    }
}

/// The flags of a unit's vector `k`, from its flag word (see [`CompactConfig::flag_words`]).
#[cube]
fn word_flags<N: Size>(word: u32, k: u32) -> Vector<u32, N> {
    let mut f = Vector::<u32, N>::new(0u32);
    let width = f.vector_size().comptime() as u32;
    #[unroll]
    for j in 0..f.vector_size() {
        f.insert(j, (word >> (k * width + j as u32)) & 1u32);
    }
    f
}

/// Where this unit's flag word of `tile` lives: a tile's words are its units' in unit order
/// (the count pass writes them there, the scatter reads them back).
#[cube]
pub fn flag_word_index(tile: usize, #[comptime] blueprint: TileBlueprint) -> usize {
    tile * comptime!(blueprint.units as usize) + UNIT_POS as usize
}

/// The flagged elements of a vector.
#[cube]
fn flags_sum<N: Size>(f: Vector<u32, N>) -> u32 {
    let mut sum = 0u32;
    #[unroll]
    for j in 0..f.vector_size() {
        sum += f.extract(j);
    }
    sum
}

/// A unit's flags as the bits of one word: bit `k * N + j` is element `j` of its vector `k`.
#[cube]
fn flag_bits<N: Size>(f: Vector<u32, N>, k: u32) -> u32 {
    let width = f.vector_size().comptime() as u32;
    let mut bits = 0u32;
    #[unroll]
    for j in 0..f.vector_size() {
        bits |= f.extract(j) << (k * width + j as u32);
    }
    bits
}

/// Loads and ranks this unit's part of a tile for a scatter: its flags into `ranks`, ranked
/// across the cube by [`crate::scan::tile::scan_registers`] (with `prefixes`), and the values
/// it writes into `held`. Returns the tile's survivors. Every unit must call it: the rank is
/// cube-wide.
///
/// With `hold_values` the values stay in `held` from their load on. Without, only the ranks
/// are kept through the rank, and the values vectors [`scatter_tile`] writes are loaded again
/// after it: those holding a survivor (a vector's last inclusive rank is its survivors), or
/// every one where rejected elements are kept as themselves. The vectors left out are never
/// read.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn rank_tile<E: Numeric, M: Numeric, N: Size>(
    values: &[Vector<E, N>],
    mask: &[Vector<M, N>],
    threshold: E,
    word: u32,
    held: &mut Array<Vector<E, N>>,
    ranks: &mut Array<Vector<u32, N>>,
    prefixes: &mut Array<u32>,
    row_base: usize,
    tile_start: usize,
    row_vectors: usize,
    #[comptime] config: CompactConfig,
) -> u32 {
    let blueprint = config.blueprint;
    load_tile::<E, M, N>(
        values,
        mask,
        threshold,
        word,
        held,
        ranks,
        row_base,
        tile_start,
        row_vectors,
        config,
    );
    let total = if comptime!(config.rank_field_bits > 0) {
        scan_flag_registers::<N>(ranks, prefixes, config.rank_field_bits, blueprint)
    } else {
        scan_registers::<u32, N>(ranks, prefixes, blueprint)
    };
    if comptime!(!config.hold_values && config.write_values) {
        #[unroll]
        for k in 0..blueprint.vectors_per_unit {
            let index = tile_start + unit_vector_index(k, blueprint);
            let r = ranks[k as usize];
            let survivors = r.extract(r.vector_size().comptime() - 1);
            let keep = comptime!(config.rejected == Rejected::Keep);
            if index < row_vectors && (keep || survivors > 0u32) {
                held[k as usize] = values[row_base + index];
            }
        }
    }
    total
}

/// The number of flagged elements of a tile (every unit gets it), and this unit's flags as
/// the bits of one word ([`CompactConfig::flag_words`]; 0 without).
#[cube]
pub fn count_tile<E: Numeric, M: Numeric, N: Size>(
    values: &[Vector<E, N>],
    mask: &[Vector<M, N>],
    threshold: E,
    row_base: usize,
    tile_start: usize,
    row_vectors: usize,
    #[comptime] config: CompactConfig,
) -> (u32, u32) {
    let blueprint = config.blueprint;
    let mut count = 0u32;
    let mut bits = 0u32;
    #[unroll]
    for k in 0..blueprint.vectors_per_unit {
        let index = tile_start + unit_vector_index(k, blueprint);
        if index < row_vectors {
            let (_, f) = load_vector::<E, M, N>(values, mask, threshold, row_base, index, config);
            count += flags_sum::<N>(f);
            if comptime!(config.flag_words) {
                bits |= flag_bits::<N>(f, k);
            }
        }
    }
    (cube_total::<u32>(count, blueprint), bits)
}

/// A scatter's tile from its flag words ([`CompactConfig::ranks_words`]): each vector's
/// survivors are the bits of its field of this unit's `word`, their count a popcount, ranked
/// across the cube as counts ([`scan_vector_counts`]); a vector with no survivor is neither
/// loaded nor walked, and a survivor's slot is its vector's offset plus the survivors before it
/// in the vector. No flag or rank is held an element, so a sparse tile costs its words, the
/// rank and its survivors. Returns the tile's survivors. Every unit must call it: the rank
/// is cube-wide.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn scatter_words<E: Numeric, I: Numeric, N: Size>(
    values: &[Vector<E, N>],
    word: u32,
    values_out: &mut [E],
    indices_out: &mut [I],
    placement: TilePlacement,
    row_base: usize,
    tile_start: usize,
    #[comptime] config: CompactConfig,
) -> u32 {
    let blueprint = config.blueprint;
    let vpu = blueprint.vectors_per_unit;
    let width = Vector::<u32, N>::new(0u32).vector_size().comptime() as u32;
    let field = comptime!((1u32 << width) - 1);
    // Each vector's field of the word (bits are set only for vectors inside the row: the
    // count pass's words), and its survivors.
    let mut fields = Array::<u32>::new(vpu as usize);
    let mut counts = Array::<u32>::new(vpu as usize);
    #[unroll]
    for k in 0..vpu {
        let bits = (word >> (k * width)) & field;
        fields[k as usize] = bits;
        counts[k as usize] = bits.count_ones();
    }
    let mut prefixes = Array::<u32>::new(vpu as usize);
    let total = scan_vector_counts(&counts, &mut prefixes, config.rank_field_bits, blueprint);
    #[unroll]
    for k in 0..vpu {
        let bits = fields[k as usize];
        if bits != 0u32 {
            let index = tile_start + unit_vector_index(k, blueprint);
            let v = load_values::<E, N>(values, row_base + index, config);
            let mut slot =
                placement.out_row_base + placement.offset + prefixes[k as usize] as usize;
            #[unroll]
            for j in 0..width {
                if (bits >> j) & 1u32 == 1u32 {
                    if slot < placement.out_len {
                        let position = index * width as usize + j as usize;
                        write_slot::<E, I>(
                            values_out,
                            indices_out,
                            slot,
                            v.extract(j as usize),
                            position,
                            config,
                        );
                    }
                    slot += 1;
                }
            }
        }
    }
    total
}

/// Where the tile's elements go in their row's output.
#[derive(CubeType, Clone, Copy)]
pub struct TilePlacement {
    /// First element of the row in the outputs.
    pub out_row_base: usize,
    /// Survivors of the row before this tile.
    pub offset: usize,
    /// Survivors of the whole row (read only when rejected elements are placed).
    pub row_total: usize,
    /// Slots of the outputs: a survivor's slot at or past it is not written (a counted
    /// compaction's outputs hold the total its caller read; a wrong one loses survivors
    /// instead of writing past them).
    pub out_len: usize,
}

/// Writes each element of a ranked tile to its slot: a survivor to `offset` + its rank among
/// the row's survivors; a rejected element (unless `Drop`) to `row_total` + its rank among
/// the row's rejected elements, as itself (`Keep`) or as zero (`Zero`).
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn scatter_tile<E: Numeric, I: Numeric, N: Size>(
    held: &Array<Vector<E, N>>,
    ranks: &Array<Vector<u32, N>>,
    prefixes: &Array<u32>,
    values_out: &mut [E],
    indices_out: &mut [I],
    placement: TilePlacement,
    tile_start: usize,
    row_vectors: usize,
    #[comptime] config: CompactConfig,
) {
    let blueprint = config.blueprint;
    #[unroll]
    for k in 0..blueprint.vectors_per_unit {
        let index = tile_start + unit_vector_index(k, blueprint);
        if index < row_vectors {
            let r = ranks[k as usize];
            let v = held[k as usize];
            let width = r.vector_size().comptime();
            // Survivors of the row before this vector.
            let row_before = placement.offset + prefixes[k as usize] as usize;
            // Survivors of the vector before element `j` (ranks are inclusive from the
            // vector's start: `scan_registers`), so element `j`'s flag is its rank's step.
            let mut below = 0u32;
            #[unroll]
            for j in 0..width {
                let position = index * width + j;
                let rank = r.extract(j);
                let flag = rank - below;
                // Survivors of the row before this element.
                let before = row_before + below as usize;
                below = rank;
                let slot = placement.out_row_base + before;
                if flag == 1u32 && slot < placement.out_len {
                    write_slot::<E, I>(
                        values_out,
                        indices_out,
                        slot,
                        v.extract(j),
                        position,
                        config,
                    );
                } else if comptime!(config.rejected != Rejected::Drop) {
                    let rejected_before = position - before;
                    let slot = placement.out_row_base + placement.row_total + rejected_before;
                    if comptime!(config.rejected == Rejected::Keep) {
                        write_slot::<E, I>(
                            values_out,
                            indices_out,
                            slot,
                            v.extract(j),
                            position,
                            config,
                        );
                    } else {
                        write_slot::<E, I>(
                            values_out,
                            indices_out,
                            slot,
                            E::from_int(0),
                            0usize,
                            config,
                        );
                    }
                }
            }
        }
    }
}

/// Writes one output slot: the value and/or the position, as the config asks.
///
/// Race-free for values of every size: every strategy writes each slot from exactly one unit,
/// and a value is one store of its own element type. Neighbouring 1- and 2-byte slots are
/// often written by different cubes, but an `E` of 8 or 16 bits is stored as such (a byte or
/// half-word store: CUDA and HIP address bytes, SPIR-V's 8- and 16-bit storage access and
/// WGSL's `f16` store the element alone), never as a read-modify-write of the 32-bit word
/// around it. A dtype only launches where the runtime registers it
/// (`DeviceCaps::check_dtype`): WGSL has no 8- or 16-bit integers, so they are refused there
/// rather than packed into words.
#[cube]
pub fn write_slot<E: Numeric, I: Numeric>(
    values_out: &mut [E],
    indices_out: &mut [I],
    slot: usize,
    value: E,
    position: usize,
    #[comptime] config: CompactConfig,
) {
    if comptime!(config.write_values) {
        values_out[slot] = value;
    }
    if comptime!(config.write_indices) {
        indices_out[slot] = I::cast_from(position);
    }
}
