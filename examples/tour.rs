//! The sieve tour (`cargo run --release`): the exercises this project grew from, each run on
//! the device through the library, checked against a CPU reference, and printed.
//!
//! 1. Scan: the running count of a 0/1 flag array, and its total.
//! 2. Compaction: the survivors of a predicate, each output slot finding its source by
//!    binary search over the running count, and how many survived.
//! 3. Split: keys split by their low bit, evens first, both halves in input order.
//!
//! (The top-k exercises join when that primitive lands.)

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
