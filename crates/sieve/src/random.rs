//! Counter-based uniform random numbers, for sampling on the device: `u[row][j]` is a pure
//! function of the row's seed and of `j`, computed with 32-bit integer operations that every
//! runtime does exactly, so the same seed gives the same bits on every device and at every
//! launch shape, with no generator state to carry between calls.
//!
//! The hash is Chris Wellons' `lowbias32` integer finaliser (a published, measured avalanche
//! mixer), applied to the seed's words and to the counter `j` in turn (see [`reference::bits`]).
//! Its top 23 bits `m` become `u = (2m + 1) / 2^24`, the odd multiples of 2^-24: every value
//! and its `1 - u` are exact in f32 and lie in `[2^-24, 1 - 2^-24]`, never 0 or 1, so `ln(u)`
//! and `ln(-ln(u))` are finite. (24 bits' `(m + 0.5) / 2^24` is not exact past `u = 1/2`: it
//! rounds, to 1 for one value in 2^24, whose Gumbel noise is `+inf`: a token that wins any
//! draw it enters.)

use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::common::address::{address_type, check_extent};
use crate::common::buffers::BufferRules;
use crate::common::grid::{linear_unit_index, one_unit_per_element};
use crate::{DeviceCaps, Dtype, SieveError};

/// CPU reference of the device's numbers (the tests compare bit for bit).
pub mod reference {
    /// `lowbias32`: a bijective 32-bit avalanche mixer.
    pub fn mix(mut x: u32) -> u32 {
        x ^= x >> 16;
        x = x.wrapping_mul(0x7feb_352d);
        x ^= x >> 15;
        x = x.wrapping_mul(0x846c_a68b);
        x ^= x >> 16;
        x
    }

    /// The 32 random bits of counter `j` under the seed whose low and high words are `lo`,
    /// `hi` (a 32-bit seed has `hi = 0`).
    pub fn bits(lo: u32, hi: u32, j: u32) -> u32 {
        let key = mix(mix(hi ^ 0x85eb_ca6b) ^ lo);
        mix(key ^ mix(j.wrapping_mul(0x9e37_79b9) ^ 0x632b_e5ab))
    }

    /// The uniform number of 32 random bits: `(2 * top 23 bits + 1) / 2^24`, exact.
    pub fn uniform(bits: u32) -> f32 {
        ((bits >> 9) * 2 + 1) as f32 * (1.0 / 16_777_216.0)
    }

    /// `[rows, len]` uniforms of the row seeds given as `(lo, hi)` words.
    pub fn uniform_rows(seeds: &[(u32, u32)], len: usize) -> Vec<f32> {
        seeds
            .iter()
            .flat_map(|&(lo, hi)| (0..len).map(move |j| uniform(bits(lo, hi, j as u32))))
            .collect()
    }

    /// `[rows, width]` uniforms at the counters `columns` (row-major, `width` per row) of the
    /// row seeds given as `(lo, hi)` words.
    pub fn uniform_at(seeds: &[(u32, u32)], columns: &[u32], width: usize) -> Vec<f32> {
        seeds
            .iter()
            .zip(columns.chunks(width.max(1)))
            .flat_map(|(&(lo, hi), row)| row.iter().map(move |&j| uniform(bits(lo, hi, j))))
            .collect()
    }
}

#[cube]
fn mix(x: u32) -> u32 {
    let mut x = x;
    x ^= x >> 16u32;
    x *= 0x7feb_352du32;
    x ^= x >> 15u32;
    x *= 0x846c_a68bu32;
    x ^= x >> 16u32;
    x
}

/// Row `row`'s seed words `(lo, hi)`: one `u32` per seed, or two (the buffer of a 64-bit
/// seed tensor read as words, low word first).
#[cube]
pub(crate) fn seed_words(seeds: &[u32], row: usize, #[comptime] wide_seeds: bool) -> (u32, u32) {
    if wide_seeds {
        (seeds[2 * row], seeds[2 * row + 1])
    } else {
        (seeds[row], 0u32)
    }
}

/// The uniform of counter `j` under the seed words `(lo, hi)` ([`reference::bits`],
/// [`reference::uniform`]).
#[cube]
pub(crate) fn uniform_of(lo: u32, hi: u32, j: u32) -> f32 {
    odd_step_of(top_bits_of(lo, hi, j))
}

/// `(2m + 1) / 2^24` for a 23-bit `m`: exact in f32 (an odd integer below 2^24, scaled).
#[cube]
fn odd_step_of(m: u32) -> f32 {
    f32::cast_from(2u32 * m + 1u32) * (1.0f32 / 16_777_216.0f32)
}

/// The top 23 random bits `m` of counter `j` under the seed words `(lo, hi)`.
#[cube]
fn top_bits_of(lo: u32, hi: u32, j: u32) -> u32 {
    let key = mix(mix(hi ^ 0x85eb_ca6bu32) ^ lo);
    let bits = mix(key ^ mix((j * 0x9e37_79b9u32) ^ 0x632b_e5abu32));
    bits >> 9u32
}

/// `-ln(u)` of [`uniform_of`]'s `u`, to f32's relative precision also where `u` is near 1:
/// there `ln(u)` in f32 keeps only an absolute ~6e-8 of a result as small as 6e-8, which
/// moved a Gumbel score by 0.03 against the reference's. `w = 1 - u = (2(2^23 - 1 - m) + 1)
/// / 2^24` is exact in f32 (the same `w` as `1 - u` computed in f32), and `-ln(1 - w) = w +
/// w^2/2 + w^3/3 + w^4/4 + ...` (the terms left out are below 3e-8 of it for `w < 1/64`).
#[cube]
pub(crate) fn neg_ln_uniform_of(lo: u32, hi: u32, j: u32) -> f32 {
    let m = top_bits_of(lo, hi, j);
    let w = odd_step_of(0x007F_FFFFu32 - m);
    let u = odd_step_of(m);
    if w < 0.015625f32 {
        w * (1.0f32 + w * (0.5f32 + w * (0.333_333_34f32 + w * 0.25f32)))
    } else {
        -u.ln()
    }
}

/// One unit per output element `[row, j]`: the row's seed hashed with the counter `j`.
#[cube(launch_unchecked, address_type = "dynamic")]
fn uniform_rows_kernel(
    seeds: &[u32],
    out: &mut [f32],
    len: usize,
    total: usize,
    #[comptime] wide_seeds: bool,
) {
    let index = linear_unit_index();
    if index < total {
        let (lo, hi) = seed_words(seeds, index / len, wide_seeds);
        out[index] = uniform_of(lo, hi, (index % len) as u32);
    }
}

/// One unit per output element `[row, i]`: the row's seed hashed with the counter
/// `columns[row, i]` (its low word, when the columns are 64-bit).
#[cube(launch_unchecked, address_type = "dynamic")]
fn uniform_at_kernel(
    seeds: &[u32],
    columns: &[u32],
    out: &mut [f32],
    width: usize,
    total: usize,
    #[comptime] wide_seeds: bool,
    #[comptime] wide_columns: bool,
) {
    let index = linear_unit_index();
    if index < total {
        let (lo, hi) = seed_words(seeds, index / width, wide_seeds);
        let j = if wide_columns {
            columns[2 * index]
        } else {
            columns[index]
        };
        out[index] = uniform_of(lo, hi, j);
    }
}

/// Whether an integer dtype is read as two words (64-bit) or one (32-bit); others refused,
/// naming `arg`.
pub(crate) fn words_of(arg: &'static str, dtype: Dtype) -> Result<bool, SieveError> {
    match dtype {
        Dtype::I32 | Dtype::U32 => Ok(false),
        Dtype::I64 | Dtype::U64 => Ok(true),
        other => Err(SieveError::invalid(
            arg,
            other.name(),
            "i32, u32, i64 or u64",
        )),
    }
}

/// `rows * width` (named `arg`), checked to fit the device's addressing.
pub(crate) fn output_extent(
    client: &Client,
    caps: &DeviceCaps,
    arg: &'static str,
    rows: usize,
    width: usize,
) -> Result<usize, SieveError> {
    let total = rows.checked_mul(width).ok_or_else(|| {
        SieveError::invalid(arg, format!("{rows} * {width}"), "a size that fits usize")
    })?;
    check_extent(client, caps, arg, total)?;
    Ok(total)
}

/// Writes `[rows, len]` f32 uniforms to `out`, row `r`'s from `seeds[r]` (`seed_dtype`: i32,
/// u32, i64 or u64; a seed's bits are used as they are, so -1 and `u32::MAX` give the same
/// numbers as i32 seeds). See the module docs for the numbers. `rows * len == 0` launches
/// nothing; `len` must fit 32 bits (the counter).
pub fn uniform_rows(
    client: &Client,
    seeds: &Handle,
    seed_dtype: Dtype,
    rows: usize,
    len: usize,
    out: &Handle,
) -> Result<(), SieveError> {
    let caps = DeviceCaps::of(client);
    let wide_seeds = words_of("seed_dtype", seed_dtype)?;
    if u32::try_from(len).is_err() {
        return Err(SieveError::invalid(
            "len",
            len.to_string(),
            format!("at most {} (the counter is 32 bits)", u32::MAX),
        ));
    }
    let total = output_extent(client, &caps, "rows * len", rows, len)?;
    let words = if wide_seeds { 2 * rows } else { rows };
    let rules = BufferRules::of(client);
    rules.check("seeds", seeds, words, "u32", 4)?;
    rules.check_dtype("out", out, total, Dtype::F32)?;
    if total == 0 {
        return Ok(());
    }
    let (cubes, cube_dim) = one_unit_per_element(client, total);
    // SAFETY: every unit at or past `total` returns before reading or writing; the buffers
    // hold `words` seed words and `total` outputs (checked above).
    unsafe {
        uniform_rows_kernel::launch_unchecked(
            client,
            cubes,
            cube_dim,
            address_type(&[total, words]),
            BufferArg::from_raw_parts(seeds.clone(), words),
            BufferArg::from_raw_parts(out.clone(), total),
            len,
            total,
            wide_seeds,
        );
    }
    Ok(())
}

/// Writes `[rows, width]` f32 uniforms to `out`: element `[r, i]` is the uniform of counter
/// `columns[r, i]` under `seeds[r]`, the number [`uniform_rows`] puts at column
/// `columns[r, i]` (so a gather of [`uniform_rows`] by `columns`, without making the whole
/// row). `columns` (`column_dtype`: i32, u32, i64 or u64, row-major `[rows, width]`) count by
/// their low 32 bits. `rows * width == 0` launches nothing.
#[allow(clippy::too_many_arguments)]
pub fn uniform_at(
    client: &Client,
    seeds: &Handle,
    seed_dtype: Dtype,
    rows: usize,
    columns: &Handle,
    column_dtype: Dtype,
    width: usize,
    out: &Handle,
) -> Result<(), SieveError> {
    let caps = DeviceCaps::of(client);
    let wide_seeds = words_of("seed_dtype", seed_dtype)?;
    let wide_columns = words_of("column_dtype", column_dtype)?;
    let total = output_extent(client, &caps, "rows * width", rows, width)?;
    let seed_len = if wide_seeds { 2 * rows } else { rows };
    let column_words = if wide_columns { 2 * total } else { total };
    let rules = BufferRules::of(client);
    rules.check("seeds", seeds, seed_len, "u32", 4)?;
    rules.check("columns", columns, column_words, "u32", 4)?;
    rules.check_dtype("out", out, total, Dtype::F32)?;
    if total == 0 {
        return Ok(());
    }
    let (cubes, cube_dim) = one_unit_per_element(client, total);
    // SAFETY: every unit at or past `total` returns before reading or writing; the buffers
    // hold `seed_len` seed words, `column_words` column words and `total` outputs (checked
    // above).
    unsafe {
        uniform_at_kernel::launch_unchecked(
            client,
            cubes,
            cube_dim,
            address_type(&[column_words, seed_len]),
            BufferArg::from_raw_parts(seeds.clone(), seed_len),
            BufferArg::from_raw_parts(columns.clone(), column_words),
            BufferArg::from_raw_parts(out.clone(), total),
            width,
            total,
            wide_seeds,
            wide_columns,
        );
    }
    Ok(())
}
