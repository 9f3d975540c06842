//! Filtering detections in a Burn model (`cargo run --release --example detections`).
//!
//! A detection head scores `N` candidate boxes for every image of a batch. The boxes that
//! score above a threshold are kept, per image, with `sieve_burn::compact_rows`: each row's
//! survivors first, in order, then zeros, and a count per row. Compacting the candidates'
//! ids the same way gives the indices that gather their boxes. Nothing here waits for the
//! device: shapes never depend on the data, so the whole step stays in the graph (and in
//! Fusion's queue) until the caller reads the results. The result is checked against the CPU.

use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Device, Distribution, Int, Tensor, activation::sigmoid};

/// Scores each candidate from its features and keeps those above `threshold`.
#[derive(Module, Debug)]
struct DetectionHead {
    scorer: Linear,
}

/// Per image: kept scores `[batch, n]` and boxes `[batch, n, 4]`, survivors first then
/// zeros; `counts[b]` boxes were kept for image `b`.
struct Detections {
    scores: Tensor<2>,
    boxes: Tensor<3>,
    counts: Tensor<1, Int>,
}

impl DetectionHead {
    fn new(features: usize, device: &Device) -> Self {
        DetectionHead {
            scorer: LinearConfig::new(features, 1).init(device),
        }
    }

    /// Scores of every candidate, `[batch, n]`, in (0, 1).
    fn scores(&self, features: Tensor<3>) -> Tensor<2> {
        sigmoid(self.scorer.forward(features)).squeeze_dim(2)
    }

    /// `features`: `[batch, n, f]`; `boxes`: `[batch, n, 4]`.
    fn forward(&self, features: Tensor<3>, boxes: Tensor<3>, threshold: f32) -> Detections {
        let scores = self.scores(features);
        let [batch, n] = scores.dims();
        let keep = scores.clone().greater_elem(threshold);

        let (scores, counts) = sieve_burn::compact_rows(scores, keep.clone());
        // The same compaction of each row's candidate ids gives the kept boxes' indices.
        let ids = Tensor::<1, Int>::arange(0..n as i64, &boxes.device())
            .unsqueeze_dim::<2>(0)
            .repeat_dim(0, batch);
        let (kept_ids, _) = sieve_burn::compact_rows(ids, keep);
        let gathered = boxes.gather(1, kept_ids.unsqueeze_dim::<3>(2).repeat_dim(2, 4));
        // Padding slots gathered candidate 0: zero them, as compact_rows zeroes its padding.
        let slots = Tensor::<1, Int>::arange(0..n as i64, &gathered.device()).unsqueeze_dim::<2>(0);
        let padding = slots.greater_equal(counts.clone().unsqueeze_dim::<2>(1));
        let boxes = gathered.mask_fill(padding.unsqueeze_dim::<3>(2).repeat_dim(2, 4), 0.0);
        Detections {
            scores,
            boxes,
            counts,
        }
    }
}

fn main() {
    let device = Device::default();
    let (batch, candidates, feature_dim, threshold) = (8, 2000, 16, 0.7f32);
    let head = DetectionHead::new(feature_dim, &device);
    let features = Tensor::<3>::random(
        [batch, candidates, feature_dim],
        Distribution::Normal(0.0, 1.0),
        &device,
    );
    let boxes = Tensor::<3>::random(
        [batch, candidates, 4],
        Distribution::Uniform(0.0, 512.0),
        &device,
    );

    let detections = head.forward(features.clone(), boxes.clone(), threshold);

    // CPU check: filter the head's own scores on the host.
    let scores: Vec<f32> = head.scores(features).into_data().iter::<f32>().collect();
    let all_boxes: Vec<f32> = boxes.into_data().iter::<f32>().collect();
    let got_scores: Vec<f32> = detections.scores.into_data().iter::<f32>().collect();
    let got_boxes: Vec<f32> = detections.boxes.into_data().iter::<f32>().collect();
    let got_counts: Vec<i64> = detections.counts.into_data().iter::<i64>().collect();
    let mut ok = true;
    println!("kept boxes scoring above {threshold}, per image of {candidates} candidates:");
    for (b, &count) in got_counts.iter().enumerate() {
        let row = b * candidates;
        let kept: Vec<usize> = (0..candidates)
            .filter(|&i| scores[row + i] > threshold)
            .collect();
        let mut want_scores = vec![0.0f32; candidates];
        let mut want_boxes = vec![0.0f32; candidates * 4];
        for (slot, &i) in kept.iter().enumerate() {
            want_scores[slot] = scores[row + i];
            want_boxes[slot * 4..slot * 4 + 4]
                .copy_from_slice(&all_boxes[(row + i) * 4..(row + i) * 4 + 4]);
        }
        let image_ok = count as usize == kept.len()
            && got_scores[row..row + candidates] == want_scores[..]
            && got_boxes[row * 4..(row + candidates) * 4] == want_boxes[..];
        ok &= image_ok;
        let first = kept.len().min(1);
        println!(
            "  image {b}: {:>4} kept (CPU {:>4}); first box {:?} {}",
            count,
            kept.len(),
            &got_boxes[row * 4..row * 4 + 4 * first],
            if image_ok { "ok" } else { "MISMATCH" }
        );
    }
    if !ok {
        eprintln!("detections differ from the CPU reference");
        std::process::exit(1);
    }
    println!("all images match the CPU reference");
}
