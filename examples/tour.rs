//! The sieve tour (`cargo run --release`): the exercises this project grew from, each run on
//! the device through the library, checked against a CPU reference, and printed.
//!
//! 1. Scan: the running count of a 0/1 flag array, and its total.
//! 2. Compaction: the survivors of a predicate, each output slot finding its source by
//!    binary search over the running count, and how many survived.
//! 3. Split: keys split by their low bit, evens first, both halves in input order.
//! 4. Rank by counting: the ranks of 4096 scores with many repeats, a permutation of
//!    0..4095 (the largest score rank 0, ties to the lower index).
//! 5. Radix select: the cutoff that exactly 10 of 65,536 fine-grained scores clear, found
//!    one 8-bit digit at a time; how many clear it, and how many counting passes it took.

use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::{Rng, SeedableRng, rngs::StdRng};

fn main() {
    let Some(device) = device_or_advice() else {
        std::process::exit(2);
    };
    let client = sieve_burn::cube_client(&device).expect("a CubeCL device");
    let caps = sieve::DeviceCaps::of(&client);
    println!("sieve tour on {} ({})\n", caps.device_name, caps.runtime);

    let ok = running_count(&device);
    let ok = compaction(&client) && ok;
    let ok = one_bit_split(&device) && ok;
    let ok = ranks_by_counting(&client) && ok;
    let ok = cutoff_by_digits(&client) && ok;
    if ok {
        println!("\nall exercises match their CPU references");
    } else {
        println!("\nMISMATCH: see above");
        std::process::exit(1);
    }
}

/// Exercise 1: a running count of flags, the scan every compaction stands on: element i of
/// the inclusive count says how many flags up to i are set; the last one is the total.
fn running_count(device: &Device) -> bool {
    let n = 1_000_003; // odd, and past 65,535 (where stock Burn's cumsum broke on software Vulkan)
    let mut rng = StdRng::seed_from_u64(2026);
    let flags: Vec<i32> = (0..n).map(|_| i32::from(rng.random_bool(0.3))).collect();

    let tensor = Tensor::<1, Int>::from_data(TensorData::new(flags.clone(), [n]), device);
    let running = sieve_burn::cumsum(tensor, 0);
    let got: Vec<i64> = running.into_data().iter::<i64>().collect();

    let expected: Vec<i64> = flags
        .iter()
        .scan(0i64, |count, &f| {
            *count += f as i64;
            Some(*count)
        })
        .collect();
    let total = *got.last().unwrap();
    let ok = got == expected;

    println!("[1] scan: running count of {n} random 0/1 flags (30% set)");
    println!("    flags          {:?} ...", &flags[..12]);
    println!("    running count  {:?} ...", &got[..12]);
    println!(
        "    total          {total} (CPU: {}) {}",
        expected.last().unwrap(),
        verdict(ok)
    );
    ok
}

/// Exercise 2: compaction by "turning the scatter around": flag each value that clears the
/// predicate, scan the flags into a running count, then let every output slot `s` find its
/// source - the first element whose running count exceeds `s` - by binary search. Runs the
/// engine's `Gather` strategy on raw device buffers (the library layer below Burn).
fn compaction(client: &cubecl::prelude::Client) -> bool {
    use sieve::compact::{
        self, CompactIo, CompactOptions, CompactProblem, CompactStrategy, FlagRule, Flags, Rejected,
    };
    let n = 1_000_003;
    let threshold = 0.9f32;
    let mut rng = StdRng::seed_from_u64(2027);
    let values: Vec<f32> = (0..n).map(|_| rng.random::<f32>()).collect();

    let input = client.create_from_slice(bytemuck::cast_slice(&values));
    let survivors = client.empty(4 * n);
    let positions = client.empty(4 * n);
    let count = client.empty(4);
    compact::compact(
        client,
        Flags::Compare {
            rule: FlagRule::Greater,
            threshold: threshold as f64,
        },
        CompactIo {
            values: Some(&input),
            value_dtype: sieve::Dtype::F32,
            values_out: Some(&survivors),
            indices_out: Some(&positions),
            counts: &count,
            index_dtype: sieve::Dtype::U32,
        },
        CompactProblem { rows: 1, len: n },
        Rejected::Drop,
        CompactOptions {
            strategy: CompactStrategy::Gather,
            tuning: None,
            ..Default::default()
        },
    )
    .expect("compaction");
    let read = |h: cubecl::server::Handle| client.read_one(h).expect("device read");
    let count = bytemuck::cast_slice::<u8, u32>(&read(count))[0] as usize;
    let bytes = read(survivors);
    let got: &[f32] = &bytemuck::cast_slice::<u8, f32>(&bytes)[..count];
    let bytes = read(positions);
    let got_positions: &[u32] = &bytemuck::cast_slice::<u8, u32>(&bytes)[..count];

    let expected: Vec<(u32, f32)> = (0..n)
        .filter(|&i| values[i] > threshold)
        .map(|i| (i as u32, values[i]))
        .collect();
    let ok = count == expected.len()
        && got_positions
            .iter()
            .zip(got)
            .map(|(&p, &v)| (p, v))
            .eq(expected.iter().copied());

    println!("\n[2] compaction: the {n} random values in [0, 1) above {threshold}, gathered by");
    println!("    binary search over their running count");
    println!("    survivors      {:?} ...", &got[..4.min(count)]);
    println!(
        "    at positions   {:?} ...",
        &got_positions[..4.min(count)]
    );
    println!(
        "    survived       {count} of {n} (CPU: {}) {}",
        expected.len(),
        verdict(ok)
    );
    ok
}

/// Exercise 3: the one-bit split, the step of a radix sort: every key's destination is the
/// running count of its own kind (evens before it, or all evens plus odds before it).
fn one_bit_split(device: &Device) -> bool {
    let n = 100_003;
    let mut rng = StdRng::seed_from_u64(2028);
    let keys: Vec<i32> = (0..n).map(|_| rng.random_range(0..1000)).collect();

    let tensor = Tensor::<1, Int>::from_data(TensorData::new(keys.clone(), [n]), device);
    let (split, sources, evens) = sieve_burn::split_by_bit(tensor, 0, 0);
    let got: Vec<i64> = split.into_data().iter::<i64>().collect();
    let got_sources: Vec<i64> = sources.into_data().iter::<i64>().collect();
    let evens = evens.into_data().iter::<i64>().next().unwrap() as usize;

    let order: Vec<usize> = (0..n)
        .filter(|&i| keys[i] % 2 == 0)
        .chain((0..n).filter(|&i| keys[i] % 2 != 0))
        .collect();
    let expected: Vec<i64> = order.iter().map(|&i| keys[i] as i64).collect();
    let expected_sources: Vec<i64> = order.iter().map(|&i| i as i64).collect();
    let expected_evens = keys.iter().filter(|&&k| k % 2 == 0).count();
    let ok = got == expected && got_sources == expected_sources && evens == expected_evens;

    println!("\n[3] split: {n} random keys by their low bit, evens first, both halves in order");
    println!("    keys           {:?} ...", &keys[..10]);
    println!("    split          {:?} ...", &got[..10]);
    println!("    from positions {:?} ...", &got_sources[..10]);
    println!(
        "    evens          {evens} (CPU: {expected_evens}); first odd at {evens}: {} {}",
        got.get(evens).copied().unwrap_or_default(),
        verdict(ok)
    );
    ok
}

/// Top-k on raw device buffers: the chosen values and indices of one row, and the report.
fn topk_row(
    client: &cubecl::prelude::Client,
    scores: &[f32],
    k: usize,
    strategy: sieve::topk::TopkStrategy,
) -> (Vec<f32>, Vec<u32>, sieve::topk::TopkReport) {
    use sieve::topk::{self, TopkIo, TopkOptions, TopkProblem};
    let input = client.create_from_slice(bytemuck::cast_slice(scores));
    let values = client.empty(4 * k.max(1));
    let indices = client.empty(4 * k.max(1));
    let report = topk::topk(
        client,
        TopkIo {
            values: &input,
            value_dtype: sieve::Dtype::F32,
            values_out: Some(&values),
            indices_out: Some(&indices),
            index_dtype: sieve::Dtype::U32,
        },
        TopkProblem {
            rows: 1,
            len: scores.len(),
            k,
        },
        TopkOptions {
            strategy,
            ..TopkOptions::default()
        },
    )
    .expect("top-k");
    let read = |h: cubecl::server::Handle| client.read_one(h).expect("device read");
    let values = bytemuck::cast_slice::<u8, f32>(&read(values))[..k].to_vec();
    let indices = bytemuck::cast_slice::<u8, u32>(&read(indices))[..k].to_vec();
    (values, indices, report)
}

/// Exercise 4: rank by counting: every score counts the scores that outrank it (larger, or
/// equal at a lower index); that count is its rank, so the ranks of all 4096 form a
/// permutation even with heavy repeats. Top-k with k = n and `RankByCounting` writes each
/// score to the slot its rank names; the ranks are that order inverted.
fn ranks_by_counting(client: &cubecl::prelude::Client) -> bool {
    use sieve::topk::{TopkStrategy, TopkTuning};
    let n = 4096;
    let mut rng = StdRng::seed_from_u64(2029);
    let scores: Vec<f32> = (0..n).map(|_| rng.random_range(0..50) as f32).collect();
    let caps = sieve::DeviceCaps::of(client);
    let capacity = TopkTuning::for_device(&caps).rank_capacity(&caps);
    let strategy = if n <= capacity {
        TopkStrategy::RankByCounting
    } else {
        TopkStrategy::Auto
    };
    let (_, order, report) = topk_row(client, &scores, n, strategy);
    let mut ranks = vec![usize::MAX; n];
    for (rank, &i) in order.iter().enumerate() {
        ranks[i as usize] = rank;
    }
    let expected: Vec<usize> = (0..n)
        .map(|i| {
            (0..n)
                .filter(|&j| scores[j] > scores[i] || (scores[j] == scores[i] && j < i))
                .count()
        })
        .collect();
    let mut seen = vec![false; n];
    let permutation = ranks
        .iter()
        .all(|&r| r < n && !std::mem::replace(&mut seen[r], true));
    let ok = permutation && ranks == expected;
    println!("\n[4] rank by counting: {n} scores drawn from 50 values (heavy repeats)");
    if strategy != TopkStrategy::RankByCounting {
        println!(
            "    (a row of {n} exceeds this device's rank-by-counting capacity of {capacity}; \
             ranked by {:?} instead)",
            report.strategy
        );
    }
    println!("    scores         {:?} ...", &scores[..8]);
    println!("    ranks          {:?} ...", &ranks[..8]);
    println!(
        "    a permutation of 0..{}: {permutation}; strategy {:?} {}",
        n - 1,
        report.strategy,
        verdict(ok)
    );
    ok
}

/// Exercise 5: the cutoff by digits: find the score that exactly 10 clear one 8-bit digit of
/// its order-preserving bits at a time, most significant first (a histogram of the digit
/// among the scores that share the digits found so far, then the bin that holds the 10th),
/// so 4 counting passes always suffice; all are queued at once (the host never waits on the
/// device in between).
fn cutoff_by_digits(client: &cubecl::prelude::Client) -> bool {
    use sieve::topk::TopkStrategy;
    let (n, k) = (65_536, 10);
    let mut rng = StdRng::seed_from_u64(2030);
    let scores: Vec<f32> = (0..n).map(|_| rng.random::<f32>()).collect();
    let (values, indices, report) = topk_row(client, &scores, k, TopkStrategy::RadixSelect);
    let cutoff = values[k - 1];
    let clearing = scores.iter().filter(|&&s| s >= cutoff).count();
    let mut sorted = scores.clone();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let ok = cutoff == sorted[k - 1]
        && clearing == k
        && indices.iter().all(|&i| scores[i as usize] >= cutoff)
        && report.counting_passes == 4;
    println!("\n[5] radix select: the cutoff that exactly {k} of {n} scores in [0, 1) clear");
    println!(
        "    cutoff         {cutoff} (CPU: {}); {clearing} clear it",
        sorted[k - 1]
    );
    println!(
        "    counting passes queued {} {}",
        report.counting_passes,
        verdict(ok)
    );
    ok
}

fn verdict(ok: bool) -> &'static str {
    if ok { "ok" } else { "MISMATCH" }
}

/// The default device, or advice (and `None`) when no GPU adapter can be opened.
fn device_or_advice() -> Option<Device> {
    let device = Device::default();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let opened = std::panic::catch_unwind(|| sieve_burn::cube_client(&device).is_some());
    std::panic::set_hook(hook);
    match opened {
        Ok(true) => Some(device),
        _ => {
            eprintln!(
                "sieve: no GPU adapter could be opened.\n\
                 On a machine without a GPU, install a software Vulkan driver and run again:\n\
                 \n    sudo apt-get install mesa-vulkan-drivers\n"
            );
            None
        }
    }
}
