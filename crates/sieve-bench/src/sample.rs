//! Sampling rows (`top_k_top_p_sample` of `[batch, vocab]` logits, f32 or bf16; params `k=`
//! (50), `p=` (0.9), `t=` (0.8)): sieve's Burn op, per-row seeds. Every draw is checked
//! before timing: a valid id inside the row's top-k whose preceding renormalised probability
//! is below `p` (with a little slack for f32 sums against this check's f64). Beside it, rows
//! `stage=row_max`: each row's maximum and its position through stock Burn's `max_dim` and
//! `argmax`, and through sieve's top-1. Stock Burn has
//! no sampling op; torch's reference (sort, softmax, cumsum, mask, multinomial) is in
//! `bench/torch_reference.py`.

use burn::tensor::{DType, Int, Tensor, TensorData};
use rand::{Rng, SeedableRng, rngs::StdRng};

use crate::case::Case;
use crate::report::Row;
use crate::timing::Bench;

pub fn run(case: &Case, bench: &Bench<'_>) -> Vec<Row> {
    let [batch, vocab] = case.shape[..] else {
        panic!("top_k_top_p_sample bench: shape must be [batch, vocab]");
    };
    let (k, p, t) = (
        case.param_or("k", 50usize),
        case.param_or("p", 0.9f64),
        case.param_or("t", 0.8f64),
    );
    let dtype = match case.dtype.as_str() {
        "f32" => DType::F32,
        "bf16" => DType::BF16,
        "f16" => DType::F16,
        other => panic!("top_k_top_p_sample bench: dtype {other} (f32, f16, bf16)"),
    };
    let mut rng = StdRng::seed_from_u64(0x5a3e);
    let data: Vec<f32> = (0..batch * vocab)
        .map(|_| rng.random_range(-4.0f32..4.0))
        .collect();
    // The logits as the dtype holds them, for the check.
    let logits =
        Tensor::<2>::from_data(TensorData::new(data, [batch, vocab]), bench.device).cast(dtype);
    let held: Vec<f32> = logits
        .clone()
        .cast(DType::F32)
        .into_data()
        .iter::<f32>()
        .collect();
    let seeds = Tensor::<1, Int>::from_data(
        TensorData::new((0..batch as i64).collect::<Vec<_>>(), [batch]),
        bench.device,
    );
    let index_bytes = seeds.dtype().size() as u64;
    let floor = (batch * vocab) as u64 * dtype.size() as u64 + batch as u64 * index_bytes;
    let row = bench.row(case, "sieve", floor, &[]);
    let draw = || {
        sieve_burn::sampling::top_k_top_p_sample(
            logits.clone(),
            k,
            p as f32,
            t as f32,
            seeds.clone(),
        )
    };
    let tokens: Vec<i64> = draw().into_data().iter::<i64>().collect();
    let wrong = check(&held, vocab, k, p, t, &tokens);
    let mut rows = vec![row.checked(wrong, || bench.time_sieve_burn(case, || drop(draw())))];
    if dtype == DType::F32 {
        rows.push(raw(case, bench, &held, [batch, vocab], (k, p, t), floor));
    }
    // Where a long row's reduction goes: the row maximum through stock Burn's `max_dim` and
    // `argmax`, and through sieve's top-1 (what the draws use), each checked against the
    // host's maximum first.
    let x = logits.clone().cast(DType::F32);
    let want: Vec<f32> = held
        .chunks(vocab)
        .map(|r| r.iter().copied().fold(f32::NEG_INFINITY, f32::max))
        .collect();
    let reduce_floor = (batch * vocab) as u64 * 4;
    let stage =
        |name: &str, max: &dyn Fn() -> (Tensor<2>, Tensor<2, Int>), implementation: &str| {
            let row = bench.row(case, implementation, reduce_floor, &[("stage", name)]);
            let (values, ids) = max();
            let got: Vec<f32> = values.into_data().iter::<f32>().collect();
            let at: Vec<i64> = ids.into_data().iter::<i64>().collect();
            let wrong = (0..batch).find_map(|r| {
                let by_id = held[r * vocab + at[r] as usize];
                (got[r] != want[r] || by_id != want[r])
                    .then(|| format!("row {r}: max {} at {}, expected {}", got[r], at[r], want[r]))
            });
            row.checked(wrong, || bench.time_burn(|| drop(max())))
        };
    rows.push(stage(
        "row_max",
        &|| (x.clone().max_dim(1), x.clone().argmax(1)),
        "burn",
    ));
    rows.push(stage(
        "row_max",
        &|| sieve_burn::topk_with_indices(x.clone(), 1, 1),
        "sieve",
    ));
    rows
}

/// The raw call under the Burn op (`sieve::sample::top_k_top_p` on f32 buffers, the same
/// parameters for every row), checked as the op is: the op's own cost is the difference.
fn raw(
    case: &Case,
    bench: &Bench<'_>,
    held: &[f32],
    [batch, vocab]: [usize; 2],
    (k, p, t): (usize, f64, f64),
    floor: u64,
) -> Row {
    use sieve::Dtype;
    use sieve::sample::{DrawParams, DrawRows, SampleIo, top_k_top_p};
    let upload = |bytes: &[u8]| bench.client.create_from_slice(bytes);
    let logits = upload(bytemuck::cast_slice(held));
    let seeds = upload(bytemuck::cast_slice(&(0..batch as i32).collect::<Vec<_>>()));
    let tokens = bench.client.empty(4 * batch);
    let call = || {
        let io = SampleIo {
            logits: &logits,
            rows: DrawRows {
                seeds: &seeds,
                seed_dtype: Dtype::I32,
                params: DrawParams::Same {
                    top_k: k as i64,
                    top_p: p as f32,
                    temperature: t as f32,
                },
                tokens: &tokens,
                token_dtype: Dtype::I32,
            },
        };
        top_k_top_p(bench.client, io, batch, vocab, k).expect("a valid draw");
    };
    call();
    let bytes = bench.client.read_one(tokens.clone()).expect("tokens");
    let got: Vec<i64> = bytemuck::cast_slice::<u8, i32>(&bytes)[..batch]
        .iter()
        .map(|&v| v as i64)
        .collect();
    let row = bench.row(case, "sieve", floor, &[("stage", "raw")]);
    row.checked(check(held, vocab, k, p, t, &got), || bench.time_raw(call))
}

/// Why a draw is outside its row's filtered set, if one is.
fn check(logits: &[f32], vocab: usize, k: usize, p: f64, t: f64, tokens: &[i64]) -> Option<String> {
    for (r, &token) in tokens.iter().enumerate() {
        let row = &logits[r * vocab..(r + 1) * vocab];
        if token < 0 || token as usize >= vocab {
            return Some(format!("row {r}: token {token} outside 0..{vocab}"));
        }
        let mut order: Vec<usize> = (0..vocab).collect();
        order.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
        let width = if k == 0 || k >= vocab { vocab } else { k };
        let Some(slot) = order[..width].iter().position(|&i| i == token as usize) else {
            return Some(format!(
                "row {r}: token {token} is not in the row's top-{width}"
            ));
        };
        let max = row[order[0]] as f64 / t;
        let w: Vec<f64> = order[..width]
            .iter()
            .map(|&i| (row[i] as f64 / t - max).exp())
            .collect();
        let total: f64 = w.iter().sum();
        let before: f64 = w[..slot].iter().sum::<f64>() / total;
        if slot > 0 && before >= p + 1e-3 {
            return Some(format!(
                "row {r}: token {token} (slot {slot}) lies past the top-p set: {before:.6} >= {p}"
            ));
        }
    }
    None
}
