//! Token generation with a small decoder-only transformer and `sieve_burn::sampling` inside
//! the loop (`cargo run --release --example generate`).
//!
//! The model (random weights, made here: nothing is downloaded) embeds a batch of prompts,
//! runs causal self-attention blocks, projects the last position to vocabulary logits, and
//! draws the next token of every row with `top_k_top_p_sample` (top-k 50, top-p 0.9,
//! temperature 0.8, one seed stream per row). The step is device work only: the sampler has
//! no host read (its docs; it is a composite of sieve's sort/top-k/cumsum and a random
//! kernel), the new tokens are appended on the device, and the only read per step is the
//! `[batch]` tokens the example prints. The run is then repeated with the same seeds and must
//! give the same tokens, and every token must be a valid id.

use std::time::Instant;

use burn::module::Module;
use burn::nn::attention::generate_autoregressive_mask;
use burn::nn::transformer::{
    TransformerEncoder, TransformerEncoderConfig, TransformerEncoderInput,
};
use burn::nn::{Embedding, EmbeddingConfig, Linear, LinearConfig};
use burn::tensor::{Device, Int, Tensor, TensorData};

/// A decoder-only language model: token and position embeddings, causal blocks, a head.
#[derive(Module, Debug)]
struct TinyLm {
    tokens: Embedding,
    positions: Embedding,
    blocks: TransformerEncoder,
    head: Linear,
}

impl TinyLm {
    fn new(vocab: usize, context: usize, d_model: usize, device: &Device) -> Self {
        TinyLm {
            tokens: EmbeddingConfig::new(vocab, d_model).init(device),
            positions: EmbeddingConfig::new(context, d_model).init(device),
            blocks: TransformerEncoderConfig::new(d_model, 4 * d_model, 4, 2).init(device),
            head: LinearConfig::new(d_model, vocab).init(device),
        }
    }

    /// Logits of the next token after `tokens` (`[batch, len]`): `[batch, vocab]`.
    fn next_logits(&self, tokens: Tensor<2, Int>) -> Tensor<2> {
        let [batch, len] = tokens.dims();
        let device = tokens.device();
        let at = Tensor::<1, Int>::arange(0..len as i64, &device)
            .reshape([1, len])
            .expand([batch, len]);
        let x = self.tokens.forward(tokens) + self.positions.forward(at);
        let mask = generate_autoregressive_mask(batch, len, &device);
        let hidden = self
            .blocks
            .forward(TransformerEncoderInput::new(x).mask_attn(mask));
        let [_, _, d_model] = hidden.dims();
        let last = hidden.narrow(1, len - 1, 1).reshape([batch, d_model]);
        self.head.forward(last)
    }
}

/// Generates `steps` tokens after `prompt` for every row; prints each step's tokens when
/// `print` (the one host read a step). Returns every row's generated tokens.
fn generate(
    model: &TinyLm,
    prompt: Tensor<2, Int>,
    seeds: Tensor<1, Int>,
    steps: usize,
    print: bool,
) -> Vec<Vec<i64>> {
    let [batch, _] = prompt.dims();
    let mut tokens = prompt;
    let mut out = vec![Vec::new(); batch];
    for step in 0..steps {
        let logits = model.next_logits(tokens.clone());
        // A new draw each step: the row's seed stream advanced by the step.
        let step_seeds = seeds.clone().mul_scalar(1_000_003).add_scalar(step as i64);
        let next = sieve_burn::sampling::top_k_top_p_sample(logits, 50, 0.9, 0.8, step_seeds);
        tokens = Tensor::cat(vec![tokens, next.clone().reshape([batch, 1])], 1);
        let read: Vec<i64> = next.into_data().iter::<i64>().collect();
        if print && step < 8 {
            println!("step {step:>2}: {read:?}");
        }
        for (row, token) in out.iter_mut().zip(read) {
            row.push(token);
        }
    }
    out
}

fn main() {
    let device = Device::default();
    let (vocab, d_model, batch, prompt_len, steps) = (32_000, 128, 8, 4, 32);
    let model = TinyLm::new(vocab, prompt_len + steps, d_model, &device);
    let prompt: Vec<i64> = (0..batch * prompt_len)
        .map(|i| (i * 7919 % vocab) as i64)
        .collect();
    let prompt = Tensor::<2, Int>::from_data(TensorData::new(prompt, [batch, prompt_len]), &device);
    let seeds = Tensor::<1, Int>::from_data(
        TensorData::new((0..batch as i64).collect::<Vec<_>>(), [batch]),
        &device,
    );
    println!(
        "generate: {batch} rows, vocab {vocab}, {steps} steps, top-k 50, top-p 0.9, T 0.8 on {device:?}"
    );
    // Warm-up (kernel compilation), then the timed run.
    generate(&model, prompt.clone(), seeds.clone(), 2, false);
    let start = Instant::now();
    let first = generate(&model, prompt.clone(), seeds.clone(), steps, true);
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{} tokens in {seconds:.3} s: {:.1} tokens/s (the whole step: model, sampler, one read)",
        batch * steps,
        (batch * steps) as f64 / seconds
    );
    assert!(
        first
            .iter()
            .flatten()
            .all(|&t| (0..vocab as i64).contains(&t)),
        "a generated token is not a vocabulary id"
    );
    let again = generate(&model, prompt, seeds, steps, false);
    assert_eq!(first, again, "the same seeds must give the same tokens");
    println!("ok: every token is a vocabulary id, and the same seeds gave the same tokens");
}
