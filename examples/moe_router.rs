//! A mixture-of-experts router in a Burn module (`cargo run --release --example moe_router`).
//!
//! Each of 16k tokens is routed to its top-2 of 64 experts: a linear gate gives `[tokens, 64]`
//! logits, `sieve_burn::topk_with_indices` picks the two largest per token (ties to the lower
//! expert id: deterministic), and a softmax over the two chosen logits gives their mixing
//! weights. Checked against a CPU top-2 of the same logits.

use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Device, Distribution, Int, Tensor, activation::softmax};

/// The gate of a mixture-of-experts layer.
#[derive(Module, Debug)]
struct Router {
    gate: Linear,
    top: usize,
}

impl Router {
    fn new(hidden: usize, experts: usize, top: usize, device: &Device) -> Self {
        Router {
            gate: LinearConfig::new(hidden, experts).init(device),
            top,
        }
    }

    fn logits(&self, tokens: Tensor<2>) -> Tensor<2> {
        self.gate.forward(tokens)
    }

    /// Each token's experts `[tokens, top]` (best first) and their weights (a softmax over the
    /// chosen logits, summing to 1 per token).
    fn route(&self, tokens: Tensor<2>) -> (Tensor<2, Int>, Tensor<2>) {
        let (chosen, experts) = sieve_burn::topk_with_indices(self.logits(tokens), self.top, 1);
        (experts, softmax(chosen, 1))
    }
}

fn main() {
    let device = Device::default();
    let (tokens, hidden, experts, top) = (16_384, 128, 64, 2);
    let router = Router::new(hidden, experts, top, &device);
    let batch = Tensor::<2>::random([tokens, hidden], Distribution::Normal(0.0, 1.0), &device);

    let (chosen, weights) = router.route(batch.clone());
    let chosen: Vec<i64> = chosen.into_data().iter::<i64>().collect();
    let weights: Vec<f32> = weights.into_data().iter::<f32>().collect();

    // CPU check on the device's own logits.
    let logits: Vec<f32> = router.logits(batch).into_data().iter::<f32>().collect();
    let mut mismatches = 0;
    let mut load = vec![0usize; experts];
    for t in 0..tokens {
        let row = &logits[t * experts..(t + 1) * experts];
        let mut order: Vec<usize> = (0..experts).collect();
        order.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
        let want: Vec<i64> = order[..top].iter().map(|&e| e as i64).collect();
        let max = row[order[0]];
        let exp: Vec<f64> = order[..top]
            .iter()
            .map(|&e| ((row[e] - max) as f64).exp())
            .collect();
        let total: f64 = exp.iter().sum();
        let got = &chosen[t * top..(t + 1) * top];
        let weights_ok =
            (0..top).all(|j| (weights[t * top + j] as f64 - exp[j] / total).abs() < 1e-5);
        if got != want.as_slice() || !weights_ok {
            mismatches += 1;
        }
        for &e in got {
            load[e as usize] += 1;
        }
    }
    println!("MoE router: top-{top} of {experts} experts for {tokens} tokens");
    println!(
        "  token 0: experts {:?} weights {:?}",
        &chosen[..top],
        &weights[..top]
    );
    println!(
        "  busiest expert takes {} routes, idlest {}",
        load.iter().max().unwrap(),
        load.iter().min().unwrap()
    );
    if mismatches > 0 {
        eprintln!("{mismatches} tokens differ from the CPU top-{top}");
        std::process::exit(1);
    }
    println!("all {tokens} tokens match the CPU top-{top} and softmax");
}
