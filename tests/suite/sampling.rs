//! `sieve_burn::sampling` (issue 17) against CPU references: the uniforms bit for bit (raw
//! kernel, Burn op on the device, Flex and NdArray fallbacks), exact tokens on hand-made rows
//! (greedy, top-1, ties, NaN and -inf, all-masked rows), filters that never let a forbidden
//! token through, a chi-square test of the draws against the exact filtered distribution
//! (fixed seeds: deterministic), and the filters on their own.
#![cfg_attr(feature = "ndarray", allow(deprecated))] // Device::ndarray

use crate::common::{f32s, i64s, panic_message, rng, serial};
use rand::Rng;
use sieve::sample::reference::{RowParams, sample_row};

use burn::tensor::{DType, Device, Int, Tensor, TensorData};
use sieve::random::reference;
use sieve_burn::sampling::{
    self, PerRow, min_p_sample, sample_from_logits, top_k_mask_logits, top_k_top_p_sample,
    top_p_renorm_probs,
};

fn logits(rows: &[Vec<f32>], device: &Device) -> Tensor<2> {
    let vocab = rows[0].len();
    let flat: Vec<f32> = rows.iter().flatten().copied().collect();
    Tensor::from_data(TensorData::new(flat, [rows.len(), vocab]), device)
}

fn seeds(range: std::ops::Range<i64>, device: &Device) -> Tensor<1, Int> {
    let v: Vec<i64> = range.collect();
    let n = v.len();
    Tensor::from_data(TensorData::new(v, [n]), device)
}

#[test]
fn uniforms_match_the_reference_bit_for_bit() {
    let _device = serial();
    let seeds32: Vec<i32> = vec![0, -1, 123_456_789, i32::MIN, 7];
    let seeds64: Vec<i64> = vec![0, -1, (1 << 40) | 5, i64::MIN, 7];
    let words32: Vec<(u32, u32)> = seeds32.iter().map(|&s| (s as u32, 0)).collect();
    let words64: Vec<(u32, u32)> = seeds64
        .iter()
        .map(|&s| (s as u64 as u32, (s as u64 >> 32) as u32))
        .collect();
    #[allow(unused_mut)]
    let mut devices = vec![Device::default(), Device::flex()];
    #[cfg(feature = "ndarray")]
    devices.push(Device::ndarray());
    for device in devices {
        for len in [1usize, 255, 256, 1000] {
            for (dtype, words) in [(DType::I32, &words32), (DType::I64, &words64)] {
                let data = match dtype {
                    DType::I32 => TensorData::new(seeds32.clone(), [seeds32.len()]),
                    _ => TensorData::new(seeds64.clone(), [seeds64.len()]),
                };
                let seeds = Tensor::<1, Int>::from_data(data, (&device, dtype));
                let got = f32s(sampling::uniform_rows(seeds, len));
                let want = reference::uniform_rows(words, len);
                let case = format!("{device:?} {dtype:?} seeds, len {len}");
                assert_eq!(got.len(), want.len(), "{case}");
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(
                        g.to_bits(),
                        w.to_bits(),
                        "{case}: element {i}: got {g}, expected {w}"
                    );
                }
            }
        }
    }
    // The raw entry point refuses what it cannot read or write, before launching.
    let client = sieve_burn::cube_client(&Device::default()).expect("a CubeCL test device");
    let seed_words = client.create_from_slice(bytemuck::cast_slice(&[1u32, 2]));
    let out = client.empty(4 * 10);
    let raw = |dtype, rows, len| {
        sieve::random::uniform_rows(&client, &seed_words, dtype, rows, len, &out)
            .map_err(|e| e.to_string())
    };
    assert!(raw(sieve::Dtype::I32, 2, 5).is_ok());
    let e = raw(sieve::Dtype::F32, 2, 5).unwrap_err();
    assert!(
        e.contains("`seed_dtype` = f32: expected i32, u32, i64 or u64"),
        "{e}"
    );
    let e = raw(sieve::Dtype::I32, 2, 6).unwrap_err();
    assert!(e.contains("`out`"), "{e}");
    let e = raw(sieve::Dtype::I64, 2, 5).unwrap_err();
    assert!(e.contains("`seeds`"), "{e}");
    // The reference itself: inside (0, 1), and spread evenly (mean and quarters).
    let u = reference::uniform_rows(&[(3, 0), (4, 1)], 100_000);
    assert!(u.iter().all(|&x| x > 0.0 && x < 1.0));
    let mean = u.iter().map(|&x| x as f64).sum::<f64>() / u.len() as f64;
    assert!((mean - 0.5).abs() < 0.003, "mean {mean}");
    for q in 0..4 {
        let lo = q as f32 / 4.0;
        let share = u.iter().filter(|&&x| x >= lo && x < lo + 0.25).count() as f64 / u.len() as f64;
        assert!((share - 0.25).abs() < 0.005, "quarter {q}: {share}");
    }
    // Rows of different seeds differ, and so do neighbouring counters.
    assert_ne!(u[..100_000], u[100_000..]);
}

/// Every uniform the 32 random bits can give is an odd multiple of 2^-24 inside (0, 1), with
/// `1 - u` exact in f32 (the draws' `-ln u` near 1 reads it); and at counters whose bits are
/// all ones or all zeros up top (where 24 bits' `(m + 0.5) / 2^24` rounded to exactly 1, a
/// `+inf` Gumbel noise), the device's uniforms are the reference's, inside (0, 1).
#[test]
fn uniforms_are_exact_and_never_reach_0_or_1() {
    let _device = serial();
    for m in 0..1u32 << 23 {
        // The low 9 bits do not count; vary them anyway.
        let u = reference::uniform(m << 9 | (m.wrapping_mul(2_654_435_761) >> 23));
        let scaled = u as f64 * 16_777_216.0;
        assert!(
            u > 0.0 && u < 1.0 && scaled == (2 * m + 1) as f64,
            "top bits {m}: u = {u}"
        );
        assert_eq!(
            (1.0 - u) as f64,
            1.0 - u as f64,
            "top bits {m}: 1 - u rounds"
        );
    }
    let (lo, hi) = (7u32, 0u32);
    let all_ones = (0u32..)
        .find(|&j| reference::bits(lo, hi, j) >> 8 == 0x00FF_FFFF)
        .expect("a counter whose top 24 bits are all ones");
    let all_zeros = (0u32..)
        .find(|&j| reference::bits(lo, hi, j) >> 8 == 0)
        .expect("a counter whose top 24 bits are all zeros");
    let device = Device::default();
    let seeds = Tensor::<1, Int>::from_data(TensorData::new(vec![lo as i64], [1]), &device);
    let at = Tensor::<2, Int>::from_data(
        TensorData::new(vec![all_ones as i64, all_zeros as i64, 3], [1, 3]),
        &device,
    );
    let got = f32s(sampling::uniform_at(seeds, at));
    let want = reference::uniform_at(&[(lo, hi)], &[all_ones, all_zeros, 3], 3);
    assert_eq!(got, want, "counters {all_ones} and {all_zeros}");
    assert!(got.iter().all(|&u| u > 0.0 && u < 1.0), "{got:?}");
}

/// A token whose uniform sits nearest 1 has the largest Gumbel noise a draw can give, and no
/// more: on a row where its logit is 30 below every other, it must not be drawn (24 bits'
/// rounding made its noise `+inf`, and `sample_from_logits` returned it whatever its logit).
/// Also the draw kernel against the reference where `u` is near 1: two candidates whose
/// noises come from `w = 1 - u` below 2^-16, logits 0.002 from a tie either way.
#[test]
fn tokens_with_u_near_1_draw_as_their_probability() {
    use crate::common::{client, download, upload};
    use sieve::Dtype;
    use sieve::sample::reference::draw_row;
    let _device = serial();
    let device = Device::default();
    let vocab = 64u32;
    let near_one = |seed: u32, j: u32| reference::bits(seed, 0, j) >> 9 == 0x007F_FFFF;
    let (seed, token) = (0u32..)
        .find_map(|s| (0..vocab).find(|&j| near_one(s, j)).map(|j| (s, j)))
        .expect("a seed with a counter below the vocab whose top 23 bits are all ones");
    let mut row = vec![0.0f32; vocab as usize];
    row[token as usize] = -30.0;
    let x = Tensor::<2>::from_data(TensorData::new(row.clone(), [1, vocab as usize]), &device);
    let s = Tensor::<1, Int>::from_data(TensorData::new(vec![seed as i64], [1]), &device);
    let got = i64s(sampling::sample_from_logits(x, 1.0, s))[0];
    let ids: Vec<u32> = (0..vocab).collect();
    // The reference ranks nothing here: the row order is the id order.
    let want = draw_row(&row, &ids, params_of(seed));
    assert_ne!(
        got, token as i64,
        "seed {seed}: the -30 logit at {token} was drawn"
    );
    check_token(&format!("seed {seed}"), got, &want, &ids);

    // The draw kernel: pairs of ids with w = 1 - u below 2^-16, logits 0.002 off a tie.
    let client = client();
    let seed = 12_345u32;
    let params = params_of(seed);
    let close: Vec<u32> = (0u32..)
        .filter(|&j| reference::bits(seed, 0, j) >> 9 >= 0x007F_FF80)
        .take(8)
        .collect();
    let gumbel = |j: u32| {
        let u = reference::uniform(reference::bits(seed, 0, j)) as f64;
        -(-u.ln()).ln()
    };
    for pair in close.chunks(2) {
        let (a, b) = (pair[0], pair[1]);
        for gap in [0.002f64, -0.002] {
            // Score of b = score of a + gap, with a's logit 0.
            let vb = (gumbel(a) - gumbel(b) + gap) as f32;
            // Ranked as the draw reads them: the larger logit first.
            let (values, ids) = if vb > 0.0 {
                ([vb, 0.0f32], [b, a])
            } else {
                ([0.0f32, vb], [a, b])
            };
            let buffers = RowBuffers::upload(&client, &[params], false);
            let io = sieve::sample::DrawIo {
                values: &upload(&client, &values),
                ids: &upload(&client, &ids),
                id_dtype: Dtype::U32,
                rows: buffers.draw_rows(),
            };
            sieve::sample::draw(&client, io, 1, 2).expect("a valid draw");
            let got = download::<i32>(&client, buffers.tokens, 1)[0] as i64;
            let want = draw_row(&values, &ids, params);
            let expect = if gap > 0.0 { b } else { a };
            assert_eq!(want.token, expect as i64, "the reference, ids {a} and {b}");
            assert_eq!(
                got, expect as i64,
                "ids {a}, {b}, gap {gap}: {:?}",
                want.scores
            );
        }
    }
}

/// A draw with no filter at temperature 1 under `seed`.
fn params_of(seed: u32) -> RowParams {
    RowParams {
        seed: (seed, 0),
        k: 0,
        p: 1.0,
        t: 1.0,
    }
}

#[test]
fn uniforms_at_columns_are_the_rows_gathered() {
    let _device = serial();
    #[allow(unused_mut)]
    let mut devices = vec![Device::default(), Device::flex()];
    #[cfg(feature = "ndarray")]
    devices.push(Device::ndarray());
    // Columns in any order, repeated, past a tile, and one at the counter's top.
    let (rows, width, len) = (3usize, 300usize, 70_000usize);
    let mut columns: Vec<i64> = (0..rows * width)
        .map(|i| (i as i64 * 7919) % len as i64)
        .collect();
    columns[5] = columns[4];
    for device in devices {
        for (seed_dtype, column_dtype) in [(DType::I32, DType::I32), (DType::I64, DType::I64)] {
            let case = format!("{device:?} {seed_dtype:?} seeds, {column_dtype:?} columns");
            let wide = if seed_dtype == DType::I64 { 1 << 33 } else { 7 };
            let seeds = Tensor::<1, Int>::from_data(
                TensorData::new(vec![11i64, -3, wide], [rows]),
                (&device, seed_dtype),
            );
            let at = Tensor::<2, Int>::from_data(
                TensorData::new(columns.clone(), [rows, width]),
                (&device, column_dtype),
            );
            let got = f32s(sampling::uniform_at(seeds.clone(), at.clone()));
            let want = f32s(sampling::uniform_rows(seeds, len).gather(1, at));
            assert_eq!(got.len(), rows * width, "{case}");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "{case}: element {i}");
            }
        }
    }
    // The raw entry point: the reference's numbers, and refusals before launching.
    let client = sieve_burn::cube_client(&Device::default()).expect("a CubeCL test device");
    let seed_words = client.create_from_slice(bytemuck::cast_slice(&[1u32, 2]));
    let column_words = client.create_from_slice(bytemuck::cast_slice(&[9u32, 0, u32::MAX, 4]));
    let out = client.empty(4 * 4);
    let raw = |column_dtype, width| {
        sieve::random::uniform_at(
            &client,
            &seed_words,
            sieve::Dtype::I32,
            2,
            &column_words,
            column_dtype,
            width,
            &out,
        )
        .map_err(|e| e.to_string())
    };
    raw(sieve::Dtype::U32, 2).expect("u32 columns");
    let bytes = client.read_one(out.clone()).expect("read back");
    let got: Vec<f32> = bytemuck::cast_slice(&bytes).to_vec();
    let want = reference::uniform_at(&[(1, 0), (2, 0)], &[9, 0, u32::MAX, 4], 2);
    assert_eq!(got, want);
    let e = raw(sieve::Dtype::F32, 2).unwrap_err();
    assert!(e.contains("`column_dtype` = f32"), "{e}");
    let e = raw(sieve::Dtype::I64, 2).unwrap_err();
    assert!(e.contains("`columns`"), "{e}");
    let e = raw(sieve::Dtype::I32, 3).unwrap_err();
    assert!(e.contains("`columns`"), "{e}");
}

/// Rows whose answer does not depend on the seed.
fn fixed_rows() -> (Vec<Vec<f32>>, Vec<i64>) {
    let sub = f32::from_bits;
    let ninf = f32::NEG_INFINITY;
    let nan = f32::NAN;
    let rows = vec![
        vec![0.0, 5.0, 4.0, -1.0, 0.5],
        vec![2.0, 0.0, 0.0, 0.0, 0.0],
        vec![ninf; 5],
        vec![nan, nan, 1.0, nan, ninf],
        vec![3.0, 1.0, 3.0, 0.0, 3.0],
        vec![nan; 5],
        // Subnormals keep their order: a device that flushes them (NVIDIA's Vulkan) tied
        // -1e-45 with 0.0 in the composites' shifted logits and drew token 1.
        vec![f32::MIN, -sub(1), 0.0, ninf, nan],
        vec![sub(1), 0.0, -0.0, sub(0x7f_ffff), sub(2)],
        // +inf counts as f32::MAX: the first of them.
        vec![f32::MAX, f32::INFINITY, 0.0, sub(1), f32::INFINITY],
    ];
    // Greedy: the largest finite logit, the lowest index among ties; -1 without one.
    (rows, vec![1, 0, -1, 2, 0, -1, 2, 3, 0])
}

#[test]
fn greedy_top_1_and_masked_rows_are_exact() {
    let _device = serial();
    for device in [Device::default(), Device::flex()] {
        let (rows, greedy) = fixed_rows();
        let b = rows.len();
        for first in [0i64, 1000, -77] {
            let s = || seeds(first..first + b as i64, &device);
            let x = || logits(&rows, &device);
            let case = |what: &str| format!("{device:?}, seeds from {first}: {what}");
            assert_eq!(
                i64s(top_k_top_p_sample(x(), 1, 1.0, 1.0, s())),
                greedy,
                "{}",
                case("top-1")
            );
            assert_eq!(
                i64s(top_k_top_p_sample(x(), 0, 1.0, 0.0, s())),
                greedy,
                "{}",
                case("T = 0")
            );
            assert_eq!(
                i64s(top_k_top_p_sample(x(), 3, 0.0, 2.0, s())),
                greedy,
                "{}",
                case("p = 0")
            );
            assert_eq!(
                i64s(sample_from_logits(x(), 0.0, s())),
                greedy,
                "{}",
                case("plain, T = 0")
            );
            assert_eq!(
                i64s(min_p_sample(x(), 0.5, 0.0, s())),
                greedy,
                "{}",
                case("min-p, T = 0")
            );
            let per_row_t = Tensor::<1>::from_data(TensorData::new(vec![0.0f32; b], [b]), &device);
            assert_eq!(
                i64s(top_k_top_p_sample(x(), 0, 0.9, per_row_t, s())),
                greedy,
                "{}",
                case("per-row T = 0")
            );
            // min-p of 1 keeps the largest-probability tokens only: row 4's three 3.0s (and
            // rows 6-8's subnormals and zeros, whose probabilities round to the largest).
            let got = i64s(min_p_sample(x(), 1.0, 1.0, s()));
            for r in [0, 1, 2, 3, 5] {
                assert_eq!(got[r], greedy[r], "{}", case(&format!("min-p 1, row {r}")));
            }
            assert!(
                [0, 2, 4].contains(&got[4]),
                "{}: got {}",
                case("min-p 1, row 4"),
                got[4]
            );
        }
    }
}

/// Draws `rows` copies of `row` with seeds `0..rows` and returns the token counts.
fn counts(tokens: &[i64], vocab: usize) -> Vec<usize> {
    let mut c = vec![0; vocab];
    for &t in tokens {
        assert!(
            t >= 0 && (t as usize) < vocab,
            "token {t} outside 0..{vocab}"
        );
        c[t as usize] += 1;
    }
    c
}

#[test]
fn filters_never_let_a_forbidden_token_through() {
    let _device = serial();
    let device = Device::default();
    let n = 2000;
    let repeat = |row: &[f32]| logits(&vec![row.to_vec(); n], &device);
    let s = || seeds(0..n as i64, &device);
    // Ties at the k-th logit: k = 2 of [1, 3, 3, 3, 0] keeps tokens 1 and 2.
    let c = counts(
        &i64s(top_k_top_p_sample(
            repeat(&[1.0, 3.0, 3.0, 3.0, 0.0]),
            2,
            1.0,
            1.0,
            s(),
        )),
        5,
    );
    assert!(
        c[1] > 0 && c[2] > 0 && c[0] + c[3] + c[4] == 0,
        "top-2 with ties: {c:?}"
    );
    // Top-p 0.7 over probabilities 0.5, 0.3, 0.15, 0.05: tokens 0 and 1 (0.5 < 0.7 <= 0.8).
    let x: Vec<f32> = [0.5f32, 0.3, 0.15, 0.05].iter().map(|p| p.ln()).collect();
    let c = counts(&i64s(top_k_top_p_sample(repeat(&x), 0, 0.7, 1.0, s())), 4);
    assert!(c[0] > 0 && c[1] > 0 && c[2] + c[3] == 0, "top-p 0.7: {c:?}");
    // Top-k 3 then top-p 0.9 of the renormalised 0.5/0.95, 0.3/0.95, 0.15/0.95: all three.
    let c = counts(&i64s(top_k_top_p_sample(repeat(&x), 3, 0.9, 1.0, s())), 4);
    assert!(
        c[0] > 0 && c[1] > 0 && c[2] > 0 && c[3] == 0,
        "top-3, top-p 0.9: {c:?}"
    );
    // Min-p 0.5: probability >= 0.25 (tokens 0 and 1).
    let c = counts(&i64s(min_p_sample(repeat(&x), 0.5, 1.0, s())), 4);
    assert!(c[0] > 0 && c[1] > 0 && c[2] + c[3] == 0, "min-p 0.5: {c:?}");
    // A tiny temperature is all but greedy and overflows nothing: the largest logit only.
    let row = [100.0, 200.0, 300.0, 250.0]; // over 1e-37: past f32::MAX unshifted
    let greedy = vec![0, 0, n, 0];
    let c = counts(
        &i64s(top_k_top_p_sample(repeat(&row), 0, 1.0, 1e-37, s())),
        4,
    );
    assert_eq!(c, greedy, "top-k/top-p, T = 1e-37");
    let c = counts(&i64s(sample_from_logits(repeat(&row), 1e-37, s())), 4);
    assert_eq!(c, greedy, "plain, T = 1e-37");
    let c = counts(&i64s(min_p_sample(repeat(&row), 0.1, 1e-37, s())), 4);
    assert_eq!(c, greedy, "min-p, T = 1e-37");
    // +inf logits are the largest: only they are drawn, both of them.
    let row = [0.0, f32::INFINITY, 5.0, f32::INFINITY];
    let c = counts(&i64s(sample_from_logits(repeat(&row), 1.0, s())), 4);
    assert!(
        c[1] > 0 && c[3] > 0 && c[0] + c[2] == 0,
        "plain with +inf: {c:?}"
    );
    let c = counts(&i64s(top_k_top_p_sample(repeat(&row), 0, 0.9, 1.0, s())), 4);
    assert!(
        c[1] > 0 && c[3] > 0 && c[0] + c[2] == 0,
        "top-p with +inf: {c:?}"
    );
    // -inf and NaN logits are never drawn, even at a high temperature.
    let row = [0.0, f32::NEG_INFINITY, f32::NAN, 0.0];
    let c = counts(&i64s(sample_from_logits(repeat(&row), 50.0, s())), 4);
    assert!(
        c[0] > 0 && c[3] > 0 && c[1] + c[2] == 0,
        "plain with -inf and NaN: {c:?}"
    );
    // Per-row k: row r keeps its first r + 1 tokens of [4, 3, 2, 1, 0] (k = 0: every token).
    let b = 5 * 400;
    let per_k: Vec<i64> = (0..b as i64).map(|i| i % 5).collect();
    let k = Tensor::<1, Int>::from_data(TensorData::new(per_k.clone(), [b]), &device);
    let x = logits(&vec![vec![4.0, 3.0, 2.0, 1.0, 0.0]; b], &device);
    let got = i64s(top_k_top_p_sample(
        x,
        PerRow::Each(k),
        1.0,
        1.0,
        seeds(0..b as i64, &device),
    ));
    for (r, (&t, &k)) in got.iter().zip(&per_k).enumerate() {
        let allowed = if k == 0 { 5 } else { k };
        assert!(
            (0..allowed).contains(&t),
            "per-row k {k}, row {r}: token {t}"
        );
    }
    // Same seeds, same tokens; other seeds, other tokens.
    let x: Vec<f32> = (0..50).map(|i| (i % 7) as f32 * 0.3).collect();
    let a = i64s(top_k_top_p_sample(repeat(&x), 20, 0.95, 0.8, s()));
    assert_eq!(
        a,
        i64s(top_k_top_p_sample(repeat(&x), 20, 0.95, 0.8, s())),
        "same seeds"
    );
    let other = i64s(top_k_top_p_sample(
        repeat(&x),
        20,
        0.95,
        0.8,
        seeds(1..n as i64 + 1, &device),
    ));
    assert_ne!(a, other, "seeds shifted by one");
}

/// The exact distribution the sampler draws from: temperature, stable top-k, top-p over the
/// renormalised survivors, min-p (f64).
fn filtered(x: &[f32], k: usize, p: f64, min_p: f64, t: f64) -> Vec<f64> {
    let v = x.len();
    let scaled: Vec<f64> = x.iter().map(|&l| l as f64 / t).collect();
    let mut order: Vec<usize> = (0..v).collect();
    order.sort_by(|&a, &b| scaled[b].total_cmp(&scaled[a])); // stable: lower index first
    let width = if k == 0 || k >= v { v } else { k };
    let top = &order[..width];
    let max = scaled[top[0]];
    let weights: Vec<f64> = top.iter().map(|&i| (scaled[i] - max).exp()).collect();
    let total: f64 = weights.iter().sum();
    let mut out = vec![0.0; v];
    let mut before = 0.0;
    for (slot, &i) in top.iter().enumerate() {
        let prob = weights[slot] / total;
        if (slot == 0 || before < p || p >= 1.0) && weights[slot] >= min_p {
            out[i] = prob;
        }
        before += prob;
    }
    let kept: f64 = out.iter().sum();
    out.iter().map(|w| w / kept).collect()
}

#[test]
fn draws_follow_the_filtered_distribution() {
    let _device = serial();
    let device = Device::default();
    // Upper 0.9999 quantiles of chi-square with 1..=7 degrees of freedom.
    let critical = [15.14, 18.42, 21.11, 23.51, 25.74, 27.86, 29.88];
    let x = [1.2f32, -0.3, 0.8, 2.0, 0.1, -1.5, 0.9, 1.7];
    let v = x.len();
    let n = 40_000;
    let rows = logits(&vec![x.to_vec(); n], &device);
    type Draw = Box<dyn Fn(Tensor<2>, Tensor<1, Int>) -> Tensor<1, Int>>;
    let cases: Vec<(&str, Vec<f64>, Draw)> = vec![
        (
            "plain T=1",
            filtered(&x, 0, 1.0, 0.0, 1.0),
            Box::new(|l, s| sample_from_logits(l, 1.0, s)),
        ),
        (
            "top-k 5, T=0.7",
            filtered(&x, 5, 1.0, 0.0, 0.7),
            Box::new(|l, s| top_k_top_p_sample(l, 5, 1.0, 0.7, s)),
        ),
        (
            "top-p 0.8",
            filtered(&x, 0, 0.8, 0.0, 1.0),
            Box::new(|l, s| top_k_top_p_sample(l, 0, 0.8, 1.0, s)),
        ),
        (
            "top-k 6, top-p 0.9, T=1.3",
            filtered(&x, 6, 0.9, 0.0, 1.3),
            Box::new(|l, s| top_k_top_p_sample(l, 6, 0.9, 1.3, s)),
        ),
        (
            "min-p 0.3",
            filtered(&x, 0, 1.0, 0.3, 1.0),
            Box::new(|l, s| min_p_sample(l, 0.3, 1.0, s)),
        ),
    ];
    for (i, (what, want, draw)) in cases.into_iter().enumerate() {
        let first = 1_000_000 * i as i64;
        let got = counts(
            &i64s(draw(rows.clone(), seeds(first..first + n as i64, &device))),
            v,
        );
        let mut chi2 = 0.0;
        let mut cells = 0;
        for (t, (&c, &p)) in got.iter().zip(&want).enumerate() {
            if p == 0.0 {
                assert_eq!(
                    c, 0,
                    "{what}: token {t} is filtered out but was drawn {c} times"
                );
                continue;
            }
            let e = p * n as f64;
            chi2 += (c as f64 - e).powi(2) / e;
            cells += 1;
        }
        let limit = critical[cells - 2];
        eprintln!(
            "{what}: counts {got:?}, chi-square {chi2:.2} ({} dof, limit {limit})",
            cells - 1
        );
        assert!(
            chi2 < limit,
            "{what}: chi-square {chi2:.2} >= {limit}: counts {got:?}, expected shares {want:?}"
        );
    }
}

#[test]
fn the_filters_on_their_own() {
    let _device = serial();
    for device in [Device::default(), Device::flex()] {
        let ninf = f32::NEG_INFINITY;
        let rows = vec![
            vec![1.0, 3.0, 3.0, 3.0, 0.0],
            vec![f32::NAN, 2.0, -1.0, 2.0, 5.0],
        ];
        let got = f32s(top_k_mask_logits(logits(&rows, &device), 2));
        assert_eq!(
            got,
            [ninf, 3.0, 3.0, ninf, ninf, ninf, 2.0, ninf, ninf, 5.0],
            "top-2 mask"
        );
        let got = f32s(top_k_mask_logits(logits(&rows, &device), 0));
        assert_eq!(
            got,
            [1.0, 3.0, 3.0, 3.0, 0.0, ninf, 2.0, -1.0, 2.0, 5.0],
            "k = 0"
        );
        let k = Tensor::<1, Int>::from_data(TensorData::new(vec![1i64, 3], [2]), &device);
        let got = f32s(top_k_mask_logits(logits(&rows, &device), PerRow::Each(k)));
        assert_eq!(
            got,
            [ninf, 3.0, ninf, ninf, ninf, ninf, 2.0, ninf, 2.0, 5.0],
            "per-row k"
        );
        // Top-p 0.6 of [0.1, 0.4, 0.3, 0.2]: 0.4 then 0.3 (0.4 < 0.6 <= 0.7), renormalised.
        let probs = vec![vec![0.1f32, 0.4, 0.3, 0.2], vec![0.25, 0.25, 0.25, 0.25]];
        let got = f32s(top_p_renorm_probs(logits(&probs, &device), 0.6));
        let want = [
            0.0,
            0.4 / 0.7,
            0.3 / 0.7,
            0.0,
            1.0 / 3.0,
            1.0 / 3.0,
            1.0 / 3.0,
            0.0,
        ];
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() < 1e-6,
                "top-p renorm {i}: got {got:?}, expected {want:?}"
            );
        }
    }
}

/// An op's name, the parameter a call of it gets wrong, and the call.
type ParamCall<'a> = (&'static str, &'static str, Box<dyn Fn() + 'a>);

#[test]
fn bad_calls_get_clear_errors() {
    let _device = serial();
    let device = Device::default();
    let x = logits(&[vec![0.0, 1.0], vec![1.0, 0.0]], &device);
    let message = |f: &dyn Fn()| panic_message(f).expect("the call was accepted");
    let m = message(&|| {
        drop(top_k_top_p_sample(
            x.clone(),
            1,
            1.0,
            1.0,
            seeds(0..3, &device),
        ))
    });
    assert!(
        m.contains("top_k_top_p_sample: invalid argument `seeds`: 3 seeds"),
        "{m}"
    );
    let p = Tensor::<1>::from_data([0.5f32], &device);
    let m = message(&|| {
        drop(top_k_top_p_sample(
            x.clone(),
            1,
            p.clone(),
            1.0,
            seeds(0..2, &device),
        ))
    });
    assert!(m.contains("invalid argument `top_p`: 1 values"), "{m}");
    // Every per-row parameter of every op: one value a row, or the op names it.
    let one_k = || Tensor::<1, Int>::from_data([1i64], &device);
    let one = || Tensor::<1>::from_data([0.5f32], &device);
    let s = || seeds(0..2, &device);
    let calls: [ParamCall; 6] = [
        (
            "top_k_top_p_sample",
            "top_k",
            Box::new(|| drop(top_k_top_p_sample(x.clone(), one_k(), 1.0, 1.0, s()))),
        ),
        (
            "top_k_top_p_sample",
            "temperature",
            Box::new(|| drop(top_k_top_p_sample(x.clone(), 1, 1.0, one(), s()))),
        ),
        (
            "min_p_sample",
            "min_p",
            Box::new(|| drop(min_p_sample(x.clone(), one(), 1.0, s()))),
        ),
        (
            "min_p_sample",
            "temperature",
            Box::new(|| drop(min_p_sample(x.clone(), 0.1, one(), s()))),
        ),
        (
            "sample_from_logits",
            "temperature",
            Box::new(|| drop(sample_from_logits(x.clone(), one(), s()))),
        ),
        (
            "top_k_mask_logits",
            "top_k",
            Box::new(|| drop(top_k_mask_logits(x.clone(), one_k()))),
        ),
    ];
    for (op, name, call) in calls {
        let m = message(&*call);
        assert!(
            m.contains(op) && m.contains(&format!("invalid argument `{name}`: 1 values")),
            "{op} {name}: {m}"
        );
    }
    // Rows need a vocab of at least one token.
    let no_vocab = || Tensor::<2>::zeros([2, 0], &device);
    for (op, call) in [
        (
            "top_k_top_p_sample",
            Box::new(|| drop(top_k_top_p_sample(no_vocab(), 1, 1.0, 1.0, s()))) as Box<dyn Fn()>,
        ),
        (
            "min_p_sample",
            Box::new(|| drop(min_p_sample(no_vocab(), 0.1, 1.0, s()))),
        ),
        (
            "sample_from_logits",
            Box::new(|| drop(sample_from_logits(no_vocab(), 1.0, s()))),
        ),
    ] {
        let m = message(&*call);
        assert!(
            m.contains(&format!(
                "{op}: invalid argument `logits`: a vocab of 0 tokens"
            )),
            "{op}: {m}"
        );
    }
    // Empty batches draw nothing; empty filters return their input.
    let empty = || Tensor::<2>::zeros([0, 5], &device);
    assert!(
        i64s(top_k_top_p_sample(
            empty(),
            2,
            0.9,
            1.0,
            seeds(0..0, &device)
        ))
        .is_empty()
    );
    assert!(i64s(min_p_sample(empty(), 0.1, 1.0, seeds(0..0, &device))).is_empty());
    assert!(i64s(sample_from_logits(empty(), 1.0, seeds(0..0, &device))).is_empty());
    assert_eq!(top_k_mask_logits(empty(), 2).dims(), [0, 5]);
    assert_eq!(top_p_renorm_probs(empty(), 0.5).dims(), [0, 5]);
}

/// `sieve::sample::draw`, the fused last stage of `top_k_top_p_sample`, against its CPU
/// reference: widths at and around every plane and cube boundary of its cube (1 to 1000),
/// ties, `+inf` first, rows of `-inf`/NaN, every parameter's edge (`k` of 0, negative, past
/// the width, 64-bit with a high word; `p` of 0, 1, NaN; greedy, tiny and large
/// temperatures), 32- and 64-bit ids, seeds and `k`. The device's token is the reference's,
/// or one whose reference score is within f32 rounding of the reference's best (two
/// perturbed scores that close may order either way).
#[test]
fn draw_kernel_matches_the_reference() {
    use crate::common::{client, download, upload};
    use sieve::Dtype;
    use sieve::sample::reference::draw_row;
    let _device = serial();
    let client = client();
    let (mut rng, seed) = rng("draw_kernel_matches_the_reference");
    let ks = [0i64, -3, 1, 2, 5, 49, 1 << 33];
    let ps = [1.0f32, 0.9, 0.5, 0.0, f32::NAN, 2.0, 0.999];
    let ts = [0.8f32, 1.0, 0.0, -1.0, f32::NAN, 1e-3, 5.0];
    for wide in [false, true] {
        for width in [1usize, 2, 31, 32, 33, 50, 63, 64, 65, 255, 256, 257, 1000] {
            let rows = 12usize;
            let mut values = Vec::with_capacity(rows * width);
            let mut ids = Vec::with_capacity(rows * width);
            let mut params = Vec::with_capacity(rows);
            for r in 0..rows {
                let mut row: Vec<f32> = (0..width)
                    .map(|_| match rng.random_range(0..10) {
                        0 => f32::NEG_INFINITY,
                        1 => f32::NAN,
                        2 | 3 => rng.random_range(-2i32..2) as f32 * 0.5,
                        _ => rng.random_range(-6.0f32..6.0),
                    })
                    .collect();
                match r {
                    0 => row.iter_mut().for_each(|v| *v = f32::NEG_INFINITY),
                    1 => row[0] = f32::INFINITY,
                    2 => row.iter_mut().for_each(|v| *v = 1.5),
                    _ => {}
                }
                // Descending as the draws read it: NaN with -inf, last.
                let key = |v: f32| if v.is_nan() { f32::NEG_INFINITY } else { v };
                row.sort_by(|a, b| key(*b).total_cmp(&key(*a)));
                values.extend_from_slice(&row);
                // Distinct ids, past any tile, in no order.
                ids.extend((0..width).map(|j| ((r * width + j) as u32 * 7919) % 200_003));
                let mut k = ks[rng.random_range(0..ks.len())];
                if !wide && k > i32::MAX as i64 {
                    k = width as i64 + 7;
                }
                params.push(RowParams {
                    seed: (rng.random(), if wide { rng.random() } else { 0 }),
                    k,
                    p: ps[rng.random_range(0..ps.len())],
                    t: ts[rng.random_range(0..ts.len())],
                });
            }
            let buffers = RowBuffers::upload(&client, &params, wide);
            let dtype = buffers.dtype;
            let handle_ids = if wide {
                upload(&client, &ids.iter().map(|&i| i as i64).collect::<Vec<_>>())
            } else {
                upload(&client, &ids.iter().map(|&i| i as i32).collect::<Vec<_>>())
            };
            let handle_values = upload(&client, &values);
            let io = sieve::sample::DrawIo {
                values: &handle_values,
                ids: &handle_ids,
                id_dtype: dtype,
                rows: buffers.draw_rows(),
            };
            let read = |tokens: cubecl::server::Handle| -> Vec<i64> {
                if wide {
                    download::<i64>(&client, tokens, rows)
                } else {
                    download::<i32>(&client, tokens, rows)
                        .into_iter()
                        .map(i64::from)
                        .collect()
                }
            };
            sieve::sample::draw(&client, io, rows, width).expect("a valid draw");
            let got = read(buffers.tokens.clone());
            for r in 0..rows {
                let span = r * width..(r + 1) * width;
                let want = draw_row(&values[span.clone()], &ids[span.clone()], params[r]);
                let case = format!(
                    "seed {seed}, {dtype:?}, width {width}, row {r}, {:?}",
                    params[r]
                );
                check_token(&case, got[r], &want, &ids[span]);
            }
            // One set of parameters for every row, as scalars (each row keeps its seed).
            let same = params[rows / 2];
            let tokens = upload(
                &client,
                &vec![0x5a5a_5a5au32; rows * if wide { 2 } else { 1 }],
            );
            let io = sieve::sample::DrawIo {
                rows: sieve::sample::DrawRows {
                    params: sieve::sample::DrawParams::Same {
                        top_k: same.k,
                        top_p: same.p,
                        temperature: same.t,
                    },
                    tokens: &tokens,
                    ..io.rows
                },
                ..io
            };
            sieve::sample::draw(&client, io, rows, width).expect("a valid draw");
            let got = read(tokens.clone());
            for r in 0..rows {
                let span = r * width..(r + 1) * width;
                let row_params = RowParams {
                    seed: params[r].seed,
                    ..same
                };
                let want = draw_row(&values[span.clone()], &ids[span.clone()], row_params);
                let case = format!(
                    "seed {seed}, {dtype:?}, width {width}, row {r}, {row_params:?} as scalars"
                );
                check_token(&case, got[r], &want, &ids[span]);
            }
        }
    }
    // Refusals before launching.
    let one = upload(&client, &[0f32]);
    let word = upload(&client, &[0u32]);
    let io = sieve::sample::DrawIo {
        values: &one,
        ids: &word,
        id_dtype: Dtype::I32,
        rows: sieve::sample::DrawRows {
            seeds: &word,
            seed_dtype: Dtype::I32,
            params: sieve::sample::DrawParams::Each {
                top_k: &word,
                k_dtype: Dtype::I32,
                top_p: &one,
                temperature: &one,
            },
            tokens: &word,
            token_dtype: Dtype::U32,
        },
    };
    let e = sieve::sample::draw(&client, io, 1, 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`io.token_dtype` = u32"), "{e}");
    let io = sieve::sample::DrawIo {
        rows: sieve::sample::DrawRows {
            token_dtype: Dtype::I32,
            ..io.rows
        },
        ..io
    };
    let e = sieve::sample::draw(&client, io, 1, 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`width`"), "{e}");
    let e = sieve::sample::draw(&client, io, 1, 64)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`io.values`"), "{e}");
    let io = sieve::sample::DrawIo {
        rows: sieve::sample::DrawRows {
            params: sieve::sample::DrawParams::Each {
                top_k: &word,
                k_dtype: Dtype::F32,
                top_p: &one,
                temperature: &one,
            },
            ..io.rows
        },
        ..io
    };
    let e = sieve::sample::draw(&client, io, 1, 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`io.params.k_dtype` = f32"), "{e}");
}

/// The per-row buffers of one draw, as `DrawParams::Each` reads them: seeds, k (32- or 64-bit
/// Int, `wide`), p and t, and tokens poisoned with 0x5a5a5a5a words.
struct RowBuffers {
    seeds: cubecl::server::Handle,
    k: cubecl::server::Handle,
    p: cubecl::server::Handle,
    t: cubecl::server::Handle,
    tokens: cubecl::server::Handle,
    /// The seeds', k's and tokens' dtype: i32, or i64 when `wide`.
    dtype: sieve::Dtype,
}

impl RowBuffers {
    fn upload(
        client: &cubecl::prelude::Client,
        params: &[sieve::sample::reference::RowParams],
        wide: bool,
    ) -> Self {
        use crate::common::upload;
        use sieve::Dtype;
        let (seeds, k, dtype) = if wide {
            let seeds: Vec<u64> = params
                .iter()
                .map(|p| p.seed.0 as u64 | (p.seed.1 as u64) << 32)
                .collect();
            let k: Vec<i64> = params.iter().map(|p| p.k).collect();
            (upload(client, &seeds), upload(client, &k), Dtype::I64)
        } else {
            let seeds: Vec<u32> = params.iter().map(|p| p.seed.0).collect();
            let k: Vec<i32> = params.iter().map(|p| p.k as i32).collect();
            (upload(client, &seeds), upload(client, &k), Dtype::I32)
        };
        let p: Vec<f32> = params.iter().map(|p| p.p).collect();
        let t: Vec<f32> = params.iter().map(|p| p.t).collect();
        let words = params.len() * if wide { 2 } else { 1 };
        RowBuffers {
            seeds,
            k,
            p: upload(client, &p),
            t: upload(client, &t),
            tokens: upload(client, &vec![0x5a5a_5a5au32; words]),
            dtype,
        }
    }

    fn draw_rows(&self) -> sieve::sample::DrawRows<'_> {
        sieve::sample::DrawRows {
            seeds: &self.seeds,
            seed_dtype: self.dtype,
            params: sieve::sample::DrawParams::Each {
                top_k: &self.k,
                k_dtype: self.dtype,
                top_p: &self.p,
                temperature: &self.t,
            },
            tokens: &self.tokens,
            token_dtype: self.dtype,
        }
    }
}

/// `got` is `want`'s token, or (f32 rounding of the device against the reference's f64) a
/// kept candidate whose perturbed score is within 1e-4 of the best; `ids`: the candidates'.
pub(crate) fn check_token(
    case: &str,
    got: i64,
    want: &sieve::sample::reference::RowDraw,
    ids: &[u32],
) {
    if got == want.token {
        return;
    }
    let slot = ids
        .iter()
        .position(|&i| i as i64 == got)
        .unwrap_or_else(|| panic!("{case}: got {got}, want {}: not a candidate", want.token));
    let best = want
        .scores
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let score = want.scores[slot];
    assert!(
        score.is_finite() && (best - score).abs() <= 1e-4 * best.abs().max(1.0),
        "{case}: got {got}, want {}: its score {score} against the best {best}",
        want.token
    );
}

/// Whole rows of logits through the fused path (`sieve::sample::top_k_top_p`, raw at default
/// tunings, and the Burn op), against `reference::sample_row`, at vocabs that take every
/// top-k strategy (rank by counting, sort and slice, the one-cube-per-row select cut into
/// chunks or not, the device-wide select) and both sorts (no cut), on rows that rank NaN as
/// -inf and +inf as f32::MAX: more NaNs than k, NaN everywhere, +inf tied with an earlier
/// f32::MAX, all equal, a few distinct values. The one-cube-per-row cases take the draw that
/// ranks the top-k's per-chunk candidates itself.
#[test]
fn whole_rows_rank_nan_low_at_every_strategy() {
    use crate::common::{client, download, upload};
    use sieve::Dtype;
    let _device = serial();
    let client = client();
    let device = Device::default();
    let (mut rng, seed) = rng("whole_rows_rank_nan_low_at_every_strategy");
    // (20 000, 70): one chunk a row, so the draw ranks each row's own k candidates.
    // (140 000, 3): past the one-cube-per-row limit: cut into chunks for the small cuts (the
    // draw ranks their candidates), into 8 chunks at `vocab / 20` (merged), and the
    // device-wide select at 66,000 (two chunks' candidates would overflow a row cube).
    for (vocab, rows) in [
        (700usize, 7usize),
        (3000, 7),
        (20_000, 7),
        (20_000, 70),
        (140_000, 3),
    ] {
        let mut logits = Vec::with_capacity(rows * vocab);
        for r in 0..rows {
            let row: Vec<f32> = (0..vocab)
                .map(|j| match r {
                    // ~30% NaN: more NaNs than any k here, wherever they fall.
                    0 | 1 if rng.random_range(0..10) < 3 => f32::NAN,
                    0 | 1 if rng.random_range(0..50) == 0 => f32::NEG_INFINITY,
                    0 | 1 => rng.random_range(-8.0f32..8.0),
                    2 => f32::NAN,
                    // f32::MAX first, +inf later: equal as logits, the lower index first.
                    3 if j == 7 => f32::MAX,
                    3 if j == vocab - 2 || j == vocab / 2 => f32::INFINITY,
                    3 => rng.random_range(-1.0f32..1.0),
                    4 if j % 97 == 3 => f32::NAN,
                    4 => 1.5,
                    5 => rng.random_range(-1i32..2) as f32,
                    _ if j < 100 => f32::NAN,
                    _ => rng.random_range(-3.0f32..3.0),
                })
                .collect();
            logits.extend(row);
        }
        let handle_logits = upload(&client, &logits);
        let device_wide = if vocab > 1 << 17 {
            vec![66_000]
        } else {
            vec![]
        };
        for cut in [0usize, 1, 50, vocab / 20, vocab - 1]
            .into_iter()
            .chain(device_wide)
        {
            let width = if cut > 0 { cut } else { vocab };
            let params: Vec<RowParams> = (0..rows)
                .map(|_| RowParams {
                    // Below 2^31: the same seed as an i32 or i64 Int tensor.
                    seed: (rng.random_range(0..1u32 << 30), 0),
                    k: [0i64, 1, 3, width as i64, width as i64 + 5][rng.random_range(0..5)],
                    p: [1.0f32, 0.9, 0.5][rng.random_range(0..3)],
                    t: [0.8f32, 0.0, 1.0][rng.random_range(0..3)],
                })
                .collect();
            let buffers = RowBuffers::upload(&client, &params, false);
            let io = sieve::sample::SampleIo {
                logits: &handle_logits,
                // Seeds as u32 here (i32 in the draw kernel's test): the same words.
                rows: sieve::sample::DrawRows {
                    seed_dtype: Dtype::U32,
                    ..buffers.draw_rows()
                },
            };
            sieve::sample::top_k_top_p(&client, io, rows, vocab, cut).expect("a valid draw");
            let got = download::<i32>(&client, buffers.tokens, rows);
            for r in 0..rows {
                let (ids, want) = sample_row(&logits[r * vocab..(r + 1) * vocab], cut, params[r]);
                let case = format!(
                    "seed {seed}, vocab {vocab}, cut {cut}, row {r}, {:?}",
                    params[r]
                );
                check_token(&case, got[r] as i64, &want, &ids);
            }
            // The Burn op, one k for every row (its cut) at one p and temperature.
            if cut > 0 {
                let x =
                    Tensor::<2>::from_data(TensorData::new(logits.clone(), [rows, vocab]), &device);
                let s: Vec<i64> = params.iter().map(|p| p.seed.0 as i64).collect();
                let s = Tensor::<1, Int>::from_data(TensorData::new(s, [rows]), &device);
                let got = i64s(top_k_top_p_sample(x, cut, 0.9, 0.8, s));
                for r in 0..rows {
                    let params = RowParams {
                        k: cut as i64,
                        p: 0.9,
                        t: 0.8,
                        ..params[r]
                    };
                    let (ids, want) = sample_row(&logits[r * vocab..(r + 1) * vocab], cut, params);
                    let case = format!("Burn op: seed {seed}, vocab {vocab}, cut {cut}, row {r}");
                    check_token(&case, got[r], &want, &ids);
                }
            }
        }
    }
}

/// `sample_from_logits` and `min_p_sample` (the Burn ops' own draw: Gumbel-max over the kept
/// logits, with `-ln u` near `u = 1` from its series) against `reference::sample_row` with no
/// cut, token for token (up to scores tied within rounding, as `check_token` allows), on
/// `[64, 3000]` rows of logits on a grid of halves with NaN, -inf and +inf, all-equal and
/// all-NaN rows, at two temperatures and greedy. `min_p`'s reference is the same draw over
/// the row with every logit under `min_p * p_max` set to -inf; its threshold lies midway
/// between two grid steps of `(x - max) / T`, so no rounding decides which logit is kept.
#[test]
fn unfiltered_and_min_p_draws_match_the_reference() {
    let _device = serial();
    let device = Device::default();
    let (mut rng, seed) = rng("unfiltered_and_min_p_draws_match_the_reference");
    let (rows, vocab) = (64usize, 3000usize);
    let mut data = Vec::with_capacity(rows * vocab);
    for r in 0..rows {
        data.extend((0..vocab).map(|j| match r % 8 {
            0 if rng.random_range(0..20) == 0 => f32::NAN,
            0 if rng.random_range(0..50) == 0 => f32::NEG_INFINITY,
            1 if j % 101 == 5 => f32::NAN,
            1 => 1.5,
            2 if j == 17 || j == vocab - 3 => f32::INFINITY,
            3 => f32::NAN,
            4 if j % 2 == 0 => f32::NEG_INFINITY,
            _ => rng.random_range(-16i32..=16) as f32 * 0.5,
        }));
    }
    // Below 2^31: the same words as an i64 tensor's low word.
    let seeds: Vec<u32> = (0..rows).map(|_| rng.random_range(0..1u32 << 30)).collect();
    let x = Tensor::<2>::from_data(TensorData::new(data.clone(), [rows, vocab]), &device);
    let s = Tensor::<1, Int>::from_data(
        TensorData::new(seeds.iter().map(|&s| s as i64).collect::<Vec<_>>(), [rows]),
        &device,
    );
    for t in [1.0f32, 0.7, 0.0] {
        let params = |r: usize| RowParams {
            seed: (seeds[r], 0),
            k: 0,
            p: 1.0,
            t,
        };
        let got = i64s(sample_from_logits(x.clone(), t, s.clone()));
        for (r, &got) in got.iter().enumerate() {
            let row = &data[r * vocab..(r + 1) * vocab];
            let (ids, want) = sample_row(row, 0, params(r));
            let case = format!("seed {seed}: sample_from_logits, T {t}, row {r}");
            check_token(&case, got, &want, &ids);
        }
        // `(x - max) / T` steps by `0.5 / T`: the threshold 3.5 steps under the best.
        let step = 0.5 / if t > 0.0 { t as f64 } else { 1.0 };
        let min_p = (-3.5 * step).exp();
        let got = i64s(min_p_sample(x.clone(), min_p as f32, t, s.clone()));
        for (r, &got) in got.iter().enumerate() {
            let row = &data[r * vocab..(r + 1) * vocab];
            let clamp = |v: f32| if v == f32::INFINITY { f32::MAX } else { v };
            let best = row
                .iter()
                .filter(|v| !v.is_nan())
                .map(|&v| clamp(v))
                .fold(f32::NEG_INFINITY, f32::max);
            let kept: Vec<f32> = row
                .iter()
                .map(|&v| {
                    let d = (clamp(v) as f64 - best as f64) * step / 0.5;
                    if v.is_nan() || !best.is_finite() || d.exp() >= min_p {
                        v
                    } else {
                        f32::NEG_INFINITY
                    }
                })
                .collect();
            let (ids, want) = sample_row(&kept, 0, params(r));
            let case = format!("seed {seed}: min_p_sample {min_p}, T {t}, row {r}");
            check_token(&case, got, &want, &ids);
        }
    }
}

/// The filters and the per-row draw at a vocab of 20,000 (many scan and sort tiles), against
/// exact references: `top_k_mask_logits` with one `k` a row (0, 1, 5000, past the vocab) on
/// logits with ties and NaN; `top_p_renorm_probs` on dyadic probabilities (multiples of
/// 2^-20, so every prefix sum is exact in f32 in any order) at a `p` equal to a prefix sum
/// (the token it reaches is cut: its predecessors do not sum to less than `p`), 0 (the first
/// token only) and 1 (everything, renormalised), and a row of zeros, which is no
/// distribution and comes back NaN (0 / 0, as the usual torch recipe gives); and
/// `top_k_top_p_sample` with a per-row `k`, `p` and temperature (the whole row sorted, then
/// the draw) token for token against `reference::sample_row`.
#[test]
fn filters_and_per_row_draws_at_a_large_vocab() {
    let _device = serial();
    let device = Device::default();
    let (mut rng, seed) = rng("filters_and_per_row_draws_at_a_large_vocab");
    let (rows, vocab) = (4usize, 20_000usize);
    let data: Vec<f32> = (0..rows * vocab)
        .map(|_| match rng.random_range(0..40) {
            0 => f32::NAN,
            _ => rng.random_range(-64i32..64) as f32 * 0.25,
        })
        .collect();
    let x = Tensor::<2>::from_data(TensorData::new(data.clone(), [rows, vocab]), &device);

    // Top-k masks, one k a row.
    let ks = [0i64, 1, 5000, vocab as i64 + 3];
    let k = Tensor::<1, Int>::from_data(TensorData::new(ks.to_vec(), [rows]), &device);
    let got = f32s(top_k_mask_logits(x.clone(), PerRow::Each(k)));
    for r in 0..rows {
        let row = &data[r * vocab..(r + 1) * vocab];
        let (ids, _) = sample_row(
            row,
            0,
            RowParams {
                seed: (0, 0),
                k: 0,
                p: 1.0,
                t: 1.0,
            },
        );
        let mut want = vec![f32::NEG_INFINITY; vocab];
        let k = if ks[r] <= 0 {
            vocab
        } else {
            (ks[r] as usize).min(vocab)
        };
        for &id in &ids[..k] {
            let v = row[id as usize];
            want[id as usize] = if v.is_nan() { f32::NEG_INFINITY } else { v };
        }
        let got: Vec<u32> = got[r * vocab..(r + 1) * vocab]
            .iter()
            .map(|v| v.to_bits())
            .collect();
        let want: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
        crate::common::assert_same(
            &got,
            &want,
            &format!("seed {seed}: top_k_mask_logits row {r} k {}", ks[r]),
        );
    }

    // Top-p on dyadic probabilities.
    let unit = 1u64 << 20;
    let mut counts: Vec<Vec<u64>> = Vec::new();
    for r in 0..rows {
        if r == 3 {
            counts.push(vec![0; vocab]);
            continue;
        }
        // Ties on purpose: few distinct counts, summing to exactly 2^20.
        let mut c: Vec<u64> = (0..vocab)
            .map(|_| [0u64, 13, 40, 52][rng.random_range(0..4)])
            .collect();
        let total: u64 = c.iter().sum();
        assert!(total < unit, "the draw's counts must leave room");
        c[rng.random_range(0..vocab)] += unit - total;
        counts.push(c);
    }
    // Row 0: p a prefix sum of its stable descending order (37 tokens); row 1: 0; row 2: 1.
    let order = |c: &[u64]| {
        let mut ids: Vec<usize> = (0..vocab).collect();
        ids.sort_by(|&a, &b| c[b].cmp(&c[a]));
        ids
    };
    let prefix: u64 = order(&counts[0])
        .iter()
        .take(37)
        .map(|&i| counts[0][i])
        .sum();
    let ps = [prefix as f32 / unit as f32, 0.0, 1.0, 0.5];
    let probs: Vec<f32> = counts
        .iter()
        .flatten()
        .map(|&c| c as f32 / unit as f32)
        .collect();
    let p = Tensor::<1>::from_data(TensorData::new(ps.to_vec(), [rows]), &device);
    let got = f32s(top_p_renorm_probs(
        Tensor::<2>::from_data(TensorData::new(probs, [rows, vocab]), &device),
        PerRow::Each(p),
    ));
    for r in 0..rows {
        let got = &got[r * vocab..(r + 1) * vocab];
        if r == 3 {
            assert!(
                got.iter().all(|v| v.is_nan()),
                "seed {seed}: a row of zeros: {:?}",
                &got[..8]
            );
            continue;
        }
        let c = &counts[r];
        let ids = order(c);
        let limit = (ps[r] as f64 * unit as f64) as u64;
        let mut kept = vec![false; vocab];
        let mut before = 0u64;
        for (slot, &i) in ids.iter().enumerate() {
            kept[i] = slot == 0 || before < limit || ps[r] >= 1.0;
            before += c[i];
        }
        if r == 0 {
            assert_eq!(
                kept.iter().filter(|&&k| k).count(),
                37,
                "seed {seed}: the prefix's tokens"
            );
        }
        let total: u64 = (0..vocab).filter(|&i| kept[i]).map(|i| c[i]).sum();
        for i in 0..vocab {
            let want = if kept[i] {
                c[i] as f64 / total as f64
            } else {
                0.0
            };
            assert!(
                (got[i] as f64 - want).abs() <= 1e-6 * want.max(1e-30) + 1e-12,
                "seed {seed}: top_p_renorm_probs row {r} token {i}: got {}, expected {want}",
                got[i]
            );
        }
    }

    // Per-row k, p and temperature through the draw.
    let params: Vec<RowParams> = (0..rows)
        .map(|r| RowParams {
            seed: (rng.random_range(0..1u32 << 30), 0),
            k: [0i64, -1, 7, vocab as i64 + 3][r],
            p: [0.5f32, 1.0, 0.9, 0.0][r],
            t: [0.7f32, 1.0, 0.0, 1.3][r],
        })
        .collect();
    let k: Vec<i64> = params.iter().map(|p| p.k).collect();
    let p: Vec<f32> = params.iter().map(|p| p.p).collect();
    let t: Vec<f32> = params.iter().map(|p| p.t).collect();
    let s: Vec<i64> = params.iter().map(|p| p.seed.0 as i64).collect();
    let got = i64s(top_k_top_p_sample(
        x,
        PerRow::Each(Tensor::<1, Int>::from_data(
            TensorData::new(k, [rows]),
            &device,
        )),
        PerRow::Each(Tensor::<1>::from_data(TensorData::new(p, [rows]), &device)),
        PerRow::Each(Tensor::<1>::from_data(TensorData::new(t, [rows]), &device)),
        Tensor::<1, Int>::from_data(TensorData::new(s, [rows]), &device),
    ));
    for r in 0..rows {
        let (ids, want) = sample_row(&data[r * vocab..(r + 1) * vocab], 0, params[r]);
        let case = format!("seed {seed}: per-row draw, row {r}, {:?}", params[r]);
        check_token(&case, got[r], &want, &ids);
    }
}

/// What a caller may hand the draws besides f32 logits and i64 seeds: seeds as i32, u32 and u64
/// tensors (below 2^31: the same words, so the same tokens), f16 logits (the draw over their
/// exact widening), and logits that are a view (the last position of a `[batch, 3, vocab]`
/// tensor, as a decoder's last-token logits are), through every draw.
#[test]
fn seed_dtypes_half_logits_and_views_draw_the_same() {
    let _device = serial();
    let device = Device::default();
    let (mut rng, seed) = rng("seed_dtypes_half_logits_and_views_draw_the_same");
    let (rows, vocab) = (8usize, 1000usize);
    // f16-exact logits, so the f16 tensor holds the same values.
    let data: Vec<f32> = (0..rows * vocab)
        .map(|_| rng.random_range(-64i32..64) as f32 * 0.125)
        .collect();
    let s: Vec<i64> = (0..rows).map(|_| rng.random_range(0..1i64 << 31)).collect();
    let x = Tensor::<2>::from_data(TensorData::new(data.clone(), [rows, vocab]), &device);
    let seeds_as = |dtype: DType| {
        Tensor::<1, Int>::from_data(TensorData::new(s.clone(), [rows]), (&device, dtype))
    };
    let draws = |x: Tensor<2>, seeds: Tensor<1, Int>| {
        [
            i64s(top_k_top_p_sample(x.clone(), 50, 0.9, 0.8, seeds.clone())),
            i64s(top_k_top_p_sample(x.clone(), 0, 0.9, 0.8, seeds.clone())),
            i64s(min_p_sample(x.clone(), 0.05, 0.8, seeds.clone())),
            i64s(sample_from_logits(x, 0.8, seeds)),
        ]
    };
    let want = draws(x.clone(), seeds_as(DType::I64));
    // The reference for the fused draw (the Burn ops' own draws are checked in
    // `unfiltered_and_min_p_draws_match_the_reference`).
    for r in 0..rows {
        let params = RowParams {
            seed: (s[r] as u32, 0),
            k: 50,
            p: 0.9,
            t: 0.8,
        };
        let (ids, reference) = sample_row(&data[r * vocab..(r + 1) * vocab], 50, params);
        check_token(
            &format!("seed {seed}: row {r}"),
            want[0][r],
            &reference,
            &ids,
        );
    }
    for dtype in [DType::I32, DType::U32, DType::U64] {
        let got = draws(x.clone(), seeds_as(dtype));
        assert_eq!(got, want, "seed {seed}: seeds as {dtype:?}");
    }
    let half = Tensor::<2>::from_data(
        TensorData::new(data.clone(), [rows, vocab]),
        (&device, DType::F16),
    );
    assert_eq!(half.dtype(), DType::F16);
    assert_eq!(
        draws(half, seeds_as(DType::I64)),
        want,
        "seed {seed}: f16 logits"
    );
    // The last of three positions of each row, as a view.
    let mut wide = vec![0.0f32; rows * 3 * vocab];
    for r in 0..rows {
        for p in 0..3 {
            for j in 0..vocab {
                wide[(r * 3 + p) * vocab + j] = if p == 2 {
                    data[r * vocab + j]
                } else {
                    rng.random_range(-8.0f32..8.0)
                };
            }
        }
    }
    let wide = Tensor::<3>::from_data(TensorData::new(wide, [rows, 3, vocab]), &device);
    let last = wide.narrow(1, 2, 1).reshape([rows, vocab]);
    assert_eq!(
        draws(last, seeds_as(DType::I64)),
        want,
        "seed {seed}: last-position view"
    );
}

/// `top_p_renorm_probs` over 65,535 equal probabilities of 2^-16 (every partial sum exact):
/// each becomes 1/65,535 (Burn 0.22's `sum_dim` drops a row's last element at that length on
/// lavapipe, which would make it 1/65,534).
#[test]
fn top_p_renorm_sums_every_token_of_a_long_row() {
    let _device = serial();
    let device = Device::default();
    let vocab = 65_535usize;
    let probs = Tensor::<2>::full([1, vocab], 1.0 / 65536.0, &device);
    let got = f32s(top_p_renorm_probs(probs, 1.0));
    let want = 1.0f64 / vocab as f64;
    let worst = got
        .iter()
        .map(|&g| (g as f64 - want).abs() / want)
        .fold(0.0, f64::max);
    assert!(worst < 1e-6, "relative error {worst} against 1/{vocab}");
}
