//! k-nearest-neighbour retrieval in a Burn module (`cargo run --release --example knn`).
//!
//! A batch of queries is scored against 1M stored embeddings by one matmul (inner products,
//! `[queries, 1M]`), and `sieve_burn::topk_with_indices` picks each query's 10 best on the
//! device: the first 10 of a stable descending sort, so equal scores go to the lower id and
//! the result is deterministic. Checked against a CPU top-10 of the same scores.

use burn::module::{Module, Param};
use burn::tensor::{Device, Distribution, Int, Tensor};

/// Stored embeddings `[count, dim]`, searched by inner product.
#[derive(Module, Debug)]
struct Retriever {
    embeddings: Param<Tensor<2>>,
}

impl Retriever {
    fn new(count: usize, dim: usize, device: &Device) -> Self {
        let embeddings = Tensor::<2>::random([count, dim], Distribution::Normal(0.0, 1.0), device);
        Retriever {
            embeddings: Param::from_tensor(embeddings),
        }
    }

    /// Inner products of every query with every embedding, `[queries, count]`.
    fn scores(&self, queries: Tensor<2>) -> Tensor<2> {
        queries.matmul(self.embeddings.val().transpose())
    }

    /// The `k` best embeddings of every query: their scores and ids, `[queries, k]`, best
    /// first.
    fn nearest(&self, queries: Tensor<2>, k: usize) -> (Tensor<2>, Tensor<2, Int>) {
        sieve_burn::topk_with_indices(self.scores(queries), k, 1)
    }
}

fn main() {
    let device = Device::default();
    let (count, dim, queries, k) = (1 << 20, 32, 16, 10);
    let retriever = Retriever::new(count, dim, &device);
    let batch = Tensor::<2>::random([queries, dim], Distribution::Normal(0.0, 1.0), &device);

    let (best, ids) = retriever.nearest(batch.clone(), k);
    let best: Vec<f32> = best.into_data().iter::<f32>().collect();
    let ids: Vec<i64> = ids.into_data().iter::<i64>().collect();

    // CPU check on the device's own scores: a stable descending sort of each row, first k.
    let scores: Vec<f32> = retriever.scores(batch).into_data().iter::<f32>().collect();
    let mut ok = true;
    println!("k-NN: top-{k} of {count} embeddings (dim {dim}) for {queries} queries");
    for q in 0..queries {
        let row = &scores[q * count..(q + 1) * count];
        let mut order: Vec<usize> = (0..count).collect();
        order.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
        let want: Vec<i64> = order[..k].iter().map(|&i| i as i64).collect();
        let got = &ids[q * k..(q + 1) * k];
        let row_ok = got == want.as_slice()
            && (0..k).all(|j| best[q * k + j].to_bits() == row[want[j] as usize].to_bits());
        ok &= row_ok;
        if q < 4 || !row_ok {
            println!(
                "  query {q}: ids {:?} best score {:.3} {}",
                &got[..4],
                best[q * k],
                if row_ok { "ok" } else { "MISMATCH" }
            );
        }
    }
    if !ok {
        eprintln!("k-NN retrieval differs from the CPU top-{k}");
        std::process::exit(1);
    }
    println!("all {queries} queries match the CPU top-{k}");
}
