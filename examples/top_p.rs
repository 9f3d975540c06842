//! Top-p (nucleus) sampling from a language-model head, in a Burn module
//! (`cargo run --release --example top_p`).
//!
//! For every row of a `[batch, vocab]` batch of logits: softmax; sort the probabilities
//! descending with their token ids (`sieve_burn::sort_descending_with_indices`, stable: equal
//! probabilities keep token order, so the result is deterministic); running sums
//! (`sieve_burn::cumsum`); keep the smallest prefix whose mass reaches `p`; sample from it by
//! inverse CDF with a given uniform number; map the sampled position back to its token id.
//! Everything stays on the device; the result is checked against a CPU nucleus.

use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Device, Distribution, Int, Tensor, activation::softmax};

/// A language-model head: hidden states to logits over the vocabulary.
#[derive(Module, Debug)]
struct LmHead {
    projection: Linear,
}

impl LmHead {
    fn new(hidden: usize, vocab: usize, device: &Device) -> Self {
        LmHead {
            projection: LinearConfig::new(hidden, vocab).init(device),
        }
    }

    fn probabilities(&self, hidden: Tensor<2>) -> Tensor<2> {
        softmax(self.projection.forward(hidden), 1)
    }

    /// One token per row from the nucleus of mass `p`, chosen by `uniforms` (`[batch, 1]`,
    /// in [0, 1)). Returns the tokens `[batch]` and each row's nucleus size `[batch]`.
    fn sample_top_p(
        &self,
        hidden: Tensor<2>,
        p: f32,
        uniforms: Tensor<2>,
    ) -> (Tensor<1, Int>, Tensor<1, Int>) {
        let probs = self.probabilities(hidden);
        let [batch, vocab] = probs.dims();
        let (sorted, tokens) = sieve_burn::sort_descending_with_indices(probs, 1);
        let running = sieve_burn::cumsum(sorted.clone(), 1);
        // A token is in the nucleus when the mass before it is still under p (so the first
        // token always is, and the nucleus is the smallest prefix reaching p).
        let before = running - sorted.clone();
        let in_nucleus = before.lower_elem(p);
        let nucleus_size = in_nucleus.clone().int().sum_dim(1).reshape([batch]);
        let kept = sorted.mask_fill(in_nucleus.bool_not(), 0.0);
        let cdf = sieve_burn::cumsum(kept.clone(), 1);
        let target = uniforms * kept.sum_dim(1);
        // Inverse CDF: the first position whose running mass exceeds the target.
        let position = cdf
            .lower_equal(target.expand([batch, vocab]))
            .int()
            .sum_dim(1)
            .clamp_max(vocab as i64 - 1);
        let position = position
            .clone()
            .min_pair(nucleus_size.clone().reshape([batch, 1]) - 1);
        (tokens.gather(1, position).reshape([batch]), nucleus_size)
    }
}

fn main() {
    let device = Device::default();
    let (batch, hidden, vocab, p) = (8, 64, 32_000, 0.9f32);
    let head = LmHead::new(hidden, vocab, &device);
    let states = Tensor::<2>::random([batch, hidden], Distribution::Normal(0.0, 6.0), &device);
    let uniforms = Tensor::<2>::random([batch, 1], Distribution::Uniform(0.0, 1.0), &device);

    let (tokens, sizes) = head.sample_top_p(states.clone(), p, uniforms.clone());
    let tokens: Vec<i64> = tokens.into_data().iter::<i64>().collect();
    let sizes: Vec<i64> = sizes.into_data().iter::<i64>().collect();

    // CPU check: the nucleus from the same probabilities, in f64, with a little slack for the
    // order the device sums in; the sampled token must be in it.
    let probs: Vec<f32> = head
        .probabilities(states)
        .into_data()
        .iter::<f32>()
        .collect();
    let mut ok = true;
    println!("top-p sampling, p = {p}, vocab {vocab}:");
    for b in 0..batch {
        let row = &probs[b * vocab..(b + 1) * vocab];
        let mut order: Vec<usize> = (0..vocab).collect();
        order.sort_by(|&x, &y| row[y].partial_cmp(&row[x]).unwrap());
        let nucleus = |mass: f64| {
            let mut before = 0.0f64;
            order
                .iter()
                .take_while(|&&t| {
                    let inside = before < mass;
                    before += row[t] as f64;
                    inside
                })
                .count()
        };
        let (small, large) = (nucleus(p as f64 - 1e-4), nucleus(p as f64 + 1e-4));
        let rank = order.iter().position(|&t| t as i64 == tokens[b]).unwrap();
        let row_ok = (small..=large).contains(&(sizes[b] as usize)) && rank < large;
        ok &= row_ok;
        println!(
            "  row {b}: nucleus of {} tokens (CPU {small}..={large}); sampled token {} (rank {rank}) {}",
            sizes[b],
            tokens[b],
            if row_ok { "ok" } else { "MISMATCH" }
        );
    }
    if !ok {
        eprintln!("top-p sampling differs from the CPU nucleus");
        std::process::exit(1);
    }
    println!("all rows match the CPU nucleus");
}
