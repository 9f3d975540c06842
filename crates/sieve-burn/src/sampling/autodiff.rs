//! [`super::SampleOps`] on the Autodiff backend: draws are not differentiable.

use burn::backend::Backend;
use burn::backend::autodiff::{Autodiff, checkpoint::strategy::CheckpointStrategy};
use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::tensor::IntDType;

use super::SampleOps;
use crate::SieveOps;

impl<B: Backend + SieveOps, C: CheckpointStrategy> SampleOps for Autodiff<B, C> {
    fn sieve_uniform_rows(seeds: IntTensor<Self>, len: usize) -> FloatTensor<Self> {
        <Self as burn::backend::AutodiffBackend>::from_inner(B::sieve_uniform_rows(seeds, len))
    }

    fn sieve_uniform_at(seeds: IntTensor<Self>, columns: IntTensor<Self>) -> FloatTensor<Self> {
        <Self as burn::backend::AutodiffBackend>::from_inner(B::sieve_uniform_at(seeds, columns))
    }

    fn sieve_sample(
        logits: FloatTensor<Self>,
        seeds: IntTensor<Self>,
        top_k: IntTensor<Self>,
        top_p: FloatTensor<Self>,
        temperature: FloatTensor<Self>,
        cut: usize,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        // Tokens carry no gradient.
        B::sieve_sample(
            logits.into_primitive(),
            seeds,
            top_k,
            top_p.into_primitive(),
            temperature.into_primitive(),
            cut,
            index_dtype,
        )
    }

    fn sieve_sample_same(
        logits: FloatTensor<Self>,
        seeds: IntTensor<Self>,
        top_k: usize,
        top_p: f32,
        temperature: f32,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        // Tokens carry no gradient.
        B::sieve_sample_same(
            logits.into_primitive(),
            seeds,
            top_k,
            top_p,
            temperature,
            index_dtype,
        )
    }
}
