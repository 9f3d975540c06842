//! [`super::SampleOps`] on the CubeCL backend.

use burn::backend::DType;
use burn::tensor::{IntDType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};

use super::SampleOps;
use crate::cube::*;

impl SampleOps for CubeBackend {
    fn sieve_uniform_rows(seeds: CubeTensor, len: usize) -> CubeTensor {
        let op = "uniform_rows";
        let seeds = into_contiguous(seeds);
        let rows = seeds.meta.shape()[0];
        let out = empty_of(&seeds, Shape::new([rows, len]), DType::F32);
        sieve::random::uniform_rows(
            &seeds.client,
            &seeds.handle,
            sieve_dtype(op, seeds.dtype),
            rows,
            len,
            &out.handle,
        )
        .unwrap_or_else(|e| panic!("{op}: {e}"));
        out
    }

    fn sieve_uniform_at(seeds: CubeTensor, columns: CubeTensor) -> CubeTensor {
        let op = "uniform_at";
        let seeds = into_contiguous(seeds);
        let columns = into_contiguous(columns);
        let rows = seeds.meta.shape()[0];
        let width = columns.meta.shape()[1];
        let out = empty_of(&columns, columns.meta.shape().clone(), DType::F32);
        sieve::random::uniform_at(
            &seeds.client,
            &seeds.handle,
            sieve_dtype(op, seeds.dtype),
            rows,
            &columns.handle,
            sieve_dtype(op, columns.dtype),
            width,
            &out.handle,
        )
        .unwrap_or_else(|e| panic!("{op}: {e}"));
        out
    }

    fn sieve_sample(
        logits: CubeTensor,
        seeds: CubeTensor,
        top_k: CubeTensor,
        top_p: CubeTensor,
        temperature: CubeTensor,
        cut: usize,
        index_dtype: IntDType,
    ) -> CubeTensor {
        let [top_k, top_p, temperature] = [top_k, top_p, temperature].map(into_contiguous);
        let params = sieve::sample::DrawParams::Each {
            top_k: &top_k.handle,
            k_dtype: sieve_dtype("top_k_top_p_sample", top_k.dtype),
            top_p: &top_p.handle,
            temperature: &temperature.handle,
        };
        sample(logits, seeds, params, cut, index_dtype)
    }

    fn sieve_sample_same(
        logits: CubeTensor,
        seeds: CubeTensor,
        top_k: usize,
        top_p: f32,
        temperature: f32,
        index_dtype: IntDType,
    ) -> CubeTensor {
        let params = sieve::sample::DrawParams::Same {
            top_k: crate::sampling::k_param(top_k),
            top_p,
            temperature,
        };
        sample(logits, seeds, params, top_k, index_dtype)
    }
}

/// `sieve::sample::top_k_top_p` of `[rows, vocab]` f32 logits: `[rows]` tokens of
/// `index_dtype`.
fn sample(
    logits: CubeTensor,
    seeds: CubeTensor,
    params: sieve::sample::DrawParams<'_>,
    cut: usize,
    index_dtype: IntDType,
) -> CubeTensor {
    let op = "top_k_top_p_sample";
    let [logits, seeds] = [logits, seeds].map(into_contiguous);
    let [rows, vocab] = [logits.meta.shape()[0], logits.meta.shape()[1]];
    let tokens = empty_of(&logits, Shape::new([rows]), index_dtype.into());
    sieve::sample::top_k_top_p(
        &logits.client,
        sieve::sample::SampleIo {
            logits: &logits.handle,
            rows: sieve::sample::DrawRows {
                seeds: &seeds.handle,
                seed_dtype: sieve_dtype(op, seeds.dtype),
                params,
                tokens: &tokens.handle,
                token_dtype: sieve_dtype(op, tokens.dtype),
            },
        },
        rows,
        vocab,
        cut,
    )
    .unwrap_or_else(|e| panic!("{op}: {e}"));
    tokens
}
